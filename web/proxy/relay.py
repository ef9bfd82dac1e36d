"""The HTTP relay: one browser request to the manifest's upstream, its answer streamed back.

Bodies stream both ways as they come; what changes is only what web/proxy/heads.py says of
the heads, and a page navigation's HTML, decoded (web/proxy/decoders.py) and given the panel's
script (web/proxy/injection.py). Kept-alive upstream connections come from the pool
(web/proxy/pool.py); an answer that cannot be had is the caller's ``error_page``, never a 500.
"""
from __future__ import annotations

import http.client
import socket
import weakref

import gevent

from actors.chatlog import daemon_log
from web.proxy.decoders import ERRORS as DECODE_ERRORS
from web.proxy.heads import clean, is_navigation, request_headers, response_plan
from web.proxy.injection import ScriptInjector
from web.proxy.pool import UpstreamPool
from web.proxy.upstream import CHUNK, CONNECT_TIMEOUT, RESPONSE_TIMEOUT, Upstream, request_target
from web.websocket import AbortResponse

# Once the browser has closed its side, an upstream body that brings nothing new for this long
# is let go of (a half-closed browser may still be reading, so not at once).
CLIENT_GONE_IDLE = 3.0
BODY_IDLE = 10.0  # seconds a request body may stop coming before the request is refused
# RFC 9110 §9.2.2: sent twice, these mean what they mean once; with no body to send again.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
POOL = UpstreamPool()


class BodyCut(Exception):
    """The browser's request body ended before its Content-Length: the client's fault, a 400."""


def _body(environ):
    stream = environ["wsgi.input"]
    remaining = _content_length(environ)  # None: chunked, read to its end
    while remaining is None or remaining > 0:
        try:
            with gevent.Timeout(BODY_IDLE):
                data = stream.read(CHUNK if remaining is None else min(CHUNK, remaining))
        except (OSError, ValueError, gevent.Timeout):
            raise BodyCut() from None  # the connection ended mid-body, or the body stopped coming
        if not data:
            if remaining:
                raise BodyCut()
            return
        if remaining is not None:
            remaining -= len(data)
        yield data


def _content_length(environ) -> int | None:
    value = (environ.get("CONTENT_LENGTH") or "").strip()
    return int(value) if value.isdigit() else None


def forward(upstream: Upstream, environ, start_response, error_page, pool: UpstreamPool = POOL, failed=None):
    """Proxies one request; ``error_page(status, message)`` answers when the upstream cannot;
    ``failed(status)`` is told of each 5xx answer of the upstream (the page memory's)."""
    method = environ.get("REQUEST_METHOD", "GET")
    transfer_encoding = environ.get("HTTP_TRANSFER_ENCODING")
    if transfer_encoding is not None and transfer_encoding.strip().lower() != "chunked":
        # Anything but plain chunked would be framed differently here and upstream.
        return error_page("400 Bad Request", "devhostd only passes on request bodies sent with "
                                             "Content-Length or Transfer-Encoding: chunked.", close=True)
    has_body = bool(environ.get("CONTENT_LENGTH")) or transfer_encoding is not None
    try:
        # The direct path (web/proxy/direct.py) may have had the exchange already, and left
        # what came of it (an answer, or why there is none) for this one to give.
        outcome = environ.pop(EXCHANGED, None) or exchange(upstream, environ, method, has_body, pool)
        if isinstance(outcome, Exception):
            raise outcome
        connection, response, sock, reusable = outcome
    except BodyCut:
        return error_page("400 Bad Request", "the request body ended before its Content-Length: nothing was "
                                             "answered (the upstream got a cut request and was let go).", close=True)
    except ValueError as exc:  # what cannot be sent on (control characters, …: web/proxy/client.py)
        return error_page("400 Bad Request", f"devhostd cannot pass this request on to the upstream: {exc}")
    except (OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return error_page("502 Bad Gateway",
                          f"devhostd could not get an answer from the upstream {upstream.origin}: {reason}. "
                          f"Is the dev server running? Reload this page once it is.")
    if response.status >= 500 and failed is not None:
        failed(response.status)
    headers, inject, decoder = response_plan(response, method, environ, upstream)
    try:
        start_response(f"{response.status} {clean(response.reason)}", headers)
    except (ValueError, TypeError, AssertionError) as exc:  # pywsgi refuses what it cannot send
        response.close()
        connection.close()
        daemon_log(f"proxy: the upstream's answer cannot be passed on: {exc!r}")
        return error_page("502 Bad Gateway", f"devhostd cannot pass on the answer of the upstream "
                                             f"{upstream.origin}: {exc}", close=True)
    keep = (lambda: pool.release(upstream, connection)) if reusable else None
    return _ResponseBody(connection, response, inject, decoder, sock, environ.get("devhost.client_socket"),
                         keep=keep)


EXCHANGED = "devhost.exchanged"  # in the environ: the direct path's exchange, for forward() to answer


def exchange(upstream: Upstream, environ, method: str, has_body: bool, pool: UpstreamPool = POOL):
    """Sends the request on a pooled (or new) connection and reads the answer's head:
    (connection, response, socket, whether the connection can serve another request once this
    answer is read whole). On an error the connection is closed and the error raised: BodyCut,
    ValueError (a request that cannot be sent on), OSError or HTTPException (no answer)."""
    connection, reused = pool.acquire(upstream, CONNECT_TIMEOUT)
    try:
        try:
            response, sock, reusable = _exchange(connection, method, environ, upstream, has_body)
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            if not (reused and method in IDEMPOTENT and not has_body and _stale(exc)):
                raise
            # The upstream closed its idle connection as this request went out: once more, on a
            # fresh one. Never for a request that may have changed something, or had a body.
            connection = upstream.client(CONNECT_TIMEOUT)
            response, sock, reusable = _exchange(connection, method, environ, upstream, has_body)
    except Exception:
        connection.close()
        raise
    return connection, response, sock, reusable


def _exchange(connection, method: str, environ, upstream: Upstream, has_body: bool):
    """Sends the request and reads the answer's head: (response, socket, whether the connection
    can serve another request once this answer is read whole)."""
    if connection.sock is None:
        connection.connect()
    # The connection lets go of its socket when the answer ends with it: keep it to lift the timeout.
    sock = connection.sock
    sock.settimeout(RESPONSE_TIMEOUT)
    # A dict: a header the browser sent that devhostd sets itself (X-Forwarded-Host) goes once, as devhostd's.
    headers = dict(request_headers(environ, narrow=is_navigation(environ)))
    connection.request(method, request_target(environ, upstream), headers.items(),
                       body=_body(environ) if has_body else None)
    response = connection.getresponse(method)
    sock.settimeout(None)
    return response, sock, not (response.will_close or response.status == 101)


def _stale(exc: Exception) -> bool:
    """A pooled connection the upstream had closed: refused at the write, or no answer at all."""
    if isinstance(exc, TimeoutError):
        return False  # the upstream is slow, not gone: sending again would only double the wait
    return isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                            http.client.BadStatusLine, ConnectionAbortedError))


# The hub's readable-watch of each browser socket, made at its first proxied answer and kept for
# the ones after it on the same connection (made anew, one cost a system call per answer); it goes
# with the socket, stopped: a watch is only started while an answer streams.
_WATCHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _readable_watch(client_socket):
    watch = _WATCHES.get(client_socket)
    if watch is None:
        watch = _WATCHES[client_socket] = gevent.get_hub().loop.io(client_socket.fileno(), 1)  # 1: readable
    return watch


class _ResponseBody:
    """The streamed body; pywsgi calls close() also when the browser went away mid-way."""

    def __init__(self, connection, response, inject: bool, decoder, upstream_socket=None, client_socket=None,
                 keep=None):
        self._connection = connection
        self._keep = keep  # gives the connection back to the pool once the answer was read whole
        self._complete = False
        self._response = response
        self._injector = ScriptInjector() if inject else None
        self._decoder = decoder
        self._upstream_socket = upstream_socket
        self._client_socket = client_socket
        self._watcher = None
        self._io_watch = None  # the hub's watch on the browser's socket, until it becomes readable
        self._progress = 0  # reads from the upstream so far

    def _client_readable(self):
        """The browser's socket became readable while its answer streams (run by the hub: it
        only hands over). A browser waits for an answer before it sends its next request, so this
        is most often its end; no greenlet is spent on a watch until then (one spawned and
        killed per answer was a tenth of a small proxied answer's cost)."""
        self._stop_io_watch()
        self._watcher = gevent.spawn(self._watch_client)

    def _stop_io_watch(self):
        if self._io_watch is not None:
            self._io_watch.stop()  # kept for the connection's next answer (_readable_watch)
            self._io_watch = None

    def _watch_client(self):
        """Lets go of the upstream when the browser closes its connection: a body that stalls
        (or streams for ever) must not hold a greenlet and two sockets once nobody reads it."""
        while True:
            try:
                gone = not self._client_socket.recv(1, socket.MSG_PEEK)
                break
            except TimeoutError:
                continue  # the client socket's own read timeout: keep watching
            except OSError:
                gone = True
                break
        if not gone:
            return  # the browser sent its next request already: it is still there
        # Closed, or only half-closed (it may still read): let go once the upstream stalls.
        while True:
            seen = self._progress
            gevent.sleep(CLIENT_GONE_IDLE)
            if self._progress == seen:
                break
        try:
            self._upstream_socket.shutdown(socket.SHUT_RDWR)  # the blocked read returns at once
        except OSError:
            pass

    def __iter__(self):
        if self._client_socket is not None and self._upstream_socket is not None:
            self._io_watch = _readable_watch(self._client_socket)
            self._io_watch.start(self._client_readable)
        try:
            yield from self._relay()
        finally:
            self._stop_watching()

    def _stop_watching(self):
        self._stop_io_watch()
        if self._watcher is not None:
            # Dead before pywsgi reads the next request from the same socket: two readers of
            # one gevent socket is an error.
            self._watcher.kill(block=True)
            self._watcher = None

    def _relay(self):
        broken = received = False
        while True:
            try:
                data = self._response.read1(CHUNK)
            except (OSError, http.client.HTTPException) as exc:
                # The browser gets what there was, then the connection is cut: a cut-off page
                # never looks complete (and is never a 500).
                daemon_log(f"proxy: the upstream's answer broke off: {exc!r}")
                broken = True
                break
            if not data:
                if self._response.length:  # read1 ends quietly where its length was not met
                    daemon_log(f"proxy: the upstream's answer ended {self._response.length} bytes short")
                    broken = True
                break
            received = True
            self._progress += 1
            pieces = [data] if self._decoder is None else self._inflate(data)
            try:
                for piece in pieces:
                    if self._injector is not None:
                        piece = self._injector.feed(piece)
                    if piece:
                        yield piece
            except DECODE_ERRORS as exc:
                daemon_log(f"proxy: the upstream's compressed answer is broken: {exc!r}")
                broken = True
                break
        if self._decoder is not None and not broken:
            if received and not self._decoder.eof:
                daemon_log("proxy: the upstream's compressed answer ended before its end")
                broken = True
        tail = self._injector.finish() if self._injector is not None else b""
        if tail:
            yield tail
        if broken:
            raise AbortResponse()
        self._complete = True

    def _inflate(self, data: bytes):
        """Decompresses in pieces of at most CHUNK bytes, letting other greenlets run between
        them: a small compressed body can expand to gigabytes."""
        decoder = self._decoder
        while True:
            piece = decoder.decompress(data, CHUNK)
            data = decoder.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < CHUNK:
                return
            gevent.sleep(0)

    def close(self):
        self._stop_watching()
        self._response.close()
        if self._complete and self._keep is not None:
            self._keep()  # read to its end, and the upstream keeps the connection open
        else:
            self._connection.close()

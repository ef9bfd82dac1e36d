"""The reverse proxy for routed services whose manifest entry names an ``upstream``.

The person's own dev server answers every path outside /__devhost__/; devhostd streams its
answers through unchanged except for three things: hop-by-hop headers are not forwarded,
``Location`` headers that name the upstream's own address are pointed back at the routed
hostname, and HTML gets the devtools script injected (so the chat panel appears on the app).

Only the manifest's upstream is ever contacted: the request contributes its path and query,
never a host or port. The app's own WebSocket (its hot reload) is tunnelled byte for byte by
``tunnel_websocket``.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import gevent

from actors.chatlog import daemon_log
from web.decoders import DECODABLE, decoder_for
from web.decoders import ERRORS as DECODE_ERRORS
from web.reload_hold import FrameSplitter
from web.upstream_pool import UpstreamPool
from web.websocket import AbortResponse, no_delay

PANEL_SCRIPT = b'<script type="module" src="/__devhost__/static/chat/panel.js"></script>'
CONNECT_TIMEOUT = 10.0
# A dev server may compile for a long while before it answers; once it has, a body may stream
# for ever (server-sent events), so reading it has no timeout at all.
RESPONSE_TIMEOUT = 300.0
CHUNK = 64 * 1024
# Once the browser has closed its side, an upstream body that brings nothing new for this long
# is let go of (a half-closed browser may still be reading, so not at once).
CLIENT_GONE_IDLE = 3.0
SNIFF_LIMIT = 64 * 1024  # how much HTML is held back while looking for <head>
BODY_IDLE = 10.0  # seconds a request body may stop coming before the request is refused
# RFC 9110 §7.6.1, plus the non-standard Proxy-Connection browsers still send.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "proxy-connection"})
# RFC 9110 §9.2.2: sent twice, these mean what they mean once; with no body to send again.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
POOL = UpstreamPool()


@dataclass(frozen=True)
class Upstream:
    scheme: str
    host: str
    port: int
    base_path: str  # "" or a prefix such as "/app", without the trailing slash

    @classmethod
    def parse(cls, url: str) -> "Upstream":
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme.lower(), (parts.hostname or "127.0.0.1").lower(), port, parts.path.rstrip("/"))

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"{self.scheme}://{host}:{self.port}"

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            # Dev servers use self-signed certificates; the address comes from the operator's
            # manifest only, so there is nothing a browser could point elsewhere.
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=ssl._create_unverified_context())  # noqa: S323
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


def request_target(environ, upstream: Upstream) -> str:
    """The upstream path for a request: the base path, then the request's own path and query."""
    path = environ.get("PATH_INFO") or "/"
    if not path.startswith("/"):
        # An absolute-form request line ("GET http://elsewhere/x"): only its path is used.
        path = urlsplit(path).path or "/"
    # pywsgi decoded the path as latin-1; quoting it again gives the bytes the browser sent.
    target = quote(path, safe="/:@!$&'()*+,;=-._~%", encoding="latin-1")
    query = environ.get("QUERY_STRING")
    return upstream.base_path + target + (f"?{query}" if query else "")


def is_navigation(environ) -> bool:
    """Whether the browser asks for a page a person is going to: only such an answer gets the
    panel. ``Sec-Fetch-Dest: document`` says so (an iframe, a fetch(), an htmx swap do not);
    without it, an ``Accept`` that prefers HTML, unless the request says it is a script's."""
    dest = environ.get("HTTP_SEC_FETCH_DEST")
    if dest is not None:
        return dest.strip().lower() == "document"
    if environ.get("HTTP_X_REQUESTED_WITH") or environ.get("HTTP_HX_REQUEST"):
        return False
    return prefers_html(environ.get("HTTP_ACCEPT", ""))


def prefers_html(accept: str) -> bool:
    """``text/html`` is named in Accept with the highest weight of all it names (``*/*`` alone,
    what fetch() sends, is no preference)."""
    weights = {}
    for part in accept.split(","):
        media, _, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if media.strip():
            weights[media.strip().lower()] = weight
    html = weights.get("text/html", 0.0)
    return html > 0 and html >= max(weights.values())


def request_headers(environ, narrow: bool = False) -> list[tuple[str, str]]:
    """The browser's headers for the upstream. ``narrow`` (an answer devhostd may rewrite):
    ``Accept-Encoding`` keeps only the encodings devhostd can undo; otherwise it passes as is."""
    headers = []
    listed = _connection_tokens(environ.get("HTTP_CONNECTION", ""))
    for key, value in environ.items():
        if not key.startswith("HTTP_"):
            continue
        name = key[5:].replace("_", "-").title()
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in listed or lower == "x-forwarded-for" \
                or (narrow and lower == "accept-encoding"):
            continue
        headers.append((name, value))
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers.append((name, environ[key]))
    if narrow:
        # Only encodings devhostd can undo, so the page can always be given the panel.
        accepted = [token.strip() for token in environ.get("HTTP_ACCEPT_ENCODING", "").split(",")]
        kept = [token for token in accepted if token.split(";")[0].strip().lower() in DECODABLE]
        headers.append(("Accept-Encoding", ", ".join(kept) or "identity"))
    forwarded_for = environ.get("HTTP_X_FORWARDED_FOR")
    client = environ.get("REMOTE_ADDR", "")
    headers.append(("X-Forwarded-For", f"{forwarded_for}, {client}" if forwarded_for else client))
    headers.append(("X-Forwarded-Host", environ.get("HTTP_HOST", "")))
    headers.append(("X-Forwarded-Proto", "http"))
    return headers


def _connection_tokens(value: str) -> set[str]:
    return {token.strip().lower() for token in value.split(",") if token.strip()}


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


def forward(upstream: Upstream, environ, start_response, error_page, pool: UpstreamPool = POOL):
    """Proxies one request; ``error_page(status, message)`` answers when the upstream cannot."""
    method = environ.get("REQUEST_METHOD", "GET")
    transfer_encoding = environ.get("HTTP_TRANSFER_ENCODING")
    if transfer_encoding is not None and transfer_encoding.strip().lower() != "chunked":
        # Anything but plain chunked would be framed differently here and upstream.
        return error_page("400 Bad Request", "devhostd only passes on request bodies sent with "
                                             "Content-Length or Transfer-Encoding: chunked.", close=True)
    has_body = bool(environ.get("CONTENT_LENGTH")) or transfer_encoding is not None
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
            connection, reused = upstream.connection(CONNECT_TIMEOUT), False
            response, sock, reusable = _exchange(connection, method, environ, upstream, has_body)
    except BodyCut:
        connection.close()
        return error_page("400 Bad Request", "the request body ended before its Content-Length: nothing was "
                                             "answered (the upstream got a cut request and was let go).", close=True)
    except ValueError as exc:  # http.client refuses what it cannot send (control characters, …)
        connection.close()
        return error_page("400 Bad Request", f"devhostd cannot pass this request on to the upstream: {exc}")
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return error_page("502 Bad Gateway",
                          f"devhostd could not get an answer from the upstream {upstream.origin}: {reason}. "
                          f"Is the dev server running? Reload this page once it is.")
    headers, inject, decoder = _response_plan(response, method, environ, upstream)
    try:
        start_response(f"{response.status} {_clean(response.reason)}", headers)
    except (ValueError, TypeError, AssertionError) as exc:  # pywsgi refuses what it cannot send
        response.close()
        connection.close()
        daemon_log(f"proxy: the upstream's answer cannot be passed on: {exc!r}")
        return error_page("502 Bad Gateway", f"devhostd cannot pass on the answer of the upstream "
                                             f"{upstream.origin}: {exc}", close=True)
    keep = (lambda: pool.release(upstream, connection)) if reusable else None
    return _ResponseBody(connection, response, inject, decoder, sock, environ.get("devhost.client_socket"),
                         keep=keep)


def _exchange(connection, method: str, environ, upstream: Upstream, has_body: bool):
    """Sends the request and reads the answer's head: (response, socket, whether the connection
    can serve another request once this answer is read whole)."""
    if connection.sock is None:
        connection.connect()
        no_delay(connection.sock)
    # getresponse() drops connection.sock when the answer ends with the connection
    # (HTTP/1.0, "Connection: close", a close-delimited body): keep it to lift the timeout.
    sock = connection.sock
    sock.settimeout(RESPONSE_TIMEOUT)
    connection.request(method, request_target(environ, upstream), body=_body(environ) if has_body else None,
                       headers=dict(request_headers(environ, narrow=is_navigation(environ))))
    response = connection.getresponse()
    interim = False
    while 100 <= response.status < 200 and response.status != 101:
        # An interim answer (103 Early Hints, a stray 100): the final one follows it.
        interim = True
        response = http.client.HTTPResponse(_Buffered(response.fp), method=method)
        response.begin()
    sock.settimeout(None)
    # After an interim answer http.client's own bookkeeping follows the first response, not
    # the one read: such a connection is not trusted with another request.
    return response, sock, not (interim or response.will_close or response.status == 101)


def _stale(exc: Exception) -> bool:
    """A pooled connection the upstream had closed: refused at the write, or no answer at all."""
    if isinstance(exc, TimeoutError):
        return False  # the upstream is slow, not gone: sending again would only double the wait
    return isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                            http.client.BadStatusLine, ConnectionAbortedError))


class _Buffered:
    """Lets a next HTTPResponse read on from the buffered file of the one before it."""

    def __init__(self, fp):
        self._fp = fp

    def makefile(self, mode):
        return self._fp


_LINE_BREAKS = re.compile(r"[\r\n]+[ \t]*")


def _clean(value: str) -> str:
    """A header value with its line breaks (obsolete folding, bare CRs) made single spaces."""
    return _LINE_BREAKS.sub(" ", value) if ("\r" in value or "\n" in value) else value


def _response_plan(response, method: str, environ, upstream: Upstream):
    """(headers for the browser, whether to inject the script, a decoder or None)."""
    listed = _connection_tokens(response.getheader("Connection") or "")
    is_html = (response.getheader("Content-Type") or "").split(";")[0].strip().lower() == "text/html"
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    has_body = response.status not in (204, 304) and response.status >= 200
    lengths = response.headers.get_all("Content-Length") or []
    # A length is only passed on when it frames the body: one valid number, no Transfer-Encoding
    # beside it, and a status that has a body at all.
    keep_length = (len(set(v.strip() for v in lengths)) == 1 and lengths[0].strip().isdigit()
                   and not response.chunked and response.getheader("Transfer-Encoding") is None
                   and has_body)
    inject = is_html and _is_page(response.status) and not (keep_length and int(lengths[0]) == 0) \
        and encoding in DECODABLE and method != "HEAD" and response.getheader("Content-Range") is None \
        and is_navigation(environ)
    headers = []
    for name, value in response.getheaders():
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in listed:
            continue
        if lower == "content-length":
            if not keep_length or any(n.lower() == "content-length" for n, _ in headers):
                continue
            value = value.strip()
        if inject and lower in REWRITTEN:
            continue  # the body changes: sent chunked and decoded, without the upstream's validator
        if inject and lower == "vary":
            continue  # given again below, with what decided the panel
        value = _clean(value)
        if lower == "location":
            value = rewrite_location(value, upstream, environ.get("HTTP_HOST", ""))
        headers.append((name, value))
    if inject:
        # A cache must not give this page (with the panel) to a fetch() of the same address.
        varied = [v.strip() for v in ",".join(response.headers.get_all("Vary") or []).split(",") if v.strip()]
        if not any(v.lower() in ("sec-fetch-dest", "*") for v in varied):
            varied.append("Sec-Fetch-Dest")
        headers.append(("Vary", ", ".join(varied)))
    return headers, inject, decoder_for(encoding) if inject else None


# Headers of the upstream's body that do not fit the body with the panel: its framing, its
# encoding, its digests and its validator (a cache would pair the upstream's ETag with it).
REWRITTEN = frozenset({"content-length", "content-encoding", "content-md5", "digest", "repr-digest",
                       "content-digest", "etag"})


def _is_page(status: int) -> bool:
    """A status whose body a person sees as a page: not 1xx, 204, 206, 304 or another 3xx."""
    return 200 <= status < 300 and status not in (204, 206) or status >= 400


_DEFAULT_PORTS = {"http": 80, "https": 443}


def rewrite_location(url: str, upstream: Upstream, routed_host: str) -> str:
    """A Location on the upstream itself (same scheme, host in any case, effective port) pointed
    at the routed hostname, the upstream's base path taken off; any other left as it is."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if parts.scheme or parts.netloc:
        scheme = parts.scheme.lower()
        if (scheme != upstream.scheme.lower() or (parts.hostname or "") != upstream.host.lower()
                or (port or _DEFAULT_PORTS.get(scheme)) != upstream.port):
            return url
    elif not parts.path.startswith("/"):
        return url  # relative to where the browser is: already right
    path = parts.path
    base = upstream.base_path
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):] or "/"
    if not (parts.scheme or parts.netloc):
        return path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    return (f"http://{routed_host}{path or '/'}" + (f"?{parts.query}" if parts.query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))


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
        self._progress = 0  # reads from the upstream so far

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
            self._watcher = gevent.spawn(self._watch_client)
        try:
            yield from self._relay()
        finally:
            self._stop_watching()

    def _stop_watching(self):
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


_TAG = re.compile(rb"<(/?)(head|body)[\s>/]", re.I)
_TAG_SPAN = len(b"</head>")  # past this many bytes after a "<" it is decided whether it is one of ours
_FALLBACKS = (re.compile(rb"<html(?:\s[^>]*)?>", re.I), re.compile(rb"<!doctype[^>]*>", re.I))


class ScriptInjector:
    """Puts the panel script at whichever comes first of <head> (right after it), <body> (right
    after it) and </head> (right before it), else after <html>, the doctype, or first, holding
    back at most SNIFF_LIMIT bytes; never before the doctype, which would switch the page into
    quirks mode and change its layout. Each byte is scanned a bounded number of times, however
    the body is cut into chunks."""

    def __init__(self, script: bytes = PANEL_SCRIPT):
        self._script = script
        self._held = bytearray()  # grows in place: no copy of what is held per chunk
        self._done = False
        self._scanned = 0  # the held bytes before this hold no tag of ours
        self._gt_from = 0  # where to go on looking for the ">" of an open <head …/<body … tag
        self._empty = True  # no byte of the body came yet: an empty body stays empty

    def feed(self, data: bytes) -> bytes:
        if self._done:
            return data
        self._empty = self._empty and not data
        self._held += data
        found = self._scan(final=False)
        if found is not None:
            return found
        if len(self._held) > SNIFF_LIMIT:
            return self._fallback()
        return b""

    def _scan(self, final: bool) -> bytes | None:
        held = self._held
        while True:
            at = held.find(b"<", self._scanned)
            if at < 0:
                self._scanned = len(held)
                break
            if len(held) - at < _TAG_SPAN and not final:
                self._scanned = at  # undecided until more bytes come
                break
            match = _TAG.match(held, at)
            if match is None:
                self._scanned = at + 1
                continue
            if match.group(1):  # </head>: the head is ending, so the script goes in just before
                return self._insert(at)
            end = held.find(b">", max(self._gt_from, match.end() - 1))
            if end < 0:
                self._scanned, self._gt_from = at, len(held)
                break
            return self._insert(end + 1)
        return None

    def finish(self) -> bytes:
        if self._done or self._empty:
            self._done = True
            return b""
        found = self._scan(final=True)
        return found if found is not None else self._fallback()

    def _fallback(self) -> bytes:
        for pattern in _FALLBACKS:
            match = pattern.search(self._held)
            if match:
                return self._insert(match.end())
        return self._insert(0)

    def _insert(self, at: int) -> bytes:
        self._done = True
        held, self._held = self._held, bytearray()
        return bytes(held[:at]) + self._script + bytes(held[at:])


# ---- WebSocket pass-through ------------------------------------------------------------------

def tunnel_websocket(handler, upstream: Upstream, holds=None, hostname: str | None = None) -> None:
    """Relays an upgrade request and then both directions, byte for byte, until one side closes.

    ``handler`` is the gevent-websocket handler of the browser's connection: its ``rfile``
    may already hold bytes the browser sent after the request, so reads go through it.
    With ``holds`` (web/reload_hold.py), what the upstream sends is cut into frames, so it can
    be held while the person holds reloads for ``hostname``; the bytes stay the upstream's.
    """
    try:
        remote = socket.create_connection((upstream.host, upstream.port), timeout=CONNECT_TIMEOUT)
        no_delay(remote)
        if upstream.scheme == "https":
            remote = ssl._create_unverified_context().wrap_socket(remote, server_hostname=upstream.host)  # noqa: S323
        remote.settimeout(None)
    except OSError as exc:
        answer(handler, "502 Bad Gateway",
               f"devhostd could not reach the upstream {upstream.origin}: {exc.strerror or exc}")
        return
    try:
        remote.sendall(_upgrade_request(handler, upstream))
    except OSError:
        remote.close()  # the upstream hung up at once: the browser sees its socket close
        handler.close_connection = True
        return
    try:
        head, rest = _read_head(remote)
    except (OSError, ValueError) as exc:
        remote.close()
        answer(handler, "502 Bad Gateway", f"devhostd got no WebSocket handshake from the upstream "
                                           f"{upstream.origin}: {exc}")
        return
    client = handler.socket
    if _status_code(head) != 101:
        # The upstream refused the upgrade: its answer goes to the browser, and the connection
        # ends with it (nothing the browser sends next may reach the upstream unframed).
        try:
            _relay_refusal(remote, client, head, rest)
        finally:
            remote.close()
            handler.close_connection = True
        return
    tunnel = holds.open(hostname, client) if holds is not None else None
    try:
        try:
            client.sendall(head if tunnel is not None else head + rest)
        except OSError:
            return  # the browser went away meanwhile
        to_remote = gevent.spawn(_pump, handler.rfile.read1, remote)
        to_client = gevent.spawn(_pump, remote.recv, client) if tunnel is None else \
            gevent.spawn(_pump_frames, remote.recv, client, rest, holds, hostname, tunnel)
        gevent.wait([to_remote, to_client], count=1)
        # One side is done: give the other a moment to pass on its close, then cut both.
        gevent.wait([to_remote, to_client], timeout=5)
        gevent.killall([to_remote, to_client], block=False)
    finally:
        if tunnel is not None:
            holds.close(hostname, tunnel)
        remote.close()
        handler.close_connection = True


HEAD_LIMIT = 64 * 1024


def _read_head(remote) -> tuple[bytes, bytes]:
    """The upstream's status line and headers, and whatever came after them."""
    remote.settimeout(RESPONSE_TIMEOUT)
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            raise ValueError("its answer's headers are too long")
        more = remote.recv(CHUNK)
        if not more:
            raise ValueError("it closed the connection")
        data += more
    remote.settimeout(None)
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _status_code(head: bytes) -> int:
    parts = head.split(b"\r\n", 1)[0].split(None, 2)
    return int(parts[1]) if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit() else 0


def _relay_refusal(remote, client, head: bytes, rest: bytes) -> None:
    """Passes on a non-101 answer: its Content-Length worth of body, else until it ends or idles."""
    match = re.search(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n", head, re.I)
    remaining = int(match.group(1)) - len(rest) if match else None
    try:
        client.sendall(head + (rest if remaining is None or remaining >= 0 else rest[:int(match.group(1))]))
        remote.settimeout(10.0)
        while remaining is None or remaining > 0:
            data = remote.recv(CHUNK if remaining is None else min(CHUNK, remaining))
            if not data:
                break
            client.sendall(data)
            if remaining is not None:
                remaining -= len(data)
    except OSError:
        pass


def _upgrade_request(handler, upstream: Upstream) -> bytes:
    environ = handler.environ
    lines = [f"GET {request_target(environ, upstream)} HTTP/1.1"]
    original = getattr(handler, "headers", None)
    pairs = list(original.items()) if original is not None else [
        (key[5:].replace("_", "-").title(), value) for key, value in environ.items() if key.startswith("HTTP_")]
    # Everything is passed on as sent, the Upgrade and Connection headers included: they are
    # the handshake itself. The X-Forwarded-* headers are devhostd's own, as on the HTTP path.
    lines += [f"{name}: {value}" for name, value in pairs if not name.lower().startswith("x-forwarded-")]
    forwarded_for = environ.get("HTTP_X_FORWARDED_FOR")
    client = environ.get("REMOTE_ADDR", "")
    lines.append(f"X-Forwarded-For: {f'{forwarded_for}, {client}' if forwarded_for else client}")
    lines.append(f"X-Forwarded-Host: {environ.get('HTTP_HOST', '')}")
    lines.append("X-Forwarded-Proto: http")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _pump(read, destination) -> None:
    try:
        while True:
            data = read(CHUNK)
            if not data:
                break
            destination.sendall(data)
    except (OSError, ValueError):
        pass  # a side went away (ValueError: a closed file); the tunnel ends either way
    try:
        destination.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _pump_frames(read, client, first: bytes, holds, hostname: str, tunnel) -> None:
    """The upstream's side of a tunnel whose frames may be held (web/reload_hold.py)."""
    splitter = FrameSplitter()
    try:
        data = first
        while True:
            if data:
                holds.relay(hostname, tunnel, splitter.feed(data))
            data = read(CHUNK)
            if not data:
                break
    except (OSError, ValueError):
        pass  # a side went away; the tunnel ends either way
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def answer(handler, status: str, message: str) -> None:
    """A plain HTTP answer to an upgrade request that will not be tunnelled."""
    body = json.dumps({"error": message}).encode()
    handler.start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                    ("Cache-Control", "no-store")])
    handler.result = [body]
    handler.process_result()
    handler.close_connection = True

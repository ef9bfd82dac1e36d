"""The direct path: a page's small sub-resource answered without the WSGI round.

A dev page is hundreds of requests for small modules, each a GET without a body whose answer has
a length. Through pywsgi's WSGI round (the environ's app call, start_response's checks, the
result's iteration, the head's framing) each costs about as much CPU again as the exchange with
the upstream itself, and on a two-core machine the browser and the dev server wait for that CPU.
The handler (web/websocket.py) offers each request here first: one that qualifies is exchanged
with the upstream exactly as ``forward`` would (``exchange``, web/proxy/relay.py), and if its
answer is a plain one, its head and body go to the browser in one write. Anything else is handed
back, with the exchange already made (``EXCHANGED`` in the environ), for ``forward`` to answer
as always: an error page, a 5xx the page memory is told of, a head pywsgi would refuse, and a
body without a length, larger than DIRECT_LIMIT or not all come with its head (those stream as
they come, with the watch that lets go of the upstream when the browser leaves).

What the browser gets is byte for byte what the WSGI round would send (tests/unit/test_proxy_direct.py
compares the two), and the connection is kept or closed as pywsgi would.
"""
from __future__ import annotations

import time

from gevent.pywsgi import format_date_time

from web.proxy.heads import clean, is_navigation, response_plan
from web.proxy.relay import EXCHANGED, POOL, exchange
from web.proxy.upstream import Upstream
from web.sending import send_all

__all__ = ["answer", "is_navigation", "qualifies"]  # is_navigation: for the caller, which decides it

DIRECT_LIMIT = 64 * 1024  # the largest body answered here: read whole, sent with its head in one write


def qualifies(environ) -> bool:
    """A GET or HEAD over HTTP/1.1 without a body, no upgrade, an origin-form path: what a page's
    module request is. (Which host, and whether it is a navigation, the caller decides.)"""
    return (environ["REQUEST_METHOD"] in ("GET", "HEAD") and environ.get("SERVER_PROTOCOL") == "HTTP/1.1"
            and not environ.get("CONTENT_LENGTH") and "HTTP_TRANSFER_ENCODING" not in environ
            and "HTTP_UPGRADE" not in environ and environ.get("PATH_INFO", "").startswith("/"))


def answer(handler, upstream: Upstream, pool=POOL) -> bool:
    """Answers the handler's request from the upstream; False when ``forward`` is to answer it
    (with what the exchange gave left in the environ)."""
    environ = handler.environ
    method = environ["REQUEST_METHOD"]
    try:
        outcome = exchange(upstream, environ, method, False, pool)
    except Exception as exc:  # noqa: BLE001 - forward() says what each means, as for its own exchange
        environ[EXCHANGED] = exc
        return False
    connection, response, _, reusable = outcome
    status = response.status
    length = response.length
    if status < 200 or status >= 500 or length is None or length > DIRECT_LIMIT:
        environ[EXCHANGED] = outcome
        return False
    headers, inject, decoder = response_plan(response, method, environ, upstream)
    head = _head(status, response.reason, headers)
    framed = length == 0 or any(name.lower() == "content-length" for name, _ in headers)
    if inject or decoder is not None or head is None or not framed:
        environ[EXCHANGED] = outcome
        return False
    # Only a body that came with its head: one still coming streams as it comes (forward), with
    # the watch that lets go of the upstream when the browser leaves.
    body = response.buffered_body()
    if body is None:
        environ[EXCHANGED] = outcome
        return False
    if reusable:
        pool.release(upstream, connection)  # read whole: the next request may have it
    handler.socket.settimeout(None)  # as for every proxied answer (web/websocket.py)
    try:
        send_all(handler.socket, head + body if method != "HEAD" else head)
    except OSError:
        handler.close_connection = True  # the browser went away: nothing more on this connection
        return True
    handler.response_length = len(head) + len(body)
    return True


def _head(status: int, reason: str, headers) -> bytes | None:
    """The answer's head as pywsgi would write it (a Date added when the upstream gave none), or
    None where pywsgi's start_response would refuse a header (forward() then says why)."""
    lines = [f"HTTP/1.1 {status} {clean(reason)}"]
    dated = False
    for name, value in headers:
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            return None
        if not dated and name.lower() == "date":
            dated = True
        lines.append(f"{name}: {value}")
    try:
        head = ("\r\n".join(lines) + "\r\n").encode("latin-1")
    except UnicodeEncodeError:
        return None
    if not dated:
        head += b"Date: " + format_date_time(time.time()) + b"\r\n"
    return head + b"\r\n"

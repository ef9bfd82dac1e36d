"""web/proxy/direct.py: a page's module answered without the WSGI round sends the browser the
bytes the WSGI round would, and everything it does not take is answered by ``forward`` from the
same exchange, never a second one.

Each test runs devhostd's own handler (web/websocket.py) on a real server, in front of an upstream
that answers scripted bytes, once with the direct path and once without, and compares."""
from __future__ import annotations

import socket

import gevent
import pytest
from gevent import pywsgi
from gevent.server import StreamServer

from web.proxy import direct
from web.proxy.pool import UpstreamPool
from web.proxy.relay import forward
from web.proxy.upstream import Upstream
from web.websocket import DevhostHandler

DATE = b"Date: Thu, 03 Dec 2026 18:00:00 GMT\r\n"
MODULE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: 11\r\nETag: \"m1\"\r\n"
          + DATE + b"\r\nexport {};\n")


class ScriptedUpstream:
    """Answers each request with ``reply``: bytes, or a list of pieces written apart (a short
    pause between them); counts connections and requests."""

    def __init__(self, reply):
        self.reply = reply
        self.connections = 0
        self.requests: list[bytes] = []
        self._server = StreamServer(("127.0.0.1", 0), self._serve)
        self._server.start()
        self.upstream = Upstream.parse(f"http://127.0.0.1:{self._server.server_port}")

    def _serve(self, sock, _address):
        self.connections += 1
        reader = sock.makefile("rb")
        try:
            while (line := reader.readline()):
                while reader.readline() not in (b"\r\n", b""):
                    pass
                self.requests.append(line.rstrip())
                for piece in (self.reply if isinstance(self.reply, list) else [self.reply]):
                    sock.sendall(piece)
                    gevent.sleep(0.05)
        except OSError:
            pass
        finally:
            reader.close()
            sock.close()

    def stop(self):
        self._server.stop(timeout=0.5)


class ProxyApp:
    """What web/pages.py makes of a routed service with an upstream, reduced to the proxy: the
    WSGI round is ``forward``; ``direct`` (when on) is offered each request first."""

    def __init__(self, upstream: Upstream, direct_on: bool):
        self.pool = UpstreamPool()
        self.wsgi_calls = 0
        self.direct = (lambda handler: direct.answer(handler, upstream, self.pool)) if direct_on else None
        self.upstream = upstream

    def __call__(self, environ, start_response):
        self.wsgi_calls += 1

        def error_page(status, message, close=False):
            body = message.encode()
            start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            return [body]
        return forward(self.upstream, environ, start_response, error_page, pool=self.pool)


@pytest.fixture
def proxies():
    """proxies(reply) -> (upstream, {True: (app, port) with the direct path, False: without})."""
    made = []

    def make(reply):
        upstream = ScriptedUpstream(reply)
        made.append(upstream)
        servers = {}
        for on in (True, False):
            app = ProxyApp(upstream.upstream, on)
            server = pywsgi.WSGIServer(("127.0.0.1", 0), app, handler_class=DevhostHandler, log=None)
            server.start()
            made.append(server)
            servers[on] = (app, server.server_port)
        return upstream, servers
    yield make
    for thing in made:
        thing.stop()


def exchange(port: int, request: bytes, requests: int = 1) -> bytes:
    """Sends ``request`` ``requests`` times on one connection, each after the answer before it
    (read until the connection has been quiet a moment), and returns all that came back."""
    out = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        for _ in range(requests):
            client.sendall(request)
            client.settimeout(0.5)
            try:
                while data := client.recv(65536):
                    out += data
            except TimeoutError:
                pass
    return out


GET = b"GET /src/m1.js HTTP/1.1\r\nHost: app.localhost\r\nAccept: */*\r\n\r\n"


def without_date(answer: bytes) -> bytes:
    return b"\r\n".join(line for line in answer.split(b"\r\n") if not line.startswith(b"Date: "))


def test_a_module_is_answered_directly_with_the_bytes_of_the_wsgi_round(proxies):
    upstream, servers = proxies(MODULE)
    answers = {on: exchange(port, GET) for on, (_, port) in servers.items()}
    assert answers[True] == answers[False]
    assert answers[True].startswith(b"HTTP/1.1 200 OK\r\n") and answers[True].endswith(b"\r\n\r\nexport {};\n")
    assert b'ETag: "m1"' in answers[True] and DATE in answers[True]
    assert (servers[True][0].wsgi_calls, servers[False][0].wsgi_calls) == (0, 1)
    assert len(upstream.requests) == 2  # one each: the direct path asked once


def test_an_answer_without_a_date_gets_one_as_from_the_wsgi_round(proxies):
    _, servers = proxies(MODULE.replace(DATE, b""))
    answers = {on: exchange(port, GET) for on, (_, port) in servers.items()}
    assert answers[True].count(b"\r\nDate: ") == 1
    assert without_date(answers[True]) == without_date(answers[False])
    assert servers[True][0].wsgi_calls == 0


@pytest.mark.parametrize("request_line, reply", [
    (b"HEAD /src/m1.js HTTP/1.1", MODULE.split(b"\r\n\r\n")[0] + b"\r\n\r\n"),
    (b"GET /src/m1.js HTTP/1.1", b"HTTP/1.1 304 Not Modified\r\nETag: \"m1\"\r\n" + DATE + b"\r\n"),
    (b"GET /gone.js HTTP/1.1", b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n" + DATE + b"\r\ngone"),
])
def test_bodiless_and_client_error_answers_are_direct_and_the_same(proxies, request_line, reply):
    _, servers = proxies(reply)
    request = request_line + b"\r\nHost: app.localhost\r\n\r\n"
    answers = {on: exchange(port, request) for on, (_, port) in servers.items()}
    assert answers[True] == answers[False]
    assert servers[True][0].wsgi_calls == 0
    if request_line.startswith(b"HEAD"):
        assert answers[True].endswith(b"\r\n\r\n") and b"Content-Length: 11" in answers[True]


CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nTransfer-Encoding: chunked\r\n" + DATE
           + b"\r\n5\r\nhello\r\n0\r\n\r\n")
LARGE = (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % (direct.DIRECT_LIMIT + 1) + DATE + b"\r\n"
         + b"x" * (direct.DIRECT_LIMIT + 1))
LATE_BODY = [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n" + DATE + b"\r\n", b"hello"]
FAILING = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n" + DATE + b"\r\nbusy"


@pytest.mark.parametrize("reply", [CHUNKED, LARGE, LATE_BODY, FAILING],
                         ids=["chunked", "larger-than-the-limit", "body-after-the-head", "5xx"])
def test_what_the_direct_path_does_not_take_forward_answers_from_the_same_exchange(proxies, reply):
    upstream, servers = proxies(reply)
    answers = {on: exchange(port, GET) for on, (_, port) in servers.items()}
    assert answers[True] == answers[False]
    expected_body = {id(CHUNKED): b"hello", id(LARGE): b"x" * (direct.DIRECT_LIMIT + 1),
                     id(LATE_BODY): b"hello", id(FAILING): b"busy"}[id(reply)]
    body = answers[True].split(b"\r\n\r\n", 1)[1]
    assert body == expected_body or (reply is CHUNKED and body == b"5\r\nhello\r\n0\r\n\r\n")
    assert servers[True][0].wsgi_calls == 1  # handed over ...
    assert len(upstream.requests) == 2  # ... and never asked of the upstream twice


def test_an_upstream_that_is_not_there_is_forwards_error_page_after_one_attempt(proxies):
    upstream, servers = proxies(MODULE)
    upstream.stop()
    answer = exchange(servers[True][1], GET)
    assert answer.startswith(b"HTTP/1.1 502 ") and b"could not get an answer from the upstream" in answer
    assert servers[True][0].wsgi_calls == 1


def test_requests_on_one_kept_alive_connection_share_one_upstream_connection(proxies):
    upstream, servers = proxies(MODULE)
    answer = exchange(servers[True][1], GET, requests=3)
    assert answer.count(b"HTTP/1.1 200 OK") == 3 and answer.count(b"export {};\n") == 3
    assert upstream.connections == 1 and servers[True][0].wsgi_calls == 0


def test_a_browser_asking_to_close_gets_its_connection_closed_after_the_answer(proxies):
    _, servers = proxies(MODULE)
    with socket.create_connection(("127.0.0.1", servers[True][1]), timeout=5) as client:
        client.sendall(GET.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        out = b""
        while data := client.recv(65536):  # ends: the daemon closed it
            out += data
    assert out.endswith(b"export {};\n")


@pytest.mark.parametrize("changes, taken", [
    ({}, True),
    ({"REQUEST_METHOD": "HEAD"}, True),
    ({"REQUEST_METHOD": "POST"}, False),
    ({"SERVER_PROTOCOL": "HTTP/1.0"}, False),
    ({"CONTENT_LENGTH": "5"}, False),
    ({"HTTP_TRANSFER_ENCODING": "chunked"}, False),
    ({"HTTP_UPGRADE": "websocket"}, False),
    ({"PATH_INFO": "http://elsewhere/x"}, False),
])
def test_only_a_get_or_head_over_http_1_1_without_a_body_qualifies(changes, taken):
    environ = {"REQUEST_METHOD": "GET", "SERVER_PROTOCOL": "HTTP/1.1", "PATH_INFO": "/src/m1.js", **changes}
    assert direct.qualifies(environ) is taken

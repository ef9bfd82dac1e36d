"""The proxy's kept-alive upstream connections (web/proxy/pool.py), seen from the upstream.

The upstream here is a raw HTTP/1.1 server the test scripts connection by connection, so it can
count connections and requests, and close a kept-alive connection the way a dev server's
keep-alive timeout does: while it is idle, or just as the next request arrives.
"""
from __future__ import annotations

import http.client

import gevent
import pytest
from gevent.server import StreamServer

from tests.upstream_app import write_routed_manifest


class ScriptedUpstream:
    """Answers ``GET``/``POST`` with 200 and keep-alive; ``drop`` decides, per request, to
    close the connection unanswered instead (the close racing the request)."""

    def __init__(self):
        self.connections = 0
        self.requests: list[tuple[int, str, str]] = []  # (connection number, method, path)
        self.drop = lambda number, method, path: False
        self.close_after_answer = False
        self._server = StreamServer(("127.0.0.1", 0), self._serve)
        self._server.start()
        self.url = f"http://127.0.0.1:{self._server.server_port}"

    def stop(self):
        self._server.stop(timeout=0.5)

    def _serve(self, sock, _address):
        self.connections += 1
        number = self.connections
        reader = sock.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                length = 0
                while (header := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = header.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length:
                    reader.read(length)
                self.requests.append((number, method, path))
                if self.drop(number, method, path):
                    return  # closed with no answer at all
                body = f"{method} {path} on connection {number}".encode()
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                             % len(body))
                if method == "HEAD":
                    gevent.sleep(0.02)  # a broken server: a body to HEAD, once the answer was read
                sock.sendall(body)
                if self.close_after_answer:
                    return  # the idle close of a keep-alive timeout, without saying so beforehand
        finally:
            reader.close()
            sock.close()


@pytest.fixture
def upstream():
    server = ScriptedUpstream()
    yield server
    server.stop()


@pytest.fixture
def stack(tmp_path, upstream):
    write_routed_manifest(tmp_path, upstream.url)
    return tmp_path


def fetch(daemon, path, method="GET", body=None):
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"Host": daemon.host()})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_requests_one_after_another_share_one_upstream_connection(daemon, upstream):
    for n in range(20):
        status, body = fetch(daemon, f"/module-{n}.js")  # a fresh browser connection each time
        assert (status, body) == (200, f"GET /module-{n}.js on connection 1".encode())
    assert upstream.connections == 1


def test_a_connection_the_upstream_closed_while_idle_is_not_used_again(daemon, upstream):
    upstream.close_after_answer = True
    for n in range(5):
        # POSTs: never sent twice, so one sent on a dead connection would be a 502.
        status, body = fetch(daemon, f"/form-{n}", method="POST", body=b"field=1")
        assert status == 200 and body.endswith(b"on connection %d" % (n + 1))
        gevent.sleep(0.05)  # the upstream's close reaches devhostd before the next request
    assert upstream.requests == [(n + 1, "POST", f"/form-{n}") for n in range(5)]


def test_a_get_that_met_the_upstreams_close_is_sent_once_more_on_a_fresh_connection(daemon, upstream):
    assert fetch(daemon, "/first")[0] == 200
    upstream.drop = lambda number, method, path: number == 1 and path == "/second"
    status, body = fetch(daemon, "/second")
    assert (status, body) == (200, b"GET /second on connection 2")
    assert upstream.requests == [(1, "GET", "/first"), (1, "GET", "/second"), (2, "GET", "/second")]


def test_a_post_is_never_sent_twice(daemon, upstream):
    assert fetch(daemon, "/first")[0] == 200
    upstream.drop = lambda number, method, path: method == "POST"
    status, body = fetch(daemon, "/order", method="POST", body=b"one pizza")
    assert status == 502 and b"could not get an answer from the upstream" in body
    assert [request for request in upstream.requests if request[1] == "POST"] == [(1, "POST", "/order")]
    # The connection that broke is gone; the next request works on a fresh one.
    upstream.drop = lambda number, method, path: False
    assert fetch(daemon, "/after") == (200, b"GET /after on connection 2")


def test_a_connection_with_bytes_nobody_asked_for_is_not_used_again(daemon, upstream):
    """This upstream wrongly sends a body after its answer to HEAD: those bytes would be
    read as the answer to the next request, so the connection is dropped, not reused."""
    assert fetch(daemon, "/one")[0] == 200
    assert fetch(daemon, "/two", method="HEAD") == (200, b"")
    gevent.sleep(0.1)  # the stray bytes arrive while the connection is idle
    assert fetch(daemon, "/three") == (200, b"GET /three on connection 2")

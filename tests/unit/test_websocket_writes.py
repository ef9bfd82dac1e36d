"""How DevhostHandler (web/websocket.py) writes an answer: its head and a first piece of body up to
GATHER_LIMIT in one write (one packet with Nagle off, not two), a larger piece apart, and the bytes
on the wire as pywsgi's own two writes would have put them."""
from __future__ import annotations

import socket

import pytest
from gevent import pywsgi

from web import websocket
from web.websocket import DevhostHandler


@pytest.fixture
def serve(monkeypatch):
    """serve(body, chunked=False, method="GET") -> (the writes pywsgi made, the bytes received)."""
    writes = []
    plain = websocket.send_all  # every write of an answer goes through it (web/sending.py)

    def counted(sock, data):
        writes.append(len(data))
        return plain(sock, data)
    monkeypatch.setattr(websocket, "send_all", counted)
    servers = []

    def run(body: bytes, chunked: bool = False, method: str = "GET"):
        def app(environ, start_response):
            start_response("200 OK", [("Content-Type", "text/javascript")]
                           + ([] if chunked else [("Content-Length", str(len(body)))]))
            return iter([body]) if chunked else [body]  # a one-item list: pywsgi sets its length
        server = pywsgi.WSGIServer(("127.0.0.1", 0), app, handler_class=DevhostHandler, log=None)
        server.start()
        servers.append(server)
        with socket.create_connection(("127.0.0.1", server.server_port)) as client:
            client.sendall(f"{method} /m.js HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode())
            received = b""
            while data := client.recv(1 << 20):
                received += data
        return writes, received
    yield run
    for server in servers:
        server.stop()


def test_a_small_answer_is_one_write_head_and_body(serve):
    writes, received = serve(b"x" * 1100)
    assert len(writes) == 1
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK") and b"Content-Length: 1100" in head and body == b"x" * 1100


def test_a_chunked_answer_gathers_its_first_chunk_and_ends_as_before(serve):
    writes, received = serve(b"<p>hi</p>", chunked=True)
    assert len(writes) == 2  # the head with the first chunk, then the last chunk
    assert received.endswith(b"\r\n\r\n9\r\n<p>hi</p>\r\n0\r\n\r\n")


def test_a_large_first_piece_goes_apart_from_the_head(serve):
    writes, received = serve(b"y" * (DevhostHandler.GATHER_LIMIT + 50_000))
    assert len(writes) == 2 and writes[1] == DevhostHandler.GATHER_LIMIT + 50_000
    assert received.split(b"\r\n\r\n", 1)[1] == b"y" * (DevhostHandler.GATHER_LIMIT + 50_000)


def test_head_answers_still_carry_no_body(serve):
    writes, received = serve(b"x" * 100, method="HEAD")
    assert len(writes) == 1 and received.endswith(b"\r\n\r\n") and b"x" not in received.split(b"\r\n\r\n")[1]

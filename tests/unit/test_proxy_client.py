"""The proxy's own HTTP/1.1 client (web/proxy/client.py): what it sends, how it frames an answer's
body (length, chunks, the connection's end, none at all), interim answers, and that a broken
answer is an HTTPException (the relay's 502), never anything else."""
from __future__ import annotations

import http.client
import socket

import pytest

from web.proxy.client import UpstreamConnection
from web.proxy.upstream import Upstream


def connected(answer: bytes, close: bool = True, upstream: str = "http://127.0.0.1:3000"):
    """(a connection whose upstream has sent ``answer`` and, with ``close``, ended; the upstream's end)."""
    ours, theirs = socket.socketpair()
    connection = UpstreamConnection(Upstream.parse(upstream), 5)
    connection.sock = ours
    theirs.sendall(answer)
    if close:
        theirs.shutdown(socket.SHUT_WR)
    return connection, theirs


def body(response) -> bytes:
    out = b""
    while data := response.read1(3):  # small reads: every framing is crossed mid-piece
        out += data
    return out


def sent(connection, theirs, *args, **kwargs) -> bytes:
    connection.request(*args, **kwargs)
    connection.sock.shutdown(socket.SHUT_WR)
    out = b""
    while data := theirs.recv(65536):
        out += data
    return out


def test_the_request_goes_as_one_head_with_host_and_encoding_added_only_when_missing():
    connection, theirs = connected(b"", close=False)
    head = sent(connection, theirs, "GET", "/a?b=1", [("Host", "app.localhost:7777"), ("Cookie", "c=1")])
    assert head == (b"GET /a?b=1 HTTP/1.1\r\nHost: app.localhost:7777\r\nCookie: c=1\r\n"
                    b"Accept-Encoding: identity\r\n\r\n")
    connection, theirs = connected(b"", close=False, upstream="http://[::1]:80")
    assert sent(connection, theirs, "POST", "/", [("Accept-Encoding", "gzip")]) == \
        b"POST / HTTP/1.1\r\nAccept-Encoding: gzip\r\nHost: [::1]\r\nContent-Length: 0\r\n\r\n"


def test_a_body_goes_as_is_with_its_length_and_chunked_without_one():
    connection, theirs = connected(b"", close=False)
    assert sent(connection, theirs, "PUT", "/", [("Host", "h"), ("Content-Length", "5")], body=iter([b"he", b"llo"])) \
        == b"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nAccept-Encoding: identity\r\n\r\nhello"
    connection, theirs = connected(b"", close=False)
    assert sent(connection, theirs, "POST", "/", [("Host", "h")], body=iter([b"hello", b"", b"x" * 16])).endswith(
        b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\n" + b"x" * 16 + b"\r\n0\r\n\r\n")


@pytest.mark.parametrize("method, target, headers", [
    ("GET", "/a b", []), ("GET", "/a\x00", []), ("G\x01T", "/", []),
    ("GET", "/", [("X-A", "one\r\nX-Injected: 1")]), ("GET", "/", [("X:A", "1")]), ("GET", "/", [("X-A", "ü€")]),
])
def test_what_http_client_would_not_send_is_a_value_error(method, target, headers):
    connection, _ = connected(b"", close=False)
    with pytest.raises(ValueError):
        connection.request(method, target, headers)


def test_a_length_frames_the_body_and_the_connection_stays_for_the_next_answer():
    connection, theirs = connected(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
                                   close=False)
    response = connection.getresponse("GET")
    assert (response.status, response.reason, response.getheader("content-type")) == (200, "OK", "text/plain")
    assert body(response) == b"hello" and response.length == 0 and not response.will_close
    theirs.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert (connection.getresponse("GET").status, connection.sock is not None) == (204, True)


def test_a_chunked_body_is_unframed_and_its_trailers_skipped():
    connection, _ = connected(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n"
                              b"5;ext=1\r\nhello\r\nb\r\n, the world\r\n0\r\nTrailer: x\r\n\r\n", close=False)
    response = connection.getresponse("GET")
    assert response.chunked and response.length is None
    assert body(response) == b"hello, the world" and connection.sock is not None


def test_a_chunked_body_cut_short_or_misframed_is_an_incomplete_read():
    for answer in (b"5\r\nhel", b"zz\r\nhello\r\n0\r\n\r\n", b"5\r\nhello\r\n"):
        connection, _ = connected(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + answer)
        with pytest.raises(http.client.IncompleteRead):
            body(connection.getresponse("GET"))


def test_without_length_or_chunks_the_body_ends_with_the_connection():
    connection, _ = connected(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-delimited body")
    response = connection.getresponse("GET")
    assert response.will_close and body(response) == b"close-delimited body"
    connection, _ = connected(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\nhello")  # no length that frames
    response = connection.getresponse("GET")
    assert response.length is None and response.will_close and body(response) == b"hello"


def test_a_body_short_of_its_length_ends_quietly_with_the_length_left():
    connection, _ = connected(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
    response = connection.getresponse("GET")
    assert body(response) == b"short" and response.length == 95


def test_head_204_and_304_have_no_body_whatever_their_length_says():
    for method, status in (("HEAD", b"200 OK"), ("GET", b"204 No Content"), ("GET", b"304 Not Modified")):
        connection, _ = connected(b"HTTP/1.1 " + status + b"\r\nContent-Length: 10\r\n\r\n", close=False)
        response = connection.getresponse(method)
        assert body(response) == b"" and not response.will_close and connection.sock is not None


def test_bytes_after_an_answer_that_nobody_asked_for_end_the_connection():
    connection, _ = connected(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokGARBAGE", close=False)
    response = connection.getresponse("GET")
    assert body(response) == b"ok" and response.will_close and connection.sock is None


def test_interim_answers_are_read_past_but_a_switch_of_protocols_is_the_answer():
    connection, _ = connected(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
                              b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal", close=False)
    response = connection.getresponse("GET")
    assert (response.status, body(response), response.getheader("Link"), response.will_close) == \
        (200, b"final", None, False)
    connection, _ = connected(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", close=False)
    assert connection.getresponse("GET").status == 101


def test_headers_keep_their_order_and_repeats_and_folded_lines_are_joined():
    connection, _ = connected(b"HTTP/1.1 200 OK\nVary: a\nX-Folded: one\n two\nvary:  b\nContent-Length: 0\n\n")
    response = connection.getresponse("GET")
    assert response.getheaders() == [("Vary", "a"), ("X-Folded", "one two"), ("vary", "b"), ("Content-Length", "0")]
    assert response.get_all("VARY") == ["a", "b"] and response.getheader("vary") == "a, b"


def test_keep_alive_follows_the_version_and_connection_header():
    for version, connection_header, closes in (("1.1", "", False), ("1.1", "Connection: close\r\n", True),
                                               ("1.0", "", True), ("1.0", "Connection: keep-alive\r\n", False)):
        connection, _ = connected(f"HTTP/{version} 200 OK\r\n{connection_header}Content-Length: 0\r\n\r\n".encode(),
                                  close=False)
        assert connection.getresponse("GET").will_close is closes, (version, connection_header)


@pytest.mark.parametrize("answer", [
    b"SSH-2.0-OpenSSH_9.6\r\n\r\n", b"HTTP/1.1 abc OK\r\n\r\n", "HTTP/1.1 2\u00b2\u00b3 OK\r\n\r\n".encode("latin-1"),
    b"HTTP/1.1 20 OK\r\n\r\n", b"HTTP/1.1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", b"HTTP/1.1 200 OK\r\n folded first\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX" + b"x" * 70000 + b": 1\r\n\r\n", b"HTTP/1.1 200 OK\r\n" + b"X-A: 1\r\n" * 101 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Le", b"",
])
def test_a_malformed_or_missing_head_is_an_http_exception(answer):
    connection, _ = connected(answer)
    with pytest.raises(http.client.HTTPException):
        connection.getresponse("GET")


def test_an_answer_that_never_came_is_remote_disconnected_which_the_relay_may_retry():
    connection, _ = connected(b"")
    with pytest.raises(http.client.RemoteDisconnected):
        connection.getresponse("GET")

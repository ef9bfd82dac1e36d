"""web/websocket.py ``checked_headers``: a request whose framing a server behind devhostd could
read another way is refused before anything reads it (a 400 saying what to change); any other
block comes out as pywsgi's own message, its values as sent."""
from __future__ import annotations

import io

import pytest

from web import header_parse
from web.websocket import FramingError, RequestHeaders, checked_headers


@pytest.fixture(autouse=True)
def installed(monkeypatch):
    """As the daemon runs: its parser in http.client's place (put back after each test)."""
    import http.client
    monkeypatch.setattr(http.client, "parse_headers", http.client.parse_headers)
    header_parse.install()


def checked(block: bytes):
    return checked_headers(io.BytesIO(block))


@pytest.mark.parametrize("block, says", [
    (b"Host: a\r\nX-Long: one\r\n two\r\n\r\n", "folded over lines"),
    (b"Host: a\r\nX-Long: one\r\n\ttwo\r\n\r\n", "folded over lines"),
    (b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "given twice with different values"),
    (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "both Transfer-Encoding and Content-Length"),
    (b"Content-Length: 5x\r\n\r\n", "must be a number"),
])
def test_a_block_that_could_be_framed_two_ways_is_refused_with_what_to_change(block, says):
    with pytest.raises(FramingError, match=says):
        checked(block)


def test_a_plain_block_comes_out_as_sent_with_a_repeated_equal_length_allowed():
    headers = checked(b"Host: page.localhost:8080\r\nAccept: */*\r\nContent-Length: 5\r\n"
                      b"Content-Length: 5\r\nX-Empty:\r\n\r\n")
    assert isinstance(headers, RequestHeaders)
    assert headers._headers == [("Host", "page.localhost:8080"), ("Accept", "*/*"), ("Content-Length", "5"),
                                ("Content-Length", "5"), ("X-Empty", "")]
    assert headers.get("host") == "page.localhost:8080" and headers.get_all("content-length") == ["5", "5"]
    assert list(headers.items()) == headers._headers  # the policy changes no value of a latin-1 block

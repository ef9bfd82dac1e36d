"""HTTP header blocks parsed without the email package (web/header_parse.py): whatever the block,
the message that comes out is the one ``http.client``'s own ``parse_headers`` gives (same class,
same stored pairs, same payload, same defects), and its limits and errors are http.client's."""
from __future__ import annotations

import http.client
import io

import pytest
from gevent.pywsgi import headers_factory
from hypothesis import given, settings
from hypothesis import strategies as st

from web import header_parse
from web.header_parse import IndexedMessage, parse_headers

try:
    from gevent.pywsgi import OldMessage
except ImportError:  # where pywsgi's message class is not exported
    OldMessage = None


def by_email(block: bytes, cls=http.client.HTTPMessage):
    return header_parse._email_parse_headers(io.BytesIO(block), _class=cls)


def same(block: bytes, cls=http.client.HTTPMessage):
    fast, slow = parse_headers(io.BytesIO(block), _class=cls), by_email(block, cls)
    assert type(fast) is type(slow)
    assert state(fast) == state(slow), block
    return fast


def state(message) -> dict:
    """A message's attributes, its defects by kind (a defect is equal only to itself) and the
    messages of its payload (a multipart's parts, an inner message) by their own state."""
    payload = message.get_payload()
    return {**vars(message), "defects": [type(defect) for defect in message.defects],
            "_payload": [state(part) for part in payload] if isinstance(payload, list) else payload}


def test_a_plain_block_gives_the_pairs_the_email_parser_stores():
    message = same(b"Content-Type: text/javascript\r\nContent-Length: 12\r\nX-Two:  a  b \r\n"
                   b"Cache-Control:no-cache\r\nEmpty: \r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nbody")
    assert message["content-length"] == "12"
    assert message["X-Two"] == "a  b "  # leading blanks go, trailing ones stay, as in the email parser
    assert message.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert message.get_payload() == ""


@pytest.mark.parametrize("block", [
    b"\r\n", b"", b"A: b\n\n", b"A: b\r\n",  # empty; bare LF; the stream ends with the block
    b"Folded: one\r\n two\r\n\r\n",  # obs-fold
    b"Bare: one\rtwo\r\n\r\n", b"Odd: a\x0bb\x85c\x1cd\r\n\r\n",  # where the email parser cuts a line
    b"no colon here\r\nA: b\r\n\r\n", b": no name\r\n\r\n", b"Spaced Name: x\r\n\r\n", b"Name : x\r\n\r\n",
    b"From somebody\r\nA: b\r\n\r\n", b"A: b\r\n\tcontinued\r\n\r\n", b" leading: blank\r\n\r\n",
    b"Content-Type: multipart/byteranges; boundary=X\r\n\r\n", b"content-type: Message/rfc822\r\n\r\n",
    b"Content-Type: \xa0multipart/mixed\r\n\r\n", b"Content-Type: message/delivery-status\r\n\r\n",
    b"Latin: caf\xe9 \xff\r\n\r\n", b"Last: line without its end",
])
def test_any_other_block_comes_out_as_the_email_parser_reads_it(block):
    same(block)


def test_pywsgis_message_class_is_kept():
    if OldMessage is None:
        pytest.skip("this gevent has no OldMessage")
    message = same(b"Host: a\r\nAccept: */*\r\n\r\n", OldMessage)
    assert message.status == ""


def test_the_limits_are_http_clients():
    with pytest.raises(http.client.LineTooLong):
        parse_headers(io.BytesIO(b"A: " + b"x" * 70000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        parse_headers(io.BytesIO(b"".join(b"H%d: v\r\n" % i for i in range(101)) + b"\r\n"))


def test_installed_it_is_what_pywsgi_and_http_client_call(monkeypatch):
    monkeypatch.setattr(http.client, "parse_headers", http.client.parse_headers)  # put back afterwards
    header_parse.install()
    assert http.client.parse_headers is parse_headers
    assert headers_factory(io.BytesIO(b"Host: a\r\n\r\n"))["Host"] == "a"


_LINE = st.one_of(
    st.tuples(st.sampled_from(["Host", "Content-Type", "content-type", "X-A", "X_A", "Set-Cookie", "From", "a!#~", ""]),
              st.sampled_from([":", ": ", ":\t ", " :", ""]),
              st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=12),
              st.sampled_from(["\r\n", "\n", "\r"])).map(lambda t: "".join(t)),
    st.sampled_from([" folded\r\n", "\tfolded\r\n", "multipart/x\r\n", "From x\r\n", "\r\n"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=6), st.sampled_from(["\r\n", "\n", ""]))
def test_any_block_of_lines_comes_out_the_same(lines, end):
    same(("".join(lines) + end).encode("iso-8859-1"))


_NAMES = ["host", "Host", "HOST", "content-length", "Content-Length", "connection", "Upgrade", "x-a", "absent"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Host", "host", "Content-Length", "Connection", "X-A", "x-a"]),
                          st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=8)), max_size=8),
       st.lists(st.sampled_from(_NAMES), max_size=3))
def test_an_indexed_message_answers_every_lookup_as_the_email_package(pairs, deleted):
    block = "".join(f"{name}: {value}\r\n" for name, value in pairs).encode("iso-8859-1") + b"\r\n"
    indexed, plain = parse_headers(io.BytesIO(block), _class=IndexedMessage), by_email(block)
    indexed.get("added")  # a lookup, then each change, then lookups again: the index follows every change
    indexed.set_raw("Added", "1")
    plain.set_raw("Added", "1")
    for name in deleted:
        indexed.get(name)
        del indexed[name]
        del plain[name]
    for name in _NAMES + ["added"]:
        assert indexed.get(name) == plain.get(name)
        assert indexed.get(name, "none") == plain.get(name, "none")
        assert indexed.get_all(name) == plain.get_all(name)
        assert (name in indexed) == (name in plain)
        assert indexed[name] == plain[name]
    assert indexed.items() == plain.items()


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=6), st.sampled_from(["\r\n", "\n", ""]))
def test_the_environs_header_pairs_are_pywsgis(lines, end):
    """DevhostHandler._headers (web/websocket.py) gives what pywsgi's own gives, for any block."""
    from gevent import pywsgi

    from web.websocket import DevhostHandler, RequestHeaders
    handler = DevhostHandler.__new__(DevhostHandler)  # no connection: only its headers are read
    handler.headers = parse_headers(io.BytesIO(("".join(lines) + end).encode("iso-8859-1")), _class=RequestHeaders)
    assert list(DevhostHandler._headers(handler)) == list(pywsgi.WSGIHandler._headers(handler))

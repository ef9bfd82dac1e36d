"""HTTP header blocks parsed as ``http.client.parse_headers`` parses them, without the email
package in the plain case.

Both heads of a proxied request go through ``http.client.parse_headers``: the browser's request
(pywsgi reads it so) and the upstream's answer (http.client). It hands each block to
``email.parser``, a feed parser built for mail: a sixth of the daemon's time on a page of
small modules (bench/proxy.py). A block of plain ``Name: value`` lines is read here straight
into the same message class, with the same (name, value) pairs the email parser stores and the
same empty payload; any other block (a folded line, a line that is no header, a line break
of the email parser's inside a line, a ``multipart/`` or ``message/`` type, which the email
parser reads a body for) goes to the email parser as before. What comes out is the same
either way (tests/unit/test_header_parse.py compares the two), so the limits, the errors and
the framing checks built on it (web/websocket.py's ``checked_headers``) are unchanged.

``install()`` puts it in place of ``http.client.parse_headers`` (which pywsgi's
``headers_factory`` and ``HTTPResponse.begin`` look up when they run); the daemon calls it
when it starts listening (web/server.py).
"""
from __future__ import annotations

import email.parser
import http.client
import re

# A block of plain header lines: each a field name of the characters the email parser takes for
# one (every printable but ":"), the colon, then a value with none of the characters at which the
# email parser (or str.splitlines) would cut a line; "\r\n" or "\n" at its end.
_PLAIN_BLOCK = re.compile(rb"(?:[!-9;-~]+:[^\r\n\x0b\x0c\x1c-\x1e\x85]*\r?\n)*")
_FIELD = re.compile(r"([!-9;-~]+):[ \t]*([^\r\n]*)\r?\n")
# A type the email parser may read a body for (its multipart parts, its inner message): any
# Content-Type line naming either word anywhere, so no way of spelling one is missed.
_STRUCTURED = re.compile(rb"^content-type:.*(?:multipart|message)", re.I | re.M)
_END = (b"\r\n", b"\n", b"")

_email_parse_headers = http.client.parse_headers


def parse_headers(fp, _class=http.client.HTTPMessage):
    """``http.client.parse_headers``: reads a header block from ``fp`` (with its limits on a
    line's length and the number of lines) and returns it as a ``_class`` message."""
    lines = http.client._read_headers(fp)
    fields = _plain_fields(lines)
    if fields is None:
        return email.parser.Parser(_class=_class).parsestr(b"".join(lines).decode("iso-8859-1"))
    message = _class()
    message._headers = fields  # the pairs set_raw would append one by one, in order
    message.set_payload("")  # as the email parser leaves a block with nothing after it
    return message


def _plain_fields(lines: list[bytes]):
    """The (name, value) pairs of a block of plain lines, as the email parser would store them
    (the value without its leading blanks and line end, latin-1 decoded), or None."""
    if lines[-1] not in _END:
        return None  # the stream ended inside a line
    block = b"".join(lines[:-1])
    if _PLAIN_BLOCK.fullmatch(block) is None or _STRUCTURED.search(block) is not None:
        return None
    return _FIELD.findall(block.decode("iso-8859-1"))


class IndexedMessage(http.client.HTTPMessage):
    """A message whose lookups by name (``get``, ``get_all``, ``in``, ``[]``) go through an index
    of lower-cased names, built at the first lookup, instead of a scan of every header per call:
    pywsgi looks up a request's headers about eight times, and each scan lower-cases all of
    them (a twentieth of a proxied module's cost). What comes back is the email package's own,
    value for value: the same first match, the same values in order, passed through the same
    policy. Each method that adds, replaces or deletes a header empties the index; the email
    package's ``set_boundary`` (a multipart body's, which rewrites the list itself) is not one
    a request's headers are ever given to, and is left as it is."""

    _index = None  # lower-cased name -> [(name, raw value), ...] in order

    def _lookup(self, name: str):
        index = self._index
        if index is None:
            index = {}
            for key, value in self._headers:
                index.setdefault(key.lower(), []).append((key, value))
            self._index = index
        return index.get(name.lower())

    def get(self, name, failobj=None):
        found = self._lookup(name)
        if not found:
            return failobj
        key, value = found[0]
        return self.policy.header_fetch_parse(key, value)

    def get_all(self, name, failobj=None):
        found = self._lookup(name)
        if not found:
            return failobj
        return [self.policy.header_fetch_parse(key, value) for key, value in found]

    def __getitem__(self, name):
        return self.get(name)

    def __contains__(self, name):
        return bool(self._lookup(name))

    def __setitem__(self, name, value):
        self._index = None
        super().__setitem__(name, value)

    def __delitem__(self, name):
        self._index = None
        super().__delitem__(name)

    def set_raw(self, name, value):
        self._index = None
        super().set_raw(name, value)

    def add_header(self, *args, **kwargs):
        self._index = None
        super().add_header(*args, **kwargs)

    def replace_header(self, *args, **kwargs):
        self._index = None
        super().replace_header(*args, **kwargs)


def install() -> None:
    """``http.client.parse_headers`` becomes ``parse_headers`` (once; idempotent)."""
    http.client.parse_headers = parse_headers

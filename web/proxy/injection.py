"""Where the panel's script goes into a page's HTML as it streams through the proxy: pure, fed
the (decoded) body chunk by chunk, holding back at most ``SNIFF_LIMIT`` bytes."""
from __future__ import annotations

import re

PANEL_SCRIPT = b'<script type="module" src="/__devhost__/static/chat/panel.js"></script>'
SNIFF_LIMIT = 64 * 1024  # how much HTML is held back while looking for <head>

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

"""Cutting text a client shows short: summaries, excerpts, titles.

Lengths are UTF-16 units, as a browser counts them. Every cut is linear in the text, and most
look only at as much of it as they keep: a request or a message may be megabytes on one line
(a minified bundle an agent writes), and these run on the hub.
"""
from __future__ import annotations

import re

ELLIPSIS = "…"
_WORD = re.compile(r"\S+")  # \S is what str.split() splits on, scanned in C


def units(text: str) -> int:
    """``text``'s length in UTF-16 units (a lone surrogate counts one, as in a browser)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def over(text: str, limit: int) -> bool:
    """More than ``limit`` units: encodes at most ``limit`` characters (each is one unit or two)."""
    return len(text) > limit or units(text) > limit


def clip(text: str, limit: int, front: bool = False) -> str:
    """``text`` cut to ``limit`` UTF-16 units with "…" (at the front for a path); a cut never
    splits a surrogate pair."""
    if not over(text, limit):
        return text
    keep = limit - 1
    if keep <= 0:
        return ELLIPSIS
    # Only the first (or last) ``keep`` characters can stay; cut their units to ``keep``.
    data = (text[-keep:] if front else text[:keep]).encode("utf-16-le", "surrogatepass")
    size = keep * 2
    if len(data) > size:
        if front:
            start = len(data) - size
            if _is_low(data, start) and _is_high(data, start - 2):
                start += 2  # the cut fell inside a pair: its low half goes too
            data = data[start:]
        else:
            if _is_high(data, size - 2) and _is_low(data, size):
                size -= 2  # the cut fell inside a pair: its high half goes too
            data = data[:size]
    kept = data.decode("utf-16-le", "surrogatepass")
    return ELLIPSIS + kept if front else kept + ELLIPSIS


def _is_high(data: bytes, at: int) -> bool:
    return len(data) >= at + 2 and 0xD8 <= data[at + 1] <= 0xDB


def _is_low(data: bytes, at: int) -> bool:
    return len(data) >= at + 2 and 0xDC <= data[at + 1] <= 0xDF


def collapsed(text: str, chars: int) -> str:
    """``" ".join(text.split())`` up to where it is longer than ``chars`` characters (so a cut
    to ``chars`` is the same as of the whole), without splitting the rest of ``text``."""
    words: list[str] = []
    size = -1
    for match in _WORD.finditer(text):
        words.append(match.group())
        size += len(words[-1]) + 1
        if size > chars:
            break
    return " ".join(words)


def first_line(text: str) -> str:
    end = text.find("\n")
    return text if end < 0 else text[:end]


def first_lines(text: str, lines: int) -> tuple[str, bool]:
    """``text``'s first ``lines`` lines, and whether it has more."""
    end = -1
    for _ in range(lines):
        end = text.find("\n", end + 1)
        if end < 0:
            return text, False
    return text[:end], True


TITLE_CHARS = 80


def suggested_title(text: str) -> str | None:
    """A chat's name from its first message: its first line, without the page context a
    screenshot adds, cut on a word at TITLE_CHARS."""
    context = text.find("\n\n[Page context]\n")
    own = text if context < 0 else text[:context]
    if own.startswith("[Page context]\n"):
        own = ""
    line = collapsed(first_line(own.strip()), TITLE_CHARS)
    if not line:
        return None
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS - 1].rsplit(" ", 1)[0] or line[:TITLE_CHARS - 1]
    return cut.rstrip(" ,.;:") + "…"

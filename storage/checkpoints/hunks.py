"""Reverting chosen hunks of a file (pure: exact bytes in, exact bytes out).

Lines are what git counts: the bytes split on b"\\n" only (a "\\r" stays in its line, so CRLF
files come back byte for byte), the last line possibly without its newline — the hunk then
says so with a "\\ No newline at end of file" line after it. A hunk "@@ -a,b +c,d @@" replaces
lines c..c+d-1 of the after-content with its before-side lines; hunks are applied from the
bottom up so that the line numbers of the ones above still hold. d == 0 (the turn only removed
lines) inserts after line c; b == 0 (the turn only added lines) removes them.
"""
from __future__ import annotations

from storage.checkpoints.patch import Hunk

NO_NEWLINE = b"\\"


class Mismatch(ValueError):
    """The after-content is not what the hunk was made from."""


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their b"\\n" (the last one without, when the data does not end in one)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def sides(hunk: Hunk) -> tuple[list[bytes], list[bytes]]:
    """(the before-side lines, the after-side lines) of a hunk, with their line ends."""
    before: list[bytes] = []
    after: list[bytes] = []
    for n, line in enumerate(hunk.lines):
        op = line[:1]
        if op == NO_NEWLINE:
            continue
        last = n + 1 < len(hunk.lines) and hunk.lines[n + 1][:1] == NO_NEWLINE
        text = line[1:] if last else line[1:] + b"\n"
        if op in (b" ", b"-"):
            before.append(text)
        if op in (b" ", b"+"):
            after.append(text)
    return before, after


def revert(after: bytes, hunks: list[Hunk]) -> bytes:
    """``after`` with ``hunks`` (of the diff before → after) put back to their before-side."""
    lines = split_lines(after)
    for hunk in sorted(hunks, key=lambda h: h.new_start, reverse=True):
        old, new = sides(hunk)
        start = hunk.new_start if hunk.new_count == 0 else hunk.new_start - 1
        if len(new) != hunk.new_count or len(old) != hunk.old_count or lines[start:start + len(new)] != new:
            raise Mismatch(hunk.header)
        lines[start:start + len(new)] = old
    return b"".join(lines)

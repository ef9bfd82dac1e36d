"""Reading JSON-lines transcripts that other processes append to, without reading them whole.

- ``Summaries`` keeps, per transcript, what a harness's ``Summary`` learnt from it and the
  offset it read up to: an unchanged file costs one stat; a grown one only its new bytes; a
  new, replaced or truncated one a window at its end (64 KiB, doubled up to 1 MiB until the
  summary has seen a record that tells the state). So a scan costs the same however large the
  transcripts are.
- ``Tail`` follows one transcript from an offset for the activity stream: it returns complete
  lines, keeps the unterminated remainder for the next read, notices a replaced or truncated
  file (and starts it again from the beginning, or ``REPLAY_MAX`` before its end), and skips
  lines beyond ``MAX_LINE``.
- Lines longer than ``LONG_LINE`` are never parsed during a scan: the harness reads what it
  needs from their first bytes (``Summary.feed_long``). The stream parses them ``shrink``-ed:
  every long string cut from the raw bytes, so the parse costs what a small record costs.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Callable

WINDOW = 64 * 1024
WINDOW_MAX = 1024 * 1024
INCREMENT_MAX = 1024 * 1024  # past this much growth a window is cheaper than reading it all
LONG_LINE = 256 * 1024
HEAD = 4096
MAX_LINE = 16 * 1024 * 1024
READ_BUDGET = 256 * 1024
REPLAY_MAX = 4 * 1024 * 1024  # a replayed session starts at most this far from its end
LOOK_BACK = READ_BUDGET  # how far before its end a transcript written since a stream opened is read
LOOK_BACK_SLACK_NS = 2_000_000_000  # mtimes of coarse file systems, and clocks read a moment apart


class Summary:
    """What a harness learns from a transcript's records, fed in file order. Subclasses keep
    the state-relevant last record, the name, and the time of the last activity."""

    def __init__(self):
        self.decisive = False  # saw a record that tells the state
        self.last_ms: int | None = None
        self.name: str | None = None

    def feed(self, record: dict) -> None:
        raise NotImplementedError

    def feed_long(self, head: bytes) -> None:
        """A record too long to parse; ``head`` is its first bytes."""

    def carry(self, older: "Summary") -> None:
        """Keeps what a fresh window may not reach (the name) from the summary it replaces."""
        if self.name is None:
            self.name = older.name


@dataclass
class _Entry:
    dev: int
    ino: int
    size: int
    mtime_ns: int
    done: int  # offset just after the last complete line read
    summary: Summary
    mark: bytes = b""  # the bytes just before ``done``: changed means rewritten in place


class Summaries:
    """Summaries per transcript path, updated incrementally; see the module docstring."""

    def __init__(self):
        self._entries: dict[str, _Entry] = {}

    def forget_except(self, paths) -> None:
        keep = set(paths)
        for path in [p for p in self._entries if p not in keep]:
            del self._entries[path]

    def get(self, path: str, factory: Callable[[], Summary]) -> Summary | None:
        """The summary of ``path``; None when it does not exist. Other OSErrors propagate."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._entries.pop(path, None)
            return None
        entry = self._entries.get(path)
        if entry and (entry.dev, entry.ino) == (st.st_dev, st.st_ino):
            if (entry.size, entry.mtime_ns) == (st.st_size, st.st_mtime_ns):
                return entry.summary
            if entry.done <= st.st_size and st.st_size - entry.done <= INCREMENT_MAX \
                    and _mark(path, entry.done) == entry.mark:
                entry.done = _feed_range(path, entry.done, st.st_size, entry.summary)
                entry.size, entry.mtime_ns, entry.mark = st.st_size, st.st_mtime_ns, _mark(path, entry.done)
                return entry.summary
        summary, done = _window(path, st.st_size, factory)
        if entry and (entry.dev, entry.ino) == (st.st_dev, st.st_ino):
            summary.carry(entry.summary)
        self._entries[path] = _Entry(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, done, summary,
                                     _mark(path, done))
        return summary


def _read(path: str, start: int, length: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.pread(fd, length, start)
    finally:
        os.close(fd)


MARK = 64


def _mark(path: str, offset: int) -> bytes:
    start = max(0, offset - MARK)
    return _read(path, start, offset - start) if offset else b""


def feed_lines(lines, summary: Summary) -> None:
    for line in lines:
        if len(line) > LONG_LINE:
            summary.feed_long(line[:HEAD])
            continue
        record = parse_line(line)
        if record is not None:
            summary.feed(record)


KEEP_STRING = 8192  # raw bytes kept of each string of a shrunk line (the stream cuts text at 4 KiB)
_BACKSLASH = 0x5C
SCAN_STEP = 256 * 1024  # bytes of one string scanned between two pauses
_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # a string's text up to its closing quote


def shrink(line: bytes, keep: int = KEEP_STRING, pause: Callable[[], None] | None = None) -> bytes | None:
    """``line`` with every JSON string longer than ``keep`` raw bytes cut to about ``keep``
    (never inside an escape or a UTF-8 sequence), so a huge record parses as a small one with
    all its fields. The big text is only scanned for its closing quote, in steps; it is never
    parsed (a parse holds the GIL for the whole line).
    ``pause`` is called every ``SCAN_STEP`` bytes of a string (a yield to the hub). None: a
    torn line."""
    pieces, done, position = [], 0, 0
    while True:
        opening = line.find(b'"', position)
        if opening < 0:
            break
        closing = _closing(line, opening + 1, pause)
        if closing < 0:
            return None
        if closing - opening - 1 > keep:
            cut = opening + 1 + keep
            while cut > opening + 1 and line[cut] & 0xC0 == 0x80:
                cut -= 1  # not inside a UTF-8 sequence
            escape = line.rfind(b"\\", max(opening + 1, cut - 6), cut)
            if escape >= 0:
                cut = escape  # not inside an escape (``\uXXXX`` is the longest)
                run = cut
                while run > opening + 1 and line[run - 1] == _BACKSLASH:
                    run -= 1
                if (cut - run) % 2:
                    cut -= 1  # a backslash whose escaped character was cut off
            pieces.append(line[done:cut])
            done = closing
        position = closing + 1
    pieces.append(line[done:])
    return b"".join(pieces)


def _closing(line: bytes, start: int, pause) -> int:
    """The offset of the quote closing the string whose text begins at ``start``; -1: none."""
    position = start
    while True:
        end = min(len(line), position + SCAN_STEP)
        position = _BODY.match(line, position, end).end()
        if position < end and line[position] == 0x22:
            return position
        if position >= len(line) - 1:
            return -1  # torn (or a backslash as the last byte)
        # the window ended (or split an escape at its end): on with the next one
        if pause is not None:
            pause()


def parse_line(line: bytes) -> dict | None:
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None  # a torn or foreign line: skipped, never fatal
    return record if isinstance(record, dict) else None


def _feed_range(path: str, start: int, end: int, summary: Summary) -> int:
    data = _read(path, start, end - start)
    cut = data.rfind(b"\n")
    if cut < 0:
        return start  # no complete line yet
    feed_lines(data[:cut].split(b"\n"), summary)
    return start + cut + 1


def _window(path: str, size: int, factory: Callable[[], Summary]) -> tuple[Summary, int]:
    window = WINDOW
    while True:
        start = max(0, size - window)
        data = _read(path, start, size - start)
        cut = data.rfind(b"\n")
        summary = factory()
        if cut >= 0:
            body = data[:cut]
            lines = body.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first line is cut by the window
            feed_lines(lines, summary)
            done = start + cut + 1
        else:
            done = start
        if summary.decisive or start == 0 or window >= WINDOW_MAX:
            return summary, done
        window *= 2


def read_first_line(path: str, limit: int = 1024 * 1024) -> dict | None:
    """The first record of a file (a session header), or None. Reads 64 KiB at a time."""
    size = WINDOW
    while True:
        data = _read(path, 0, size)
        cut = data.find(b"\n")
        if cut >= 0:
            return parse_line(data[:cut])
        if len(data) < size or size >= limit:
            return parse_line(data) if len(data) < size else None
        size = min(size * 4, limit)


class Tail:
    """Follows one file for the activity stream; see the module docstring."""

    def __init__(self, path: str, from_end: bool, since_ns: int | None = None):
        """``since_ns`` (with ``from_end``): the moment "the end" means. A file written since
        then may have gained lines after that moment and before this one: its last
        ``LOOK_BACK`` bytes are read too (``looked_back``), for the reader to keep what is newer."""
        self.path = path
        self.looked_back = False
        self._ident: tuple[int, int] | None = None
        self._offset = 0
        self._buffer = b""
        self._skipping = False
        self.restarted = False  # the file was replaced or truncated since the last read
        self._mark = b""
        self._to_end = False  # from the end, but the file could not be read yet: its end on first success
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return  # nothing there yet: what appears is new
        except OSError:
            self._to_end = from_end  # could not read it yet is not "nothing there"
            return
        self._ident = (st.st_dev, st.st_ino)
        if from_end and since_ns is not None and st.st_mtime_ns >= since_ns - LOOK_BACK_SLACK_NS:
            self._offset = max(0, st.st_size - LOOK_BACK)
            self._skipping = self._offset > 0  # up to the first line boundary
            self.looked_back = True
        elif from_end:
            self._offset = st.st_size
        elif st.st_size > REPLAY_MAX:
            self._offset = st.st_size - REPLAY_MAX
            self._skipping = True  # up to the first line boundary
        try:
            self._mark = _mark(path, self._offset)
        except OSError:
            self._mark = b""

    def _unchanged(self) -> bool:
        """Whether the bytes before the offset are still what was read (not rewritten in place)."""
        try:
            return _mark(self.path, self._offset)[-len(self._mark):] == self._mark if self._mark else True
        except OSError:
            return False

    def read(self, budget: int = READ_BUDGET) -> list[bytes]:
        """Complete lines appended since the last read (at most about ``budget`` bytes)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return []
        ident = (st.st_dev, st.st_ino)
        if self._to_end:
            try:
                self._mark = _mark(self.path, st.st_size)
            except OSError:
                return []
            self._ident, self._offset, self._to_end = ident, st.st_size, False
            return []
        if self._ident is None:
            self._ident = ident
        elif ident != self._ident or st.st_size < self._offset or not self._unchanged():
            # Read again from the start, but at most REPLAY_MAX from the end (as a replay does).
            self._offset = max(0, st.st_size - REPLAY_MAX)
            self._ident, self._buffer, self._skipping, self._mark = ident, b"", self._offset > 0, b""
            self.restarted = True
        if st.st_size <= self._offset:
            return []
        try:
            chunk = _read(self.path, self._offset, min(budget, st.st_size - self._offset))
        except OSError:
            return []
        self._offset += len(chunk)
        self._mark = (self._mark + chunk)[-MARK:]
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()
        if self._skipping:
            if not lines:
                self._buffer = b""  # still inside the line being skipped
                return []
            self._skipping = False
            lines = lines[1:]
        if len(self._buffer) > MAX_LINE:
            self._buffer, self._skipping = b"", True  # too long to be worth reading: skipped
        return lines

    @property
    def pending(self) -> bool:
        """Whether more bytes wait than the last read took."""
        try:
            return os.stat(self.path).st_size > self._offset
        except OSError:
            return False

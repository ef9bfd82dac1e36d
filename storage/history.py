"""A session's native event history: every CLI frame, in order, on disk.

The file is a private temporary file that is unlinked as soon as it is opened, so its space
is freed when the daemon closes it, even after a crash. Each record is msgpack of
``(sequence, raw_json_bytes)``: the CLI's own line, byte for byte, so a snapshot never
re-encodes anything. Only the record offsets live in memory (8 bytes an event), and readers
use ``os.pread`` so a socket can stream a snapshot while the chat keeps appending.
"""
from __future__ import annotations

import os
import tempfile
from array import array
from typing import Iterator

import msgpack


class HistoryWriteError(Exception):
    """The history could not be written; the caller must stop the session, not drop events."""


class EventHistory:
    """``base``: the sequence the events before this history's first had (a history released
    and started again goes on numbering where the last one ended)."""

    def __init__(self, fd: int | None = None, directory: str | None = None, base: int = 0):
        # An injected fd lets tests hand in a file that really fails (e.g. /dev/full).
        self._fd = fd if fd is not None else _private_unlinked_file(directory)
        self.base = base
        self._offsets = array("Q")
        self._packer = msgpack.Packer(use_bin_type=True)  # one for every record: packb makes one per call
        self._end = 0
        self._closed = False

    @property
    def last_sequence(self) -> int:
        return self.base + len(self._offsets)

    def append(self, raw_json: bytes) -> int:
        """Stores one event and returns its sequence (from 1)."""
        return self.append_many((raw_json,))

    def append_many(self, raws) -> int:
        """Stores events in order with one write; returns the sequence of the first (from 1).

        All or nothing: after a failed or short write none of them counts as stored, and what
        was written past the end is overwritten by the next append.
        """
        if self._closed:
            raise HistoryWriteError("the event history is closed")
        first = self.last_sequence + 1
        packed = bytearray()
        starts = []
        for sequence, raw_json in enumerate(raws, first):
            starts.append(self._end + len(packed))
            packed += self._packer.pack((sequence, raw_json))
        try:
            written = os.pwrite(self._fd, packed, self._end)
        except OSError as exc:
            raise HistoryWriteError(f"could not write the event history: {exc.strerror or exc}") from exc
        if written != len(packed):
            raise HistoryWriteError("could not write the event history: short write (disk full?)")
        self._offsets.extend(starts)
        self._end += len(packed)
        return first

    def read(self, first: int = 1, last: int | None = None, chunk_bytes: int = 1 << 20) -> Iterator[tuple[int, bytes]]:
        """Yields ``(sequence, raw_json)`` for ``first..last`` (inclusive), reading from disk.

        ``last`` is fixed by the caller (the chat's sequence at attach time) so appends that
        happen while this runs are not read twice.
        """
        last = self.last_sequence if last is None else min(last, self.last_sequence)
        first = max(first, self.base + 1)
        return _read(self._fd, self._offsets, self._end, first - self.base, last - self.base, chunk_bytes)

    def reader(self) -> "HistoryReader":
        """Events base+1..now through a file descriptor of their own: valid after this history
        closes."""
        return HistoryReader(os.dup(self._fd), self._offsets, self._end, self.last_sequence, self.base)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                os.close(self._fd)
            except OSError:
                pass


def _private_unlinked_file(directory: str | None) -> int:
    # TemporaryFile uses O_TMPFILE where it can and unlinks at once otherwise; mode 0600.
    handle = tempfile.TemporaryFile(prefix="devhostd-history-", dir=directory, buffering=0)
    fd = os.dup(handle.fileno())
    handle.close()
    return fd


class HistoryReader:
    """A snapshot of a history: events base+1..last, readable until closed. ``released``: the
    events up to ``base`` were released (the snapshot says so)."""

    def __init__(self, fd: int, offsets: array, end: int, last: int, base: int = 0):
        self._fd = fd
        self._offsets = offsets  # append-only and shared: entries up to ``last`` never change
        self._end = end
        self.last_sequence = last
        self.base = base
        self.released = base > 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        return _read(self._fd, self._offsets, self._end, 1, self.last_sequence - self.base, 1 << 20)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class ReleasedReader:
    """The snapshot of a history that was released: no events, up to ``last``."""

    def __init__(self, last: int):
        self.last_sequence = last
        self.base = last
        self.released = last > 0

    def __iter__(self):
        return iter(())

    def close(self) -> None:
        pass


def _read(fd: int, offsets: array, end: int, first: int, last: int, chunk_bytes: int):
    """Records ``first..last`` by their place in this file (1-based)."""
    if first > last:
        return
    start = offsets[first - 1]
    stop = offsets[last] if last < len(offsets) else end
    unpacker = msgpack.Unpacker(raw=False, use_list=False, max_buffer_size=64 << 20)
    position = start
    while position < stop:
        data = os.pread(fd, min(chunk_bytes, stop - position), position)
        if not data:
            raise OSError("event history ended early")
        position += len(data)
        unpacker.feed(data)
        for sequence, raw in unpacker:
            yield sequence, raw

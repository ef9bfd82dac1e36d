"""storage.history: the per-session event history on an unlinked temp file."""
import json
import os

import pytest

from storage.history import EventHistory, HistoryWriteError


def test_sequences_start_at_one_and_payloads_come_back_unchanged():
    history = EventHistory()
    try:
        raws = [json.dumps({"type": "x", "n": n, "text": "é" * n}).encode() for n in range(5)]
        assert [history.append(raw) for raw in raws] == [1, 2, 3, 4, 5]
        assert list(history.read()) == list(enumerate(raws, start=1))
        assert list(history.read(3, 4)) == [(3, raws[2]), (4, raws[3])]
        assert list(history.read(6)) == []
    finally:
        history.close()


def test_the_file_is_unlinked_as_soon_as_it_opens():
    history = EventHistory()
    try:
        target = os.readlink(f"/proc/self/fd/{history._fd}")
        assert target.endswith("(deleted)") or "O_TMPFILE" in target or target.startswith("/tmp/#")
    finally:
        history.close()


def test_reading_across_many_chunks_keeps_order():
    history = EventHistory()
    try:
        raw = b'{"type":"big","blob":"' + b"a" * 5000 + b'"}'
        for _ in range(300):
            history.append(raw)
        seen = [seq for seq, _ in history.read(chunk_bytes=4096)]
        assert seen == list(range(1, 301))
    finally:
        history.close()


def test_a_read_fixed_at_attach_time_does_not_see_later_appends():
    history = EventHistory()
    try:
        history.append(b'{"n":1}')
        history.append(b'{"n":2}')
        reader = history.read(1, history.last_sequence)
        assert next(reader) == (1, b'{"n":1}')
        history.append(b'{"n":3}')
        assert list(reader) == [(2, b'{"n":2}')]
    finally:
        history.close()


def test_a_failing_disk_raises_instead_of_dropping_the_event():
    fd = os.open("/dev/full", os.O_RDWR)
    history = EventHistory(fd=fd)
    try:
        with pytest.raises(HistoryWriteError, match="could not write the event history"):
            history.append(b'{"type":"assistant"}')
        assert history.last_sequence == 0
    finally:
        history.close()


def test_append_after_close_is_refused():
    history = EventHistory()
    history.close()
    with pytest.raises(HistoryWriteError):
        history.append(b"{}")


def test_a_reader_keeps_its_snapshot_readable_after_the_history_closes():
    history = EventHistory()
    history.append(b'{"n":1}')
    history.append(b'{"n":2}')
    reader = history.reader()
    history.append(b'{"n":3}')  # after the snapshot: not part of it
    history.close()
    try:
        assert list(reader) == [(1, b'{"n":1}'), (2, b'{"n":2}')]
    finally:
        reader.close()


def test_append_many_stores_a_batch_with_one_write_in_order_after_single_appends():
    history = EventHistory()
    try:
        assert history.append(b'{"n":0}') == 1
        batch = [b'{"n":%d}' % n for n in range(1, 6)]
        assert history.append_many(batch) == 2  # the sequence of the batch's first event
        assert history.append(b'{"n":6}') == 7
        assert [raw for _, raw in history.read()] == [b'{"n":%d}' % n for n in range(7)]
    finally:
        history.close()


def test_a_failed_batch_counts_none_of_its_events():
    history = EventHistory(fd=os.open("/dev/full", os.O_RDWR))
    try:
        with pytest.raises(HistoryWriteError):
            history.append_many([b'{"a":1}', b'{"b":2}'])
        assert history.last_sequence == 0
    finally:
        history.close()

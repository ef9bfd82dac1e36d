"""Transcript reading: summaries from windows and increments, tails from offsets."""
from __future__ import annotations

import json
import os
import time

from actors.agents import jsonl
from actors.agents.jsonl import Summaries, Summary, Tail


class Recorder(Summary):
    """Records what it is fed; a record {"decisive": true} tells the state."""

    fed: list = []

    def __init__(self):
        super().__init__()
        self.records = []
        self.long_heads = []

    def feed(self, record):
        self.records.append(record)
        if record.get("decisive"):
            self.decisive = True
        if record.get("name"):
            self.name = record["name"]

    def feed_long(self, head):
        self.long_heads.append(head)


def _write(path, *records, raw=b""):
    with open(path, "ab") as handle:
        for record in records:
            handle.write(json.dumps(record).encode() + b"\n")
        handle.write(raw)


def test_an_unchanged_file_is_not_read_again_and_growth_reads_only_new_lines(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1, "decisive": True}, {"n": 2})
    summaries = Summaries()
    first = summaries.get(str(path), Recorder)
    assert [r["n"] for r in first.records] == [1, 2]
    reads = []
    real = jsonl._read
    monkeypatch.setattr(jsonl, "_read",
                        lambda p, start, length: reads.append((start, length)) or real(p, start, length))
    assert summaries.get(str(path), Recorder) is first and reads == []
    _write(path, {"n": 3}, raw=b'{"n": 4')  # a line still being written
    again = summaries.get(str(path), Recorder)
    assert again is first and [r["n"] for r in again.records] == [1, 2, 3]
    grown = len(b'{"n": 3}\n{"n": 4')
    assert (path.stat().st_size - grown, grown) in reads
    assert sum(length for _, length in reads) <= grown + 2 * jsonl.MARK  # the new bytes, and a check
    _write(path, raw=b"}\n")
    assert [r["n"] for r in summaries.get(str(path), Recorder).records] == [1, 2, 3, 4]


def test_a_new_file_costs_a_window_at_its_end_however_large(tmp_path):
    path = tmp_path / "big.jsonl"
    filler = json.dumps({"filler": "x" * 1000}).encode() + b"\n"
    with open(path, "wb") as handle:
        handle.write(filler * 20_000)  # ~20 MB of history
        handle.write(json.dumps({"n": "last", "decisive": True}).encode() + b"\n")
    summary = Summaries().get(str(path), Recorder)
    assert summary.records[-1] == {"n": "last", "decisive": True}
    assert len(summary.records) < 70  # one 64 KiB window, not the file


def test_the_window_doubles_until_a_decisive_record_up_to_its_cap(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": "old", "decisive": True})
    _write(path, *[{"filler": "y" * 1000}] * 200)  # ~200 KiB of bookkeeping after it
    summary = Summaries().get(str(path), Recorder)
    assert summary.decisive and summary.records[0]["n"] == "old"
    path2 = tmp_path / "u.jsonl"
    _write(path2, {"n": "older", "decisive": True})
    _write(path2, *[{"filler": "z" * 1000}] * 1500)  # 1.5 MB: past the cap
    summary = Summaries().get(str(path2), Recorder)
    assert not summary.decisive


def test_long_lines_are_never_parsed_during_a_scan(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"type": "user", "content": "a" * (jsonl.LONG_LINE + 10)}, {"n": 2, "decisive": True})
    summary = Summaries().get(str(path), Recorder)
    assert [r.get("n") for r in summary.records] == [2]


def test_long_lines_in_increments_go_to_feed_long(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1, "decisive": True})
    summaries = Summaries()
    summary = summaries.get(str(path), Recorder)
    _write(path, {"type": "user", "content": "a" * (jsonl.LONG_LINE + 10)})
    summaries.get(str(path), Recorder)
    assert len(summary.long_heads) == 1 and summary.long_heads[0].startswith(b'{"type": "user"')


def test_a_replaced_file_is_read_afresh_and_keeps_its_name_only_if_same_inode(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1, "decisive": True, "name": "kept"})
    summaries = Summaries()
    summaries.get(str(path), Recorder)
    replacement = tmp_path / "new.jsonl"
    _write(replacement, {"n": 9, "decisive": True})
    os.replace(replacement, path)
    summary = summaries.get(str(path), Recorder)
    assert [r["n"] for r in summary.records] == [9] and summary.name is None
    with open(path, "wb") as handle:  # truncated and rewritten in place
        handle.write(json.dumps({"n": 10, "decisive": True}).encode() + b"\n")
    summary = summaries.get(str(path), Recorder)
    assert [r["n"] for r in summary.records] == [10]


def test_a_missing_file_has_no_summary(tmp_path):
    assert Summaries().get(str(tmp_path / "nope.jsonl"), Recorder) is None


def test_torn_and_foreign_lines_are_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, raw=b'{"n": 1}\nnot json\n[1, 2]\n\n{"n": 2, "decisive": true}\n')
    assert [r["n"] for r in Summaries().get(str(path), Recorder).records] == [1, 2]


def test_first_line_of_a_file_with_a_long_header(tmp_path):
    path = tmp_path / "rollout.jsonl"
    _write(path, {"type": "session_meta", "payload": {"base_instructions": "b" * 100_000}}, {"n": 2})
    assert jsonl.read_first_line(str(path))["type"] == "session_meta"
    assert jsonl.read_first_line(str(path), limit=70_000) is None


# --------------------------------------------------------------------------- Tail

def test_a_tail_from_the_end_returns_only_what_is_appended_and_holds_partial_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1})
    tail = Tail(str(path), from_end=True)
    assert tail.read() == []
    _write(path, {"n": 2}, raw=b'{"n": ')
    assert tail.read() == [b'{"n": 2}']
    _write(path, raw=b'3}\n')
    assert tail.read() == [b'{"n": 3}']


def test_a_tail_from_the_end_as_of_an_earlier_moment_looks_back_only_if_written_since(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "LOOK_BACK", 100)
    path = tmp_path / "t.jsonl"
    _write(path, *[{"n": n} for n in range(100)])
    opened_ns = time.time_ns()
    os.utime(path, ns=(opened_ns - 10 * 10**9,) * 2)  # untouched since well before the moment
    assert Tail(str(path), from_end=True, since_ns=opened_ns).read() == []
    os.utime(path, ns=(opened_ns,) * 2)  # written since: the last lines are read (whole ones)
    tail = Tail(str(path), from_end=True, since_ns=opened_ns)
    lines = tail.read()
    assert tail.looked_back and 5 <= len(lines) <= 12 and json.loads(lines[-1]) == {"n": 99}
    assert all(line.startswith(b"{") for line in lines)


def test_a_tail_from_the_start_reads_everything_in_budgets(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, *[{"n": n} for n in range(1000)])
    tail = Tail(str(path), from_end=False)
    lines = []
    while tail.pending:
        lines += tail.read(budget=1000)
    assert [json.loads(line)["n"] for line in lines] == list(range(1000))


def test_a_tail_restarts_on_replacement_or_truncation(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1}, {"n": 2})
    tail = Tail(str(path), from_end=True)
    with open(path, "wb") as handle:
        handle.write(b'{"n": 1}\n')
    assert tail.read() == [b'{"n": 1}'] and tail.restarted
    other = tmp_path / "o.jsonl"
    _write(other, {"n": 7})
    os.replace(other, path)
    tail.restarted = False
    assert tail.read() == [b'{"n": 7}'] and tail.restarted


def test_a_tail_notices_a_rewrite_in_place_that_grew(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 1})
    tail = Tail(str(path), from_end=True)
    with open(path, "wb") as handle:  # pi rewrites its file whole, sometimes longer
        handle.write(b'{"n": 100}\n{"n": 2}\n')
    assert tail.read() == [b'{"n": 100}', b'{"n": 2}'] and tail.restarted


def test_a_tail_skips_a_line_beyond_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE", 1000)
    path = tmp_path / "t.jsonl"
    tail = Tail(str(path), from_end=False)
    _write(path, raw=b"x" * 1500)
    assert tail.read() == []
    _write(path, raw=b"x" * 500 + b"\n" + b'{"n": 1}\n')
    assert tail.read() == [b'{"n": 1}']


def test_a_replay_starts_at_most_replay_max_from_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "REPLAY_MAX", 100)
    path = tmp_path / "t.jsonl"
    _write(path, *[{"n": n} for n in range(100)])
    tail = Tail(str(path), from_end=False)
    lines = tail.read()
    assert 5 <= len(lines) <= 12 and json.loads(lines[-1]) == {"n": 99}
    assert all(line.startswith(b"{") for line in lines)  # no cut line at the start


def test_a_tail_of_a_file_not_yet_written(tmp_path):
    path = tmp_path / "later.jsonl"
    tail = Tail(str(path), from_end=False)
    assert tail.read() == [] and not tail.pending
    _write(path, {"n": 1})
    assert tail.read() == [b'{"n": 1}']


def test_a_restart_starts_at_most_replay_max_from_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "REPLAY_MAX", 100)
    path = tmp_path / "t.jsonl"
    _write(path, {"n": 0})
    tail = Tail(str(path), from_end=True)
    other = tmp_path / "o.jsonl"
    _write(other, *[{"n": n} for n in range(100)])
    os.replace(other, path)
    lines = tail.read()
    assert tail.restarted and 5 <= len(lines) <= 12 and json.loads(lines[-1]) == {"n": 99}
    assert all(line.startswith(b"{") for line in lines)


def test_shrink_cuts_long_strings_never_inside_an_escape_or_a_character():
    for text in ["a" * 30 + "\\" * 40, "é" * 40, "\u00e9" * 40, "\\\"" * 40, "x\\" * 40]:
        for keep, ascii_only in [(keep, flag) for keep in range(5, 40) for flag in (False, True)]:
            line = json.dumps({"t": "x", "s": text, "n": [1, {"k": "v"}], "after": True},
                              ensure_ascii=ascii_only).encode()
            shrunk = jsonl.shrink(line, keep=keep)
            record = json.loads(shrunk)
            assert record["after"] is True and record["n"] == [1, {"k": "v"}] and record["t"] == "x"
            assert text.startswith(record["s"]) and len(record["s"]) < len(text)
    assert jsonl.shrink(b'{"a": "torn') is None

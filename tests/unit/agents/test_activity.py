"""One stream's watching: from the end for agents already running, replay for later ones."""
from __future__ import annotations

import json
import os

from actors.agents import events as ev
from actors.agents.activity import Watch
from actors.agents.rows import Found
from tests.sinks import Sink
from tests.agent_fakes import append_jsonl, pi_header, pi_message


def _agent(pid, path, cwd="/w/p", start=1):
    return Found("pi", pid, start, cwd, transcript=str(path) if path else None)


def _kinds(messages):
    return [(m["pid"], m["eventType"], m.get("text")) for m in messages]


def test_agents_running_at_open_are_followed_from_the_end(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="before the stream", ms=ev.now_ms() - 1000))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(1, path)])
    assert watch.read() == []
    append_jsonl(path, pi_message("user", text="after"), pi_message("assistant", text="done"))
    assert _kinds(watch.read()) == [(1, "turn_start", "after"), (1, "turn_end", "done")]


def test_the_end_is_the_one_at_the_opening_not_when_the_opening_scan_finished(tmp_path):
    """The page reads "live" once its upgrade is answered; the opening scan may finish later.
    What an agent wrote in between is new, not history."""
    path = tmp_path / "a.jsonl"
    opened = ev.now_ms()
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="history", ms=opened - 1000),
                 pi_message("user", text="written during the opening scan", ms=opened + 5))
    watch = Watch("/w/p", Sink(), opened_ms=opened)
    watch.start([_agent(1, path)])
    assert _kinds(watch.read()) == [(1, "turn_start", "written during the opening scan")]
    append_jsonl(path, pi_message("assistant", text="done"))
    assert _kinds(watch.read()) == [(1, "turn_end", "done")]


def test_an_agent_that_appears_later_is_replayed_from_the_start(tmp_path):
    old = tmp_path / "old.jsonl"
    append_jsonl(old, pi_header("/w/p"), pi_message("user", text="earlier work"), pi_message("assistant", text="ok"))
    watch = Watch("/w/p", Sink())
    watch.start([])
    messages = watch.update([_agent(2, old)])
    assert _kinds(messages)[0][:2] == (2, "run_started")
    messages += watch.read()
    assert _kinds(messages)[1:] == [(2, "turn_start", "earlier work"), (2, "turn_end", "ok")]


def test_a_session_switch_replays_the_new_session(tmp_path):
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    append_jsonl(first, pi_header("/w/p"))
    append_jsonl(second, pi_header("/w/p"), pi_message("user", text="resumed session"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(3, first)])
    append_jsonl(first, pi_message("user", text="last words of the first"))
    messages = watch.update([_agent(3, second)]) + watch.read()
    assert _kinds(messages) == [(3, "turn_start", "last words of the first"), (3, "turn_start", "resumed session")]


def test_a_transcript_appearing_after_open_is_read_whole(tmp_path):
    path = tmp_path / "late.jsonl"
    watch = Watch("/w/p", Sink())
    watch.start([_agent(4, None)])
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="first prompt"))
    assert _kinds(watch.update([_agent(4, path)]) + watch.read()) == [(4, "turn_start", "first prompt")]


def test_agents_elsewhere_are_not_followed_and_leaving_is_said(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/other"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(5, path, cwd="/w/other")])
    append_jsonl(path, pi_message("user", text="not ours"))
    assert watch.read() == [] and watch.update([_agent(5, path, cwd="/w/other")]) == []
    inside = tmp_path / "b.jsonl"
    append_jsonl(inside, pi_header("/w/p/sub"))
    watch.start([_agent(6, inside, cwd="/w/p/sub")])
    append_jsonl(inside, pi_message("user", text="bye"))
    assert _kinds(watch.update([])) == [(6, "turn_start", "bye"), (6, "run_exited", None)]


def test_a_rewritten_file_does_not_repeat_what_was_sent(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(7, path)])
    sent = pi_message("user", text="sent once", ms=1_800_000_000_000)
    append_jsonl(path, sent)
    assert len(watch.read()) == 1
    rewritten = tmp_path / "rewrite.jsonl"
    append_jsonl(rewritten, pi_header("/w/p"), sent, pi_message("assistant", text="new", ms=1_800_000_001_000))
    os.replace(rewritten, path)
    assert _kinds(watch.read()) == [(7, "turn_end", "new")]


def test_long_lines_are_parsed_and_their_text_cut(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(8, path)])
    append_jsonl(path, pi_message("toolResult", text="x" * 600_000, tool="bash"))
    messages = []
    for _ in range(10):
        messages += watch.read()
    [message] = messages
    assert message["eventType"] == "tool_result" and len(message["text"].encode()) <= 4096
    assert json.dumps(message)


def test_a_moment_of_not_knowing_the_transcript_does_not_replay_it(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="history", ms=ev.now_ms() - 1000))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(9, path)])
    assert watch.update([_agent(9, None)]) == []  # e.g. a registry read mid-write
    assert watch.update([_agent(9, path)]) == []  # the same transcript again: no replay
    append_jsonl(path, pi_message("user", text="new"))
    assert _kinds(watch.read()) == [(9, "turn_start", "new")]


def test_agents_of_a_harness_that_could_not_be_scanned_are_not_taken_as_gone(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(10, path)])
    assert watch.update([], failed={"pi": "its scanner failed"}) == []
    assert _kinds(watch.update([])) == [(10, "run_exited", None)]


def _drain(watch, rounds=20):
    messages = []
    for _ in range(rounds):
        messages += watch.read()
    return messages


def test_a_replaced_large_transcript_sends_only_the_new_record(tmp_path):
    path = tmp_path / "a.jsonl"
    old = [pi_message("user", text=f"old {n} " + "x" * 2000, ms=1_700_000_000_000 + n) for n in range(300)]
    append_jsonl(path, pi_header("/w/p"), *old)
    watch = Watch("/w/p", Sink())
    watch.start([_agent(11, path)])
    assert watch.read() == []
    replacement = tmp_path / "new.jsonl"
    append_jsonl(replacement, pi_header("/w/p"), *old, pi_message("user", text="the new one"))
    os.replace(replacement, path)
    assert _kinds(_drain(watch)) == [(11, "turn_start", "the new one")]


def test_a_rewrite_in_place_before_anything_was_sent_replays_no_history(tmp_path):
    path = tmp_path / "a.jsonl"
    old = [pi_message("user", text=f"old {n}", ms=1_700_000_000_000 + n) for n in range(50)]
    append_jsonl(path, pi_header("/w/p"), *old)
    watch = Watch("/w/p", Sink())
    watch.start([_agent(12, path)])
    assert watch.read() == []
    with open(path, "w", encoding="utf-8"):
        pass
    append_jsonl(path, pi_header("/w/p"), *old[:10], {"type": "label", "id": "abcd0001",
                                                      "timestamp": "2023-11-14T22:13:20.010Z"}, *old[10:])
    assert _drain(watch) == []


def test_a_rewrite_keeps_new_records_of_the_same_millisecond(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(13, path)])
    sent = pi_message("user", text="sent once", ms=1_800_000_000_000)
    append_jsonl(path, sent)
    assert len(watch.read()) == 1
    rewritten = tmp_path / "rewrite.jsonl"
    append_jsonl(rewritten, pi_header("/w/p"), sent, pi_message("assistant", text="same ms", ms=1_800_000_000_000))
    os.replace(rewritten, path)
    assert _kinds(_drain(watch)) == [(13, "turn_end", "same ms")]


def test_huge_lines_are_never_parsed_whole(tmp_path, monkeypatch):
    from actors.agents import jsonl
    parsed = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, *a, **k: parsed.append(len(text)) or loads(text, *a, **k))
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(14, path)])
    output = "\u00e9\"quoted\" \\ line\n" * 40_000 + "end"
    record = pi_message("toolResult", text=output, tool="bash", is_error=True)
    record["message"]["details"] = {"stdout": output}  # a second big string, and fields after both
    append_jsonl(path, record)
    messages = _drain(watch, rounds=40)
    [message] = messages
    assert message["eventType"] == "tool_result" and message["isError"] is True and message["toolName"] == "bash"
    assert message["text"].startswith(output[:1000]) and len(message["text"].encode()) <= 4096
    assert parsed and max(parsed) <= jsonl.LONG_LINE


def test_agents_of_a_harness_not_read_at_open_are_not_replayed(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="history", ms=ev.now_ms() - 1000))
    watch = Watch("/w/p", Sink())
    watch.start([], failed={"pi": "its scanner failed"})
    assert watch.update([], failed={"pi": "its scanner failed"}) == []
    assert watch.update([_agent(15, path)]) + watch.read() == []  # there at the opening: no history
    append_jsonl(path, pi_message("user", text="new"))
    assert _kinds(watch.read()) == [(15, "turn_start", "new")]
    later = tmp_path / "b.jsonl"
    append_jsonl(later, pi_header("/w/p"), pi_message("user", text="a new agent"))
    assert [k[1] for k in _kinds(watch.update([_agent(15, path), _agent(16, later)]) + watch.read())] == [
        "run_started", "turn_start"]


def test_a_whole_failed_scan_takes_no_agent_as_gone(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(17, path)])
    assert watch.update([], failed={"every harness": "the scan failed"}) == []


def test_a_transcript_not_readable_at_open_is_followed_from_its_end(tmp_path, monkeypatch):
    from actors.agents import jsonl
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"), pi_message("user", text="history", ms=ev.now_ms() - 1000))
    stat = os.stat

    def denied(target, *args, **kwargs):
        if str(target) == str(path):
            raise PermissionError(13, "denied")
        return stat(target, *args, **kwargs)

    monkeypatch.setattr(jsonl.os, "stat", denied)
    watch = Watch("/w/p", Sink())
    watch.start([_agent(18, path)])
    assert watch.read() == []
    monkeypatch.setattr(jsonl.os, "stat", stat)
    assert watch.read() == []
    append_jsonl(path, pi_message("user", text="new"))
    assert _kinds(watch.read()) == [(18, "turn_start", "new")]


def test_a_tick_reads_on_while_more_waits(tmp_path):
    path = tmp_path / "a.jsonl"
    append_jsonl(path, pi_header("/w/p"))
    watch = Watch("/w/p", Sink())
    watch.start([_agent(19, path)])
    append_jsonl(path, *[pi_message("user", text=f"prompt {n} " + "x" * 1000) for n in range(1000)])  # ~1.3 MiB
    assert len(watch.read()) == 1000 and not watch.pending

"""Codex: rollout state, rollout records as events (both record formats: 0.169's and the earlier one), names, roles."""
from __future__ import annotations

import json

from actors.agents import codex
from actors.harness.codex.records import CodexParser
from tests.agent_fakes import FIXTURES

CX = FIXTURES / "codex"


def _records(name):
    return [json.loads(line) for line in (CX / name).read_text().splitlines()]


def _summary(records):
    summary = codex.CodexSummary()
    for record in records:
        summary.feed(record)
    return summary


def test_state_from_real_rollouts():
    assert codex.state(_summary(_records("exec-rollout-with-resume.jsonl"))) == "idle"
    assert codex.state(_summary(_records("tui-approval-rollout.jsonl"))) == "idle"
    # The TUI showed its approval dialog: the rollout ended at an escalated exec_command.
    assert codex.state(_summary(_records("waiting-on-approval-tail.jsonl"))) == "waiting"
    assert codex.state(None) == "unknown"


def test_state_mid_turn_and_fresh():
    records = _records("exec-rollout-with-resume.jsonl")
    first_call = next(i for i, r in enumerate(records) if r["payload"].get("type") == "function_call")
    assert codex.state(_summary(records[:first_call + 1])) == "working"  # not escalated: it runs
    assert codex.state(_summary(records[:first_call])) == "working"
    assert codex.state(_summary(records[:1])) == "idle"  # a thread with no turn yet
    never = [r for r in _records("waiting-on-approval-tail.jsonl")]
    for record in never:
        if record["type"] == "turn_context":
            record["payload"]["approval_policy"] = "never"
    assert codex.state(_summary(never)) == "working"  # nobody is asked under "never"


def test_an_escalated_call_with_the_policy_out_of_sight_is_waiting(tmp_path, monkeypatch):
    # A long turn: the turn_context is outside the window the summary reads.
    tail = [r for r in _records("waiting-on-approval-tail.jsonl") if r["type"] != "turn_context"]
    assert codex.state(_summary(tail)) == "waiting"
    # And a policy seen once is carried to the next window (here: "never": nobody is asked).
    from actors.agents import jsonl
    monkeypatch.setattr(jsonl, "WINDOW", 4096)
    monkeypatch.setattr(jsonl, "WINDOW_MAX", 4096)
    monkeypatch.setattr(jsonl, "INCREMENT_MAX", 0)  # the growth is read as a fresh window
    path = tmp_path / "rollout-x.jsonl"
    never = {"timestamp": "2026-11-30T13:30:07.000Z", "type": "turn_context", "payload": {"approval_policy": "never"}}
    path.write_text(json.dumps(never) + "\n")
    summaries = jsonl.Summaries()
    summaries.get(str(path), codex.CodexSummary)
    filler = {"timestamp": "2026-11-30T13:30:08.000Z", "type": "response_item",
              "payload": {"type": "reasoning", "summary": "x" * 10_000}}
    with open(path, "a") as handle:
        handle.write(json.dumps(filler) + "\n")
        for record in tail:
            handle.write(json.dumps(record) + "\n")
    assert codex.state(summaries.get(str(path), codex.CodexSummary)) == "working"


def test_the_earlier_record_format_says_waiting_with_its_own_events():
    summary = _summary([{"type": "event_msg", "payload": {"type": "exec_approval_request"}}])
    assert codex.state(summary) == "waiting"
    summary = _summary([{"type": "response_item", "payload": {"type": "function_call", "name": "request_user_input",
                                                               "arguments": "{}"}}])
    assert codex.state(summary) == "waiting"


def _events(records):
    parser = CodexParser()
    return [e for record in records for e in parser.events(record)]


def test_a_0169_rollout_as_events():
    found = _events(_records("exec-rollout-with-resume.jsonl"))
    kinds = [(e["eventType"], e.get("toolName")) for e in found]
    turn = [("model_change", None), ("turn_start", None), ("tool_call", "exec_command"),
            ("tool_result", "exec_command"), ("agent_message", None), ("turn_end", None)]
    # The resumed turn repeats the model only if it changed: it did not.
    assert kinds == turn + turn[1:]
    assert found[0]["text"] == "mock-model"
    assert found[1]["text"] == "run echo please" and found[1]["role"] == "user"
    assert found[2]["text"] == "echo hello-from-mock"
    assert "hello-from-mock" in found[3]["text"] and found[3]["isError"] is False
    assert found[5]["text"] == "All done."


def test_the_earlier_record_format_as_events_with_its_failures():
    found = _events([
        {"timestamp": "2025-01-01T00:00:00Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "hi"}},
        {"timestamp": "2025-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls", "-l"]}',
                     "call_id": "c1"}},
        {"timestamp": "2025-01-01T00:00:02Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1",
                     "output": '{"output": "nope", "metadata": {"exit_code": 2}}'}},
        {"timestamp": "2025-01-01T00:00:03Z", "type": "event_msg",
         "payload": {"type": "agent_message", "message": "x"}},
        {"timestamp": "2025-01-01T00:00:04Z", "type": "event_msg", "payload": {"type": "error", "message": "limit"}},
    ])
    assert [e["eventType"] for e in found] == ["turn_start", "tool_call", "tool_result", "agent_message", "error"]
    assert found[1]["text"] == "ls -l"
    assert found[2]["toolName"] == "shell" and found[2]["isError"] is True and found[2]["text"] == "nope"
    assert found[4]["isError"] is True


def test_exit_codes_in_0169_outputs():
    found = _events([
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c",
                                              "arguments": "{}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c",
                                              "output": "Chunk ID: 1\nProcess exited with code 1\nOutput:\nboom"}}])
    assert found[1]["isError"] is True


def test_subagent_threads_and_roles():
    assert codex.is_subagent({"id": "x", "parent_thread_id": "y"})
    assert codex.is_subagent({"id": "x", "source": {"subagent": {"thread_spawn": {}}}})
    meta = codex.meta_of(_records("exec-rollout-with-resume.jsonl")[0])
    assert meta["id"] == "01a22ca6-0694-7b40-b7ae-d7e6df08cec5" and not codex.is_subagent(meta)
    assert codex.resume_id(["codex", "resume", "abc"]) == "abc"
    assert codex.is_rollout("/h/.codex/sessions/2026/11/30/rollout-2026-11-30T13-30-07-01a2.jsonl")
    assert not codex.is_rollout("/h/.codex/state_5.sqlite")


def test_names_from_the_session_index(tmp_path):
    (tmp_path / "session_index.jsonl").write_text((CX / "session_index.jsonl").read_text() + "not json\n")
    names = codex.Names()
    assert names.get(str(tmp_path)) == {"01a22cac-5e0b-7883-824f-f23f5fcea355": "Codex Named"}
    with open(tmp_path / "session_index.jsonl", "a") as handle:
        handle.write(json.dumps({"id": "01a22cac-5e0b-7883-824f-f23f5fcea355", "thread_name": "Renamed"}) + "\n")
    assert names.get(str(tmp_path))["01a22cac-5e0b-7883-824f-f23f5fcea355"] == "Renamed"
    assert names.get(str(tmp_path / "none")) == {}

"""pi: folders, state and name from real session files, entries as events."""
from __future__ import annotations

import json

from actors.agents import pi
from tests.agent_fakes import FIXTURES

PRINT = FIXTURES / "pi" / "2026-11-30T13-31-40-776Z_01a22ca7-7168-72a1-b399-e25785aef473.jsonl"
TUI = FIXTURES / "pi" / "2026-11-30T13-31-47-309Z_01a22ca7-8aed-7423-b387-30a99bed27fb.jsonl"


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _summary(records):
    summary = pi.PiSummary()
    for record in records:
        summary.feed(record)
    return summary


def test_folder_names_and_locations():
    assert pi.folder_name("/home/dev/tmp/exp/proj-c") == "--home-dev-tmp-exp-proj-c--"
    assert pi.folder_name("C:\\work\\x") == "--C--work-x--"
    assert pi.sessions_dir({}, "/h") == "/h/.pi/agent/sessions"
    assert pi.sessions_dir({"PI_CODING_AGENT_DIR": "/a"}, "/h") == "/a/sessions"
    assert pi.sessions_dir({"PI_CODING_AGENT_SESSION_DIR": "/s", "PI_CODING_AGENT_DIR": "/a"}, "/h") == "/s"


def test_state_and_name_from_real_sessions():
    assert pi.state(_summary(_records(PRINT))) == "idle"
    tui = _summary(_records(TUI))
    assert pi.state(tui) == "idle" and tui.name == "My Pi Task"
    records = _records(PRINT)
    assert pi.state(_summary(records[:4])) == "working"  # the prompt: a model call runs
    assert pi.state(_summary(records[:5])) == "working"  # a tool call
    assert pi.state(_summary(records[:6])) == "working"  # its result
    assert pi.state(_summary(records[:1])) == "idle"  # only the header
    assert pi.state(None) == "unknown"


def test_entries_as_events():
    parser = pi.PiParser()
    found = [e for record in _records(TUI) for e in parser.events(record)]
    assert [(e["eventType"], e.get("toolName")) for e in found] == [
        ("model_change", None), ("turn_start", None), ("tool_call", "bash"), ("tool_result", "bash"),
        ("turn_end", None)]
    assert found[1]["text"] == "please run echo"
    assert found[2]["text"] == "echo hello-from-mock"
    assert found[3]["text"] == "hello-from-mock\n" and found[3]["isError"] is False
    assert found[4]["text"] == "All done."


def test_a_failed_reply_is_an_error_event():
    found = pi.PiParser().events({"type": "message", "timestamp": "2026-11-30T13:31:40.857Z", "message": {
        "role": "assistant", "content": [], "stopReason": "error", "errorMessage": "rate limited"}})
    assert found == [{"eventType": "error", "timestamp": 1796045500857, "text": "rate limited", "isError": True}]

"""Claude Code: registry, slug, state from real transcripts, records as events."""
from __future__ import annotations

import json

import pytest

from actors.agents import claude
from actors.harness.claude.records import ClaudeParser
from actors.agents.jsonl import Summaries
from actors.harness.claude import files as cli_files
from tests.agent_fakes import FIXTURES

CC = FIXTURES / "claude-code"


def _records(name):
    return [json.loads(line) for line in (CC / name).read_text().splitlines()]


def _summary(name):
    summary = claude.ClaudeSummary()
    for record in _records(name):
        summary.feed(record)
    return summary


def test_slug_follows_claude_codes_rule():
    assert claude.slug("/home/dev/tmp/exp/proj-a") == "-home-dev-tmp-exp-proj-a"
    assert claude.slug("/a.b_c d/é") == "-a-b-c-d--"
    long = "/" + "x" * 250
    assert claude.slug(long).startswith("-" + "x" * 199 + "-") and len(claude.slug(long)) > 200
    assert cli_files._java_hash("hello") == 99162322  # Java's "hello".hashCode()


def test_registry_entries_are_checked_against_the_process_start():
    entry = json.loads((CC / "sessions-pid-json" / "03-waiting.json").read_text())
    assert claude.registry_matches(entry, 23160, 103646)
    assert not claude.registry_matches(entry, 23160, 999)  # a stale file of a reused pid
    assert not claude.registry_matches(entry, 1, 103646)
    assert claude.registry_name(entry) is None  # a derived name is no name
    assert claude.registry_name({**entry, "nameSource": "user", "name": "Fix login"}) == "Fix login"


@pytest.mark.parametrize("file, status, state", [
    ("01-idle.json", "idle", "idle"), ("02-busy.json", "busy", "working"),
    ("03-waiting.json", "waiting", "waiting"), ("04-idle.json", "idle", "idle")])
def test_the_registry_status_decides_the_state(file, status, state):
    entry = json.loads((CC / "sessions-pid-json" / file).read_text())
    assert entry["status"] == status
    assert claude.state(_summary("waiting-on-permission-tail.jsonl"), entry["status"], 0) == state


def test_state_from_the_transcript_when_there_is_no_registry():
    assert claude.state(_summary("interactive-permission-prompt.jsonl"), None, 0) == "idle"
    assert claude.state(_summary("print-mode-tool-call-and-resume.jsonl"), None, 0) == "idle"
    assert claude.state(_summary("api-error-retries.jsonl"), None, 0) == "working"  # retrying
    assert claude.state(_summary("renamed-session.jsonl"), None, 0) == "idle"  # injected text starts nothing
    pending = _summary("waiting-on-permission-tail.jsonl")
    kind, tool, ms = pending.last
    assert (kind, tool) == ("tool_use", "Bash")
    assert claude.state(pending, None, ms + 1000) == "working"  # a young tool call runs
    assert claude.state(pending, None, ms + 60_000) == "unknown"  # an approval or a long run
    assert claude.state(None, None, 0) == "unknown"


def test_asking_the_person_is_waiting():
    summary = claude.ClaudeSummary()
    summary.feed({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "AskUserQuestion"}],
                                                   "stop_reason": "tool_use"}})
    assert claude.state(summary, None, 0) == "waiting"


def test_names_prefer_the_persons_title():
    assert _summary("renamed-session.jsonl").name == "My Renamed Task"
    summary = claude.ClaudeSummary()
    summary.feed({"type": "ai-title", "aiTitle": "Auto title"})
    assert summary.name == "Auto title"
    summary.feed({"type": "custom-title", "customTitle": "Mine"})
    summary.feed({"type": "ai-title", "aiTitle": "Later auto"})
    assert summary.name == "Mine"


def test_subagent_records_do_not_move_the_state():
    summary = _summary("interactive-permission-prompt.jsonl")
    sidechain = {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "sub task"}}
    summary.feed(sidechain)
    assert claude.state(summary, None, 0) == "idle"
    assert ClaudeParser().events(sidechain) == []


def test_long_lines_are_judged_by_their_head():
    summary = claude.ClaudeSummary()
    summary.feed_long(b'{"parentUuid":"x","isSidechain":false,"type":"user","message":{"role":"user","content":'
                      b'[{"tool_use_id":"t","type":"tool_result","content":"')
    assert summary.last[0] == "tool_result" and claude.state(summary, None, 0) == "working"


def _events(name):
    parser = ClaudeParser()
    return [e for record in _records(name) for e in parser.events(record)]


def test_a_turn_with_a_tool_as_events():
    found = _events("interactive-permission-prompt.jsonl")
    assert [(e["eventType"], e.get("role"), e.get("toolName")) for e in found] == [
        ("turn_start", "user", None),
        ("agent_message", "assistant", None),
        ("tool_call", "assistant", "Bash"),
        ("tool_result", "tool", "Bash"),
        ("turn_end", "assistant", None),
    ]
    assert found[0]["text"] == "please touch a file"
    assert found[2]["text"].startswith("touch ")
    assert found[3]["isError"] is False
    assert all(isinstance(e["timestamp"], int) and e["timestamp"] > 1_700_000_000_000 for e in found)
    assert [e["timestamp"] for e in found] == sorted(e["timestamp"] for e in found)


def test_resumed_turns_and_api_errors_as_events():
    found = _events("print-mode-tool-call-and-resume.jsonl")
    assert [e["eventType"] for e in found].count("turn_start") == 2
    errors = _events("api-error-retries.jsonl")
    assert errors[0]["eventType"] == "turn_start"
    assert all(e["eventType"] == "error" and e["isError"] for e in errors[1:]) and len(errors) > 2
    assert "retry 1 of 10" in errors[1]["text"]


def test_injected_user_text_is_no_prompt():
    found = _events("renamed-session.jsonl")
    assert [e["text"] for e in found if e["eventType"] == "turn_start"] == ["please run echo"]


def test_subagent_transcript_lines_are_ignored_and_the_parents_are_not():
    parent = [json.loads(line) for line in (CC / "subagent" / "parent-d0d074a6.jsonl").read_text().splitlines()]
    parser = ClaudeParser()
    found = [e for record in parent for e in parser.events(record)]
    calls = [(e["toolName"], e["text"]) for e in found if e["eventType"] == "tool_call"]
    assert calls == [("Agent", "Say hi"), ("Bash", "echo sub-hello")]  # the second after <task-notification>
    sub = [json.loads(line) for line in (CC / "subagent" / "agent-afe2a965a61eab1b3.jsonl").read_text().splitlines()]
    assert [e for record in sub for e in ClaudeParser().events(record)] == []


def test_session_id_from_the_command_line():
    assert claude.session_from_argv(["claude", "--resume", "abc"]) == "abc"
    assert claude.session_from_argv(["claude", "--session-id=def"]) == "def"
    assert claude.session_from_argv(["claude", "-r"]) is None
    assert claude.session_from_argv(["claude", "-p"]) is None


def test_transcript_location_with_the_every_folder_fallback(tmp_path):
    config = tmp_path / ".claude"
    (config / "projects" / "-custom-slug").mkdir(parents=True)
    (config / "projects" / "-custom-slug" / "sid.jsonl").write_text("{}\n")
    lookups = {}
    found = claude.transcript(str(config), "/somewhere/else", "sid", 0, lookups, now_ms=1000)
    assert found.endswith("-custom-slug/sid.jsonl")
    assert claude.transcript(str(config), "/w", "none-yet", 0, lookups, now_ms=1000) is None
    assert claude.transcript(str(config), "/w", "../escape", 0, lookups, now_ms=1000) is None
    direct = config / "projects" / claude.slug("/w")
    direct.mkdir()
    (direct / "none-yet.jsonl").write_text("{}\n")
    assert claude.transcript(str(config), "/w", "none-yet", 0, lookups, now_ms=2000).endswith("none-yet.jsonl")


def test_summaries_of_a_real_transcript_grow_incrementally(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = (CC / "interactive-permission-prompt.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"type": "tool_use"' in line) + 1
    path.write_text("".join(lines[:cut]))
    summaries = Summaries()
    assert summaries.get(str(path), claude.ClaudeSummary).last[0] == "tool_use"
    path.write_text("".join(lines))
    assert claude.state(summaries.get(str(path), claude.ClaudeSummary), None, 0) == "idle"

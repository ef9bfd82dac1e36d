"""Stream messages: the shape, timestamps, tool summaries, text cut at 4 KiB on a UTF-8 boundary."""
from __future__ import annotations

from actors.agents import events as ev


def test_a_message_has_the_streams_fields_only():
    found = ev.event("tool_call", 5, role="assistant", tool_name="Bash", text="ls")
    assert ev.message("claude-code", 42, found) == {"harness": "claude-code", "pid": 42, "eventType": "tool_call",
                                                    "timestamp": 5, "role": "assistant", "toolName": "Bash",
                                                    "text": "ls"}
    assert ev.message("pi", 1, ev.event("run_exited", 7)) == {"harness": "pi", "pid": 1, "eventType": "run_exited",
                                                             "timestamp": 7}


def test_text_stops_at_4_kib_on_a_utf8_boundary():
    text = "é" * 3000  # 6000 bytes
    cut = ev.message("pi", 1, ev.event("agent_message", 1, text=text))["text"]
    data = cut.encode("utf-8")
    assert len(data) <= 4096 and cut.endswith("…") and cut[:-1] == "é" * len(cut[:-1])
    short = ev.message("pi", 1, ev.event("agent_message", 1, text="ok"))["text"]
    assert short == "ok"
    emoji = ev.message("pi", 1, ev.event("agent_message", 1, text="a" + "😀" * 2000))["text"]
    assert len(emoji.encode("utf-8")) <= 4096 and "\ufffd" not in emoji


def test_timestamps():
    assert ev.iso_ms("2026-11-30T13:31:40.776Z") == 1796045500776
    assert ev.iso_ms("2026-11-30T14:31:40.776+01:00") == 1796045500776
    assert ev.iso_ms(1796045500776) == 1796045500776
    assert ev.iso_ms("yesterday") is None and ev.iso_ms(None) is None and ev.iso_ms(True) is None
    assert ev.event("x", None)["timestamp"] > 1_700_000_000_000


def test_tool_summaries():
    assert ev.tool_summary({"command": "ls -l", "description": "list"}) == "ls -l"
    assert ev.tool_summary('{"cmd": "echo hi"}') == "echo hi"
    assert ev.tool_summary({"command": ["bash", "-lc", "make"]}) == "bash -lc make"
    assert ev.tool_summary({"file_path": "/w/a.py", "old_string": "x"}) == "/w/a.py"
    assert ev.tool_summary({"other": 1}) == '{"other": 1}'
    assert ev.tool_summary("*** Begin Patch") == "*** Begin Patch"
    assert ev.tool_summary(None) == ""


def test_text_of_content():
    assert ev.text_of("plain") == "plain"
    assert ev.text_of([{"type": "text", "text": "a"}, {"type": "image"}, "b"]) == "a\nb"
    assert ev.text_of(None) == ""


def test_messages_encode_as_valid_utf8_even_with_lone_surrogates():
    import json
    record = json.loads('{"text": "bad \\ud800 half"}')
    data = ev.encode(ev.message("pi", 1, ev.event("agent_message", 1, text=record["text"])))
    assert json.loads(data.decode("utf-8"))["text"] == "bad ? half"
    assert ev.encode({"text": "é"}) == '{"text":"é"}'.encode()


def test_a_timestamp_that_is_not_a_finite_number_is_no_timestamp():
    from actors.agents.events import iso_ms
    assert iso_ms(float("nan")) is None and iso_ms(float("inf")) is None and iso_ms(1700000000000) == 1700000000000

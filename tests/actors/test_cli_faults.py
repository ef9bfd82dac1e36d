"""A CLI that fails while devhost drives it is ended, and says why, on the fake CLIs
(tests/fake_claude.py, tests/fake_codex.py) under the real Registry and Chat actors.

Whether it never gets ready, stops reading its stdin, or writes a line past the longest one
devhost reads: every send waiting on it is answered with an error at once (never
"unconfirmed" after the acknowledgement's wait), its process ends, the session reads ``error``
with the reason, the turn fails, and the next message starts the CLI again, as after an exit.
"""
from __future__ import annotations

import pytest

from actors.cli_process import MAX_LINE_BYTES
from tests.actors.test_chat_runtime import attach, items, result_event, runtime, send, session  # noqa: F401
from tests.integration.daemon import tagged_processes, wait_until

ACK_WAIT = 30.0  # far past what the faults take to be told: an "unconfirmed" would be a failure
START_WAIT = 3.0  # long enough to see it starting on a busy machine, short for a test


def error_state(sink) -> dict:
    return sink.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "error", "the error state",
                         timeout=20)["session"]


def result_of(sink, command_id: str) -> dict:
    return sink.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id,
                         f"the result of {command_id}", timeout=20)


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_cli_that_never_answers_its_start_is_ended_after_the_start_deadline(runtime, tmp_path, harness):
    registry = runtime(chat_options={"ack_timeout": ACK_WAIT, "start_deadline": START_WAIT})
    record, chat = session(registry, tmp_path, harness, flags=("--never-ready",))
    subscriber, sink = attach(chat)
    assert chat.record().get(timeout=5)["status"] == "starting"
    wait_until(lambda: tagged_processes(record["chatId"]), timeout=10, what="the CLI running")
    command_id = send(chat, subscriber, "hello")
    result = result_of(sink, command_id)
    assert f"did not get ready within {START_WAIT:g} s" in result["error"]
    assert f"did not get ready within {START_WAIT:g} s" in error_state(sink)["error"]
    wait_until(lambda: not tagged_processes(record["chatId"]), timeout=20, what="the CLI ended")
    assert chat.record().get(timeout=5)["status"] == "error"


def test_a_cli_that_stops_reading_its_stdin_is_ended_and_the_next_message_starts_it_again(runtime, tmp_path):
    registry = runtime(chat_options={"ack_timeout": ACK_WAIT})
    record, chat = session(registry, tmp_path)
    subscriber, sink = attach(chat)
    send(chat, subscriber, "deaf from here")
    sink.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "running", "the running turn")
    unheard = send(chat, subscriber, "are you there")
    assert "could not write to Claude Code" in result_of(sink, unheard)["error"]
    state = error_state(sink)
    assert "could not write to Claude Code" in state["error"] and "devhost ended it" in state["error"]
    wait_until(lambda: not tagged_processes(record["chatId"]), timeout=20, what="the deaf CLI ended")
    wait_until(lambda: not chat.info().get(timeout=5)["running"], timeout=20, what="its exit told")
    send(chat, subscriber, "again")
    result_event(sink, "echo: again")
    assert [t["state"] for t in items(chat, "turn")][-1] == "done"
    assert any("could not write to Claude Code" in (n.get("text") or "") for n in items(chat, "note"))


def test_a_line_past_the_longest_devhost_reads_ends_the_cli_with_a_protocol_error(runtime, tmp_path, capfd):
    registry = runtime(chat_options={"ack_timeout": ACK_WAIT})
    record, chat = session(registry, tmp_path)
    subscriber, sink = attach(chat)
    send(chat, subscriber, "flood the pipe")
    state = error_state(sink)
    assert f"a line longer than {MAX_LINE_BYTES >> 20} MiB" in state["error"]
    wait_until(lambda: not tagged_processes(record["chatId"]), timeout=20, what="the flooding CLI ended")
    wait_until(lambda: not chat.info().get(timeout=5)["running"], timeout=20, what="its exit told")
    assert [t["state"] for t in items(chat, "turn")] == ["error"]
    logged = capfd.readouterr().err
    assert "kind=protocol" in logged and "without a line break" in logged and "x" * 100 not in logged
    send(chat, subscriber, "again")
    result_event(sink, "echo: again")

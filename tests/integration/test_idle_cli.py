"""Idle CLIs let go, end to end: a real devhostd whose manifest sets `idle_cli_minutes` low.

A page's turn ("remember the word alpha"), its socket closed, the idle time passing: the CLI's
process gone, the session listed idle with no error; a page that comes back sends the next
message, answered by the CLI resumed on its own conversation (the model's request holds the
earlier turn).
"""
from __future__ import annotations

import pytest

from tests.integration.daemon import Daemon, processes_with_env, tagged_processes, wait_until
from tests.mock_anthropic import message_text, text_reply


@pytest.fixture
def idle_daemon(stack, daemon_env):
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text() + "[devtools.chat]\nidle_cli_minutes = 0.02\n")
    running = Daemon(daemon_env, cwd=stack, config=manifest, state_dir=stack / "state")
    yield running
    running.stop()
    log = running.log()
    print(log)
    assert not [line for line in log.splitlines() if " bug: " in line]
    assert not processes_with_env(f"HOME={daemon_env['HOME']}")


def test_an_idle_sessions_cli_ends_without_error_and_the_next_message_resumes_it(idle_daemon, mock):
    mock.add(text_reply("Noted: alpha."))
    mock.add(text_reply("alpha"))
    record = idle_daemon.create_session()
    sock = idle_daemon.connect(record["id"])
    command_id = sock.send_message("remember the word alpha")
    assert sock.result_for(command_id)["delivery"] == "queued"
    sock.wait_event(lambda p: p["type"] == "result", what="the first turn's result")
    assert tagged_processes(record["id"])
    sock.close()  # a socket streaming the CLI's events keeps it; the page went away

    wait_until(lambda: not tagged_processes(record["id"]), what="the idle CLI gone")
    (listed,) = idle_daemon.sessions()
    assert listed["status"] == "idle" and "error" not in listed, listed
    assert "session.idle-end" in idle_daemon.log() and "kind=process" not in idle_daemon.log()

    again = idle_daemon.connect(record["id"])
    command_id = again.send_message("what word did I ask you to remember?")
    assert again.result_for(command_id)["delivery"] == "queued"
    result = again.wait_event(lambda p: p["type"] == "result" and p.get("result") == "alpha",
                              what="the second turn's result")
    assert result.get("is_error") is False
    second = message_text(mock.requests[-1])
    assert "remember the word alpha" in second and "Noted: alpha." in second
    again.close()

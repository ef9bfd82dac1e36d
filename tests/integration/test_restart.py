"""Conversations outlive the daemon: after a restart a session is listed as closed, and resuming
it goes on with the CLI's own saved conversation (devhost's native history does not survive)."""
from __future__ import annotations

import signal

from tests.integration.daemon import Daemon
from tests.mock_anthropic import message_text as anthropic_text, text_reply as anthropic_reply
from tests.mock_openai import message_text as openai_text, text_reply as openai_reply


def _restart(daemon, stack, daemon_env):
    assert daemon.stop() == 0
    return Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")


def test_a_claude_conversation_resumes_after_the_daemon_restarts(daemon, mock, stack, daemon_env):
    mock.add(anthropic_reply("I will remember otter."), anthropic_reply("It was otter."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("remember otter")
    native_id = sock.wait_event(lambda p: p["type"] == "result")["session_id"]
    daemon.proc.send_signal(signal.SIGTERM)
    assert sock.wait_closed() == 1001
    again = _restart(daemon, stack, daemon_env)
    try:
        [listed] = again.sessions()
        assert (listed["id"], listed["status"], listed["nativeSessionId"]) == (record["id"], "closed", native_id)
        resumed = again.create_session(resumeId=native_id)
        assert resumed["chatId"] == record["chatId"] and resumed["id"] != record["id"]  # the same chat
        assert [s["id"] for s in again.sessions()] == [resumed["id"]]
        sock = again.connect(resumed["id"])
        assert sock.snapshot["events"] == []  # devhost's history does not survive a restart
        sock.send_message("which animal?")
        sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "It was otter.")
        assert "remember otter" in anthropic_text(mock.requests[1])
        sock.close()
    finally:
        assert again.stop() == 0


def test_a_codex_thread_resumes_after_the_daemon_restarts(daemon, openai, stack, daemon_env):
    openai.add(openai_reply("Noted: lynx."), openai_reply("It was lynx."))
    record = daemon.create_session(harness="codex")
    sock = daemon.connect(record["id"])
    sock.send_message("remember lynx")
    sock.wait_event(lambda p: p.get("method") == "turn/completed")
    thread_id = sock.wait_status("idle")["session"]["nativeSessionId"]
    sock.close()
    again = _restart(daemon, stack, daemon_env)
    try:
        resumed = again.create_session(harness="codex", resumeId=thread_id)
        assert resumed["nativeSessionId"] == thread_id
        sock = again.connect(resumed["id"])
        sock.send_message("which animal?")
        sock.wait_event(lambda p: p.get("method") == "turn/completed")
        assert "remember lynx" in openai_text(openai.requests[1])
        sock.close()
    finally:
        assert again.stop() == 0


def test_each_run_of_the_daemon_has_its_own_run_id_in_config(daemon, stack, daemon_env):
    """config.json's `run` is how a page tells that devhostd restarted since it saw a conversation open."""
    status, before = daemon.request("GET", "/__devhost__/config.json", origin=None)
    assert status == 200 and isinstance(before["run"], str) and before["run"]
    assert daemon.request("GET", "/__devhost__/config.json", origin=None)[1]["run"] == before["run"]
    again = _restart(daemon, stack, daemon_env)
    try:
        assert again.request("GET", "/__devhost__/config.json", origin=None)[1]["run"] != before["run"]
    finally:
        assert again.stop() == 0

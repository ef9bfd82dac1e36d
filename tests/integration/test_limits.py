"""Usage limits, rate limits and overloaded models on the real CLIs: the mock model servers answer as the real
services do (the unified rate-limit headers on a subscription login, 529s, Codex's usage-limit
body), and each limited turn ends ``error`` with its ``limit``, the queue held and kept. With
``[core] resume_at_reset`` the turn is taken up once after the reset, also across a restart."""
from __future__ import annotations

import time

import pytest

from tests.integration.chats import info, items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import error_reply, message_text, text_reply, unified_headers, usage_limit_reply
from tests.mock_openai import error_reply as codex_error_reply, usage_limit_reply as codex_usage_limit_reply
from devhostd.core_client import CoreConnection

WAKE = "Your previous turn stopped on a usage limit, which has reset now. Continue where you left off."


@pytest.fixture
def oauth(daemon_env):
    """Claude Code on a subscription login: only then does it read the unified rate-limit headers."""
    daemon_env.pop("ANTHROPIC_API_KEY")
    daemon_env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-test"


@pytest.fixture
def resuming(stack):
    with open(stack / "devhost.toml", "a") as manifest:
        manifest.write("[core]\nresume_at_reset = true\n")


def start(daemon_env, stack) -> Daemon:
    return Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")






def send_into_the_limit(core, chat_id: str, stack) -> dict:
    """A new Claude Code chat whose first message meets the limit the mock answers with; the
    chat's info once that turn ended (the take-up is owed)."""
    core.chats.create(chat_id, provider="claude", cwd=str(stack / "project"))
    core.chats.send(chat_id, "one")
    limited_turn(core, chat_id)
    return info(core, chat_id)


def limited_turn(core, chat_id: str) -> dict:
    wait_until(lambda: any(t.get("limit") for t in items(core, chat_id, "turn")), timeout=60, what="the limited turn")
    return next(t for t in items(core, chat_id, "turn") if t.get("limit"))


def test_claude_on_a_used_up_five_hour_window_holds_the_queue_then_takes_the_turn_up_once_at_reset(
        oauth, resuming, daemon_env, stack, mock):
    resets = int(time.time()) + 2
    mock.add(usage_limit_reply(resets), text_reply("Back at it."), text_reply("Two done."))
    daemon = start(daemon_env, stack)
    try:
        with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
            core.chats.create("lim", provider="claude", cwd=str(stack / "project"))
            core.chats.send("lim", "one")
            core.chats.send("lim", "two")  # waits behind "one"
            turn = limited_turn(core, "lim")
            assert turn["state"] == "error"
            assert turn["limit"]["kind"] == "usage" and turn["limit"]["resetsAt"] == resets * 1000
            assert turn["limit"]["window"] == "five_hour" and "5-hour limit" in turn["limit"]["message"]
            held = info(core, "lim")
            assert held["limit"] == turn["limit"] and held["queuePaused"] is True
            assert [m["text"] for m in held["queue"]] == ["two"]  # held, and kept
            assert held["resumeAt"] == resets * 1000 + 3000 and held["planUsage"]["status"] == "rejected"
            record = next(s for s in daemon.sessions() if s["chatId"] == "lim")
            assert record["limit"] == turn["limit"]  # the Chat API's record says so too
            wait_until(lambda: len(items(core, "lim", "turn")) == 3 and
                       all(t["state"] != "running" for t in items(core, "lim", "turn")),
                       timeout=60, what="the turn taken up, then the queued message")
            limited, woke, second = items(core, "lim", "turn")
            assert woke["origin"] == "agent" and woke["label"] == "Usage limit reset" and woke["state"] == "done"
            assert second["state"] == "done"
            assert "Resumed after the usage limit reset" in [n["text"] for n in items(core, "lim", "note")]
            assert sum(WAKE in message_text(r) and "two" not in message_text(r) for r in mock.requests) == 1
            after = info(core, "lim")
            assert "limit" not in after and "resumeAt" not in after and after["queue"] == []
    finally:
        daemon.stop()
    assert "turn.limit" in daemon.log() and "turn.resume-after-limit" in daemon.log()


def test_a_restart_before_the_reset_keeps_the_take_up(oauth, resuming, daemon_env, stack, mock):
    resets = int(time.time()) + 6
    mock.add(usage_limit_reply(resets), text_reply("Back at it."))
    first = start(daemon_env, stack)
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            assert send_into_the_limit(core, "later", stack)["resumeAt"] == resets * 1000 + 3000
    finally:
        assert first.stop() == 0
    second = start(daemon_env, stack)
    try:
        mock.wait_for_requests(2, timeout=60)  # no client needed: the restarted daemon keeps the time
        assert WAKE in message_text(mock.requests[1]) and time.time() >= resets
        with CoreConnection(second.control_origin, token=second.core_token) as core:
            wait_until(lambda: items(core, "later", "turn")[-1]["state"] == "done", timeout=60,
                       what="the taken-up turn done")
            assert [t["origin"] for t in items(core, "later", "turn")] == ["user", "agent"]
    finally:
        second.stop()


def test_turning_resume_off_for_a_chat_lapses_the_take_up(oauth, resuming, daemon_env, stack, mock):
    resets = int(time.time()) + 1
    mock.add(usage_limit_reply(resets))
    daemon = start(daemon_env, stack)
    try:
        with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
            assert "resumeAt" in send_into_the_limit(core, "off", stack)
            core.chats.configure("off", resumeAtReset=False)
            assert "resumeAt" not in info(core, "off")
            time.sleep(resets + 5 - time.time())  # past the reset and its margin
            assert len(mock.requests) == 1 and len(items(core, "off", "turn")) == 1
    finally:
        daemon.stop()


def test_closing_or_killing_a_chat_cancels_its_take_up(oauth, resuming, daemon_env, stack, mock):
    resets = int(time.time()) + 2
    mock.add(usage_limit_reply(resets), usage_limit_reply(resets))
    daemon = start(daemon_env, stack)
    try:
        with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
            assert "resumeAt" in send_into_the_limit(core, "closed", stack)
            assert "resumeAt" in send_into_the_limit(core, "killed", stack)
            session = next(s for s in daemon.sessions() if s["chatId"] == "closed")
            status, _ = daemon.close_session(session["id"])
            assert status == 200
            assert "resumeAt" not in info(core, "closed")
            core.chats.kill("killed")
            time.sleep(resets + 5 - time.time())  # past the reset and its margin
            assert len(mock.requests) == 2  # neither chat was taken up
            assert len(items(core, "closed", "turn")) == 1
            assert next(s for s in daemon.sessions() if s["chatId"] == "closed")["status"] == "closed"
    finally:
        daemon.stop()
    assert "turn.resume-after-limit" not in daemon.log()


def test_claude_an_overloaded_model_whose_retries_ran_out_ends_with_an_overload_limit(daemon, stack, mock):
    mock.add(error_reply(529, "overloaded_error", "Overloaded", times=2))  # the first try and its one retry
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        core.chats.create("busy", provider="claude", cwd=str(stack / "project"))
        core.chats.send("busy", "one")
        core.chats.send("busy", "two")
        turn = limited_turn(core, "busy")
        assert turn["state"] == "error" and turn["limit"]["kind"] == "overload" and "529" in turn["limit"]["message"]
        held = info(core, "busy")
        assert held["queuePaused"] is True and [m["text"] for m in held["queue"]] == ["two"]
        assert "resumeAt" not in held and held["limitResume"] is False  # the host installed no take-up


def test_claude_a_window_nearly_used_up_shows_in_info_before_the_wall(oauth, daemon, stack, mock):
    reply = text_reply("Fine.")
    reply.headers.update(unified_headers("allowed_warning", int(time.time()) + 3600, 0.93))
    mock.add(reply)
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        core.chats.create("warn", provider="claude", cwd=str(stack / "project"))
        core.chats.send("warn", "one")
        wait_until(lambda: info(core, "warn").get("planUsage"), timeout=60, what="the window's use")
        usage = info(core, "warn")["planUsage"]
        assert usage["window"] == "five_hour" and usage["utilization"] == 0.93
        assert usage["status"] == "allowed_warning"


def test_codex_on_a_used_up_usage_window_ends_with_a_usage_limit_and_its_reset(daemon, stack, openai):
    resets = int(time.time()) + 3600
    openai.add(codex_usage_limit_reply(resets))
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        core.chats.create("cxl", provider="codex", cwd=str(stack / "project"))
        core.chats.send("cxl", "one")
        core.chats.send("cxl", "two")
        turn = limited_turn(core, "cxl")
        assert turn["state"] == "error" and turn["limit"]["kind"] == "usage"
        assert turn["limit"]["resetsAt"] == resets * 1000 and turn["limit"]["window"] == "five_hour"
        assert "usage limit" in turn["limit"]["message"]
        held = info(core, "cxl")
        assert held["limit"] == turn["limit"] and held["queuePaused"] is True
        assert [m["text"] for m in held["queue"]] == ["two"]


def test_codex_refused_429_until_its_retries_ran_out_ends_with_a_rate_limit_not_an_overloaded_model(
        daemon, stack, openai):
    openai.add(codex_error_reply(429, "Rate limit reached for requests", times=None))
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        core.chats.create("cxr", provider="codex", cwd=str(stack / "project"))
        core.chats.send("cxr", "one")
        turn = limited_turn(core, "cxr")
        assert turn["state"] == "error" and turn["limit"]["kind"] == "rate" and "429" in turn["limit"]["message"]
        # Codex's error names no wait and no window is used up: no reset time is made up.
        assert "resetsAt" not in turn["limit"]
        assert info(core, "cxr")["queuePaused"] is True


def test_resume_at_reset_follows_the_manifest_edited_while_the_daemon_runs(oauth, daemon_env, stack, mock):
    resets = int(time.time()) + 8
    mock.add(usage_limit_reply(resets), text_reply("Back at it."), usage_limit_reply(resets + 3600))
    daemon = start(daemon_env, stack)  # the manifest has no [core]: no take-up
    try:
        with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
            held = send_into_the_limit(core, "edit", stack)
            assert held["limitResume"] is False and "resumeAt" not in held
            with open(stack / "devhost.toml", "a") as manifest:
                manifest.write("[core]\nresume_at_reset = true\n")
            assert core.chats.attach("edit")["info"]["limitResume"] is True  # the chat, loaded before, follows
            assert info(core, "edit")["limitResume"] is True
            core.chats.configure("edit", resumeAtReset=True)  # the person's switch, now offered
            assert info(core, "edit")["resumeAt"] == resets * 1000 + 3000
            wait_until(lambda: len(items(core, "edit", "turn")) == 2
                       and items(core, "edit", "turn")[-1]["state"] == "done",
                       timeout=60, what="the turn taken up after the reset")
            assert items(core, "edit", "turn")[-1]["origin"] == "agent" and WAKE in message_text(mock.requests[1])
            (stack / "devhost.toml").write_text((stack / "devhost.toml").read_text().replace("= true", "= false"))
            assert core.chats.attach("edit")["info"]["limitResume"] is False
            core.chats.send("edit", "three")  # limited again: with the manifest off, nothing is owed
            wait_until(lambda: len([t for t in items(core, "edit", "turn") if t.get("limit")]) == 2, timeout=60,
                       what="the second limited turn")
            assert "resumeAt" not in info(core, "edit") and info(core, "edit")["limitResume"] is False
    finally:
        daemon.stop()
    assert daemon.log().count("manifest reloaded") == 2

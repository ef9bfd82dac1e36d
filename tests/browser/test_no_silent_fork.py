"""No silent fork: after a daemon restart (or a page reload) the panel comes back to the
conversation it showed, says what happened, and the next message resumes that conversation on
the real CLI, with its earlier turns, instead of starting a new one. New is the person's choice."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.integration.daemon import Daemon
from tests.mock_anthropic import message_text as anthropic_text, text_reply
from tests.mock_openai import message_text as openai_text, text_reply as openai_reply


def restarted(daemon, daemon_env, stack) -> Daemon:
    """The daemon stopped and started again on the same state folder and port (as a person's
    devhostd is, on its one port), so the page's origin and its saved panel state are the same."""
    port = daemon.port
    assert daemon.stop() == 0
    return Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state", port=port)


def one_turn(panel: Panel, text: str, reply: str) -> None:
    panel.send(text)
    expect(panel.items("assistant").last).to_have_text(reply)
    panel.expect_status("idle")


def test_after_a_daemon_restart_the_panel_shows_the_same_conversation_and_the_next_message_resumes_it(
        page, daemon, daemon_env, stack, mock, shots):
    mock.add(text_reply("I will remember otter."), text_reply("It was otter."))
    panel = Panel(page, daemon).open()
    one_turn(panel, "remember the word otter", "I will remember otter.")
    again = restarted(daemon, daemon_env, stack)
    try:
        # The page stayed open: its socket comes back to the same conversation, closed by the restart.
        panel.expect_status("closed")
        expect(panel.items("user")).to_have_count(1)
        expect(panel.items("user").first).to_contain_text("remember the word otter")
        note = panel.find(".continuity")
        expect(note).to_contain_text("devhostd restarted")
        expect(panel.find("select.session")).to_have_value(panel.page.evaluate(
            "() => window.__devhostChat.session.id"))
        # A reload lands on it too, not on "New conversation".
        panel.reload()
        panel.expect_status("closed")
        expect(panel.items("assistant").first).to_have_text("I will remember otter.")
        expect(note).to_contain_text("devhostd restarted")
        chat_before = page.evaluate("() => window.__devhostChat.session.chatId")
        panel.send("which word?")
        expect(panel.items("assistant").last).to_have_text("It was otter.")
        expect(note).to_contain_text("devhostd restarted; this conversation was resumed")
        shots(page, "27-resumed-after-restart")
        panel.expect_status("idle")
        assert page.evaluate("() => window.__devhostChat.session.chatId") == chat_before  # the same chat
        expect(panel.items("user")).to_have_count(2)
        # The model got the earlier turn with the new message: the CLI resumed its conversation.
        latest = anthropic_text(mock.requests[-1])
        assert "remember the word otter" in latest and "I will remember otter." in latest and "which word?" in latest
        # One conversation in the list, not a fork beside the old one.
        expect(panel.find("select.session option").filter(has_text="remember the word otter")).to_have_count(1)
    finally:
        assert again.stop() == 0


def test_a_closed_conversation_resumes_when_written_to_and_new_starts_a_fresh_one(page, daemon, mock):
    mock.add(text_reply("Noted: heron."), text_reply("It was heron."), text_reply("Hello, fresh start."))
    panel = Panel(page, daemon).open()
    one_turn(panel, "remember heron", "Noted: heron.")
    panel.find(".end").click()
    panel.expect_status("closed")
    panel.reload()
    panel.expect_status("closed")  # the reload comes back to it, closed as the person left it
    expect(panel.find("textarea")).to_have_attribute("placeholder", "This conversation is closed: write to resume it")
    panel.send("which bird?")
    expect(panel.items("assistant").last).to_have_text("It was heron.")
    expect(panel.find(".continuity")).to_contain_text("This conversation was resumed")
    assert "remember heron" in anthropic_text(mock.requests[-1])
    panel.find(".new").click()
    panel.send("start over")
    expect(panel.items("assistant").last).to_have_text("Hello, fresh start.")
    expect(panel.items("user")).to_have_count(1)
    assert "remember heron" not in anthropic_text(mock.requests[-1])
    expect(panel.find(".continuity")).to_be_hidden()


def test_a_codex_conversation_resumes_after_a_daemon_restart(page, daemon, daemon_env, stack, openai):
    openai.add(openai_reply("Noted: lynx."), openai_reply("It was lynx."))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    one_turn(panel, "remember lynx", "Noted: lynx.")
    again = restarted(daemon, daemon_env, stack)
    try:
        panel.reload()
        panel.expect_status("closed")
        expect(panel.find(".continuity")).to_contain_text("devhostd restarted")
        panel.send("which animal?")
        expect(panel.items("assistant").last).to_have_text("It was lynx.")
        expect(panel.find(".continuity")).to_contain_text("devhostd restarted; this conversation was resumed")
        assert "remember lynx" in openai_text(openai.requests[-1])
    finally:
        assert again.stop() == 0

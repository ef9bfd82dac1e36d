"""Earlier conversations in the panel: listed with their titles after a daemon restart, opened
to read, resumed with their transcript kept; and conversations begun in a terminal with the
real CLI, listed for the page of their folder and resumed from it."""
from __future__ import annotations

import subprocess

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply
from tests.peers import CLAUDE


def test_a_conversation_is_there_after_a_daemon_restart_to_read_and_to_resume(page, daemon, daemon_env, stack,
                                                                              mock, shots):
    mock.add(text_reply("I will remember **otter**."), text_reply("It was otter."))
    panel = Panel(page, daemon).open()
    panel.send("remember the word otter")
    expect(panel.items("assistant")).to_have_text("I will remember otter.")
    panel.expect_status("idle")
    assert daemon.stop() == 0

    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        panel = Panel(page, again).open()
        picker = panel.find("select.session")
        listed = picker.locator("option", has_text="remember the word otter")
        expect(listed).to_have_count(1)
        assert "closed" in listed.text_content()
        picker.select_option(listed.get_attribute("value"))
        panel.expect_status("closed")
        expect(panel.items("user")).to_contain_text("remember the word otter")
        expect(panel.items("assistant")).to_have_text("I will remember otter.")
        expect(panel.items("assistant").locator("strong")).to_have_text("otter")  # rendered, not raw
        shots(page, "14-history-after-restart")
        panel.find(".resume").click()
        panel.expect_status("idle")
        expect(panel.items("assistant").first).to_have_text("I will remember otter.")
        panel.send("which word?")
        expect(panel.items("assistant").last).to_have_text("It was otter.")
        expect(panel.items("user")).to_have_count(2)
    finally:
        assert again.stop() == 0


def test_a_conversation_begun_in_a_terminal_is_listed_and_opens_resumed(page, daemon, daemon_env, stack, mock, shots):
    mock.add(text_reply("Hello from the terminal."))
    done = subprocess.run([str(CLAUDE), "-p", "a question from the terminal", "--output-format", "json"],
                          cwd=stack / "project", env=daemon_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    panel = Panel(page, daemon).open()
    picker = panel.find("select.session")
    begun = picker.locator("optgroup option", has_text="a question from the terminal")
    expect(begun).to_have_count(1)
    mock.add(text_reply("Still the same conversation."))
    picker.select_option(begun.get_attribute("value"))
    expect(panel.items("assistant").first).to_have_text("Hello from the terminal.")
    expect(panel.items("user").first).to_contain_text("a question from the terminal")
    panel.expect_status("idle")
    panel.send("are you there?")
    expect(panel.items("assistant").last).to_have_text("Still the same conversation.")
    # Now a session holds it: listed once, as that session, not under "begun in a terminal".
    expect(picker.locator("optgroup option")).to_have_count(0)
    expect(picker.locator("option", has_text="a question from the terminal")).to_have_count(1)
    shots(page, "15-terminal-conversation-resumed")

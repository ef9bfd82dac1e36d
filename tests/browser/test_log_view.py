"""The chat log in the panel: a minimap of the session's recent records (turns, tools,
approvals) that opens into the list, from the daemon's log stream of this page's directory,
with nothing a person or the agent said in it."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply, tool_use_reply


def test_the_log_minimap_shows_the_sessions_activity_and_opens_into_the_list(page, daemon, mock, shots):
    mock.add(tool_use_reply("Bash", {"command": "touch SECRET-OUTPUT-4.txt", "description": "Make it"}),
             text_reply("SECRET-REPLY-2"))
    panel = Panel(page, daemon).open()
    panel.send("SECRET-PROMPT-1")
    tool = panel.items("tool").first
    tool.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("SECRET-REPLY-2")
    logmap = panel.find(".logmap")
    expect(logmap.locator(".tick.k-turn")).not_to_have_count(0)
    expect(logmap.locator(".tick.k-tool")).not_to_have_count(0)
    expect(logmap.locator(".tick.k-request")).not_to_have_count(0)
    logmap.click()
    listing = panel.find(".loglist")
    expect(listing).to_be_visible()
    expect(listing).to_contain_text("turn.start turn=1")
    expect(listing).to_contain_text("tool.end turn=1")
    expect(listing).to_contain_text("request.answered")
    expect(listing).to_contain_text("turn.end turn=1 outcome=completed")
    shots(page, "17-log")
    text = listing.text_content()
    assert not any(secret in text for secret in ("SECRET-PROMPT-1", "SECRET-REPLY-2", "SECRET-OUTPUT-4"))
    # A new conversation's log starts empty: the minimap follows the attached session.
    panel.find(".new").click()
    expect(listing.locator(".logline")).not_to_have_count(0)  # no session attached: every session of the page

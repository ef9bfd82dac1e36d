"""The chat log in the panel: a minimap of the session's recent records (turns, tools,
approvals) that opens into a list a person reads (the time, what happened in words, a filter by
kind, each record's raw line behind "raw"), from the daemon's log stream of this page's
directory, with nothing a person or the agent said in it."""
from __future__ import annotations

import re

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
    rows = listing.get_by_role("log", name="Chat log").locator(".logline")
    words = rows.locator(".what")
    expect(words.filter(has_text="Turn 1 started")).to_have_count(1)
    expect(words.filter(has_text="Bash started")).to_have_count(1)
    expect(words.filter(has_text=re.compile(r"^Bash done in \d+(\.\d)? s"))).to_have_count(1)
    expect(words.filter(has_text="Approval asked")).to_have_count(1)
    expect(words.filter(has_text=re.compile(r"^Approval answered after \d+(\.\d)? s$"))).to_have_count(1)
    expect(words.filter(has_text=re.compile(r"^Turn 1 completed in \d+(\.\d)? s$"))).to_have_count(1)
    expect(rows.first.locator("time")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    # The raw record is one click away, as the daemon's log has it.
    ended = rows.filter(has=page.locator(".what", has_text="Turn 1 completed"))
    raw = ended.locator("details.raw code")
    expect(raw).not_to_be_visible()
    ended.get_by_text("raw", exact=True).click()
    expect(raw).to_be_visible()
    expect(raw).to_have_text(re.compile(r"^\d\d:\d\d:\d\d turn\.end turn=1 outcome=completed took=\d+(\.\d)?s "))
    shots(page, "17-log")
    # Filtered by kind: only the approvals, then only the tools.
    show = listing.get_by_role("combobox", name="Show in the log")
    expect(show).to_have_attribute("title", "Which records the log shows")
    show.select_option(label="Approvals and questions")
    expect(words).to_have_text(["Approval asked", re.compile(r"^Approval answered after")])
    show.select_option(label="Tools")
    expect(words).to_have_text(["Bash started", re.compile(r"^Bash done in")], use_inner_text=True)
    show.select_option(label="Errors and failures")
    expect(rows).to_have_count(0)
    expect(listing).to_contain_text("Nothing of this kind yet.")
    show.select_option(label="Everything")
    expect(raw).to_be_visible()  # an opened raw line stays open while the list is drawn again
    text = listing.text_content()
    assert not any(secret in text for secret in ("SECRET-PROMPT-1", "SECRET-REPLY-2", "SECRET-OUTPUT-4"))
    # A new conversation's log starts empty: the minimap follows the attached session.
    panel.find(".new").click()
    expect(listing.locator(".logline")).not_to_have_count(0)  # no session attached: every session of the page

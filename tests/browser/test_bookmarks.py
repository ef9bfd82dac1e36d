"""Bookmarks in the panel, on the real Claude Code: a star on a message and on an answer, the
menu of bookmarks that goes to the item (paging it in if it scrolled away), kept across a
reload, and removed again."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply


def test_a_message_is_bookmarked_found_again_from_the_menu_and_unbookmarked(page, daemon, mock, shots):
    mock.add(text_reply("The header is blue now."), *[text_reply(f"Answer {n}. " + "More words. " * 40)
                                                       for n in range(8)])
    panel = Panel(page, daemon).open()
    panel.send("make the header blue")
    expect(panel.items("assistant").first).to_have_text("The header is blue now.")
    first = panel.items("user").first
    first.hover()
    first.get_by_role("button", name="Bookmark this").click()
    expect(first.get_by_role("button", name="Remove the bookmark")).to_be_visible()
    marks = panel.find("button.marks")
    expect(marks).to_have_text("★ 1")
    for n in range(8):  # the bookmarked message scrolls far up
        panel.send(f"and now step {n}")
        expect(panel.items("assistant").last).to_contain_text(f"Answer {n}.")
    expect(first).not_to_be_in_viewport()
    marks.click()
    panel.find(".mark-list").get_by_role("menuitem", name="make the header blue").click()
    expect(first).to_be_in_viewport()
    expect(first).to_have_class("item user flash")
    shots(page, "20-bookmarks")
    panel.reload()
    kept = panel.items("user").first
    expect(kept.get_by_role("button", name="Remove the bookmark")).to_be_attached()
    expect(panel.find("button.marks")).to_have_text("★ 1")
    kept.hover()
    kept.get_by_role("button", name="Remove the bookmark").click()
    expect(panel.find("button.marks")).to_be_hidden()

"""Bookmarks in the panel, on the real Claude Code: a star on a message and on an answer, the
menu of bookmarks that goes to the item (paging it in if it scrolled away), kept across a
reload, and removed again; the menu in plain words (no Markdown marks); the star on a touch screen."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import CHROMIUM, FLAGS
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


def test_the_bookmarks_menu_shows_an_answer_in_plain_words_without_its_markdown(page, daemon, mock):
    mock.add(text_reply("**Done**: the `header` is _blue_ now.\n\n```css\nheader { color: blue; }\n```\n"))
    panel = Panel(page, daemon).open()
    panel.send("make the header blue")
    answer = panel.items("assistant").first
    expect(answer.locator("strong")).to_have_text("Done")
    answer.hover()
    answer.get_by_role("button", name="Bookmark this").click()
    panel.find("button.marks").click()
    entry = panel.find(".mark-list").get_by_role("menuitem")
    expect(entry).to_have_text("Done: the header is blue now. header { color: blue; }")
    expect(entry).to_have_attribute("title", "Done: the header is blue now. header { color: blue; }")
    # After a reload the menu still reads the same words (from the item, or devhostd's excerpt).
    panel.reload()
    panel.find("button.marks").click()
    expect(panel.find(".mark-list").get_by_role("menuitem")).to_have_text(
        "Done: the header is blue now. header { color: blue; }")


@pytest.fixture
def touch_page(playwright, tmp_path):
    """A phone-sized touch screen: no hover, taps instead of clicks."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "touch-profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
        viewport={"width": 390, "height": 844}, has_touch=True, locale="en-US", timezone_id="UTC")
    context.set_default_timeout(60_000)
    yield context.pages[0] if context.pages else context.new_page()
    context.close()


def test_on_a_touch_screen_the_star_shows_without_hover_and_a_tap_bookmarks(touch_page, daemon, mock):
    mock.add(text_reply("Blue it is."))
    panel = Panel(touch_page, daemon).open()
    panel.send("make the header blue")
    expect(panel.items("assistant").first).to_have_text("Blue it is.")
    star = panel.items("user").first.get_by_role("button", name="Bookmark this")
    # Shown as it is, with nothing hovered (a touch screen has no hover), and big enough for a finger.
    expect(star).to_have_css("opacity", "0.6")  # on a pointer with hover it is 0 until hovered
    expect(star).to_have_css("min-height", "32px")
    box = star.bounding_box()
    assert box["width"] >= 32 and box["height"] >= 32
    star.tap()
    expect(panel.items("user").first.get_by_role("button", name="Remove the bookmark")).to_be_visible()
    expect(panel.find("button.marks")).to_have_text("★ 1")

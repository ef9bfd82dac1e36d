"""Reading above while the agent writes, and a turn that failed, in the panel on the real Claude
Code: new content arriving while the person scrolled up shows a "Jump to latest" pill that goes
to the end; a turn that ended in an error (the model's API failing) has a Retry that sends the
last message again, with its images (or, when the page no longer holds them, asks for them
rather than sending the text alone)."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel, drop_image, images_sent, png, png_size
from tests.mock_anthropic import error_reply, message_text, text_reply

LONG_REPLY = "\n\n".join(f"Paragraph {n} of a long answer, with enough words to take a line." for n in range(40))


def test_new_content_while_scrolled_up_shows_jump_to_latest_which_goes_to_the_end(page, daemon, mock, shots):
    mock.add(text_reply(LONG_REPLY), text_reply(*[f"word{n} " for n in range(80)], delay=0.2))
    panel = Panel(page, daemon).open()
    jump = panel.find(".panel").get_by_role("button", name="Jump to latest")
    panel.send("tell me a lot")
    expect(panel.items("assistant").last).to_contain_text("Paragraph 39")
    expect(jump).to_be_hidden()  # at the bottom, the view follows by itself
    panel.send("and now slowly")
    streaming = panel.find(".item.assistant.streaming")
    expect(streaming).to_contain_text("word1 ")
    expect(jump).to_be_hidden()
    panel.find(".log").evaluate("(log) => { log.scrollTop = 0; }")  # the person scrolls up to read
    expect(jump).to_be_visible()  # the next words arrive below
    expect(streaming).not_to_be_in_viewport()
    shots(page, "34-jump-to-latest")
    jump.click()
    expect(streaming).to_be_in_viewport()
    expect(jump).to_be_hidden()
    # Back at the bottom, it follows again: the last words come into view with no pill.
    expect(panel.items("assistant").last).to_contain_text("word79")
    expect(panel.items("assistant").last).to_be_in_viewport()
    expect(jump).to_be_hidden()


def test_a_failed_turn_has_a_retry_that_sends_the_last_message_again(page, daemon, mock, shots):
    # Claude Code retries a 5xx once here (CLAUDE_CODE_MAX_RETRIES=1): both attempts fail.
    mock.add(error_reply(500, "api_error", "The mock model is down", times=2), text_reply("It worked this time."))
    panel = Panel(page, daemon).open()
    panel.send("deploy the preview")
    expect(panel.items("error")).to_contain_text("The mock model is down")
    retry = panel.find(".panel").get_by_role("button", name="Retry")
    expect(retry).to_be_visible()
    expect(retry).to_have_attribute("title", "Send your last message again: “deploy the preview”")
    shots(page, "35-retry")
    retry.click()
    expect(panel.items("assistant")).to_have_text("It worked this time.")
    expect(panel.items("user")).to_have_count(2)
    expect(panel.items("user").last.locator(".bubble")).to_have_text("deploy the preview")
    expect(retry).to_have_count(0)  # the turn that failed is no longer the last
    assert message_text(mock.requests[-1]).count("deploy the preview") >= 1
    assert len(mock.requests) == 3  # the two failed attempts, then the retry


def test_a_retry_sends_the_image_again_and_one_the_page_no_longer_holds_is_asked_for_not_dropped(page, daemon, mock):
    down = ("api_error", "The mock model is down")
    mock.add(error_reply(500, *down, times=2), text_reply("A red rectangle."), error_reply(500, *down, times=2))
    panel = Panel(page, daemon).open()
    drop_image(page, png(37, 23))
    expect(panel.find(".tray .thumb")).to_have_count(1)
    panel.send("what is in this image?")
    expect(panel.items("error")).to_contain_text("The mock model is down")
    panel.find(".panel").get_by_role("button", name="Retry").click()
    expect(panel.items("assistant")).to_have_text("A red rectangle.")
    assert len(mock.requests) == 3
    # Claude Code sends the failed message and the retry as one user message: the retry carried
    # the image again (two in it), not the text alone (which would leave the first one only).
    assert [png_size(image) for image in images_sent(mock.requests[0])] == [(37, 23)]
    assert [png_size(image) for image in images_sent(mock.requests[-1])] == [(37, 23), (37, 23)]
    expect(panel.items("user").last.locator("img")).to_have_count(1)

    drop_image(page, png(12, 9))
    panel.send("and this one?")
    expect(panel.items("error")).to_have_count(2)  # the first turn's stays above
    expect(panel.items("error").last).to_contain_text("The mock model is down")
    assert len(mock.requests) == 5
    panel.reload()  # the page keeps the message and its image's count, not the image
    panel.find(".panel").get_by_role("button", name="Retry").click()
    expect(panel.find(".hint")).to_contain_text("sent with its image, which this page no longer holds")
    expect(panel.find("textarea")).to_have_value("and this one?")  # back in the box, to send with the image
    # Refused, the Retry is given back: the person attaches the image and may press it again.
    expect(panel.find(".panel").get_by_role("button", name="Retry")).to_be_enabled()
    page.wait_for_timeout(500)
    assert len(mock.requests) == 5  # nothing went out without it

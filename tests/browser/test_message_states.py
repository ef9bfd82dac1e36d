"""True message states through interrupt and reload, on the real CLIs: a follow-up queued behind
a running turn that the person interrupts never reaches the model (Claude Code cancels its
queued input), so it reads "not sent" — also after a reload — with Send again and Edit, never
"queued" for good or a plain sent message; sent again or edited, it keeps its images. Codex
takes a follow-up up at once (a steer), so there it reads started and reached the model."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel, drop_image, images_sent, png, png_size
from tests.mock_anthropic import message_text as anthropic_text, text_reply
from tests.mock_openai import message_text as openai_text, text_reply as openai_reply

FOLLOW_UP = "and then count the tests"


def follow_up_behind_a_turn_then_interrupt(panel: Panel, image: bytes | None = None) -> None:
    panel.send("a long task")
    panel.expect_status("running")
    expect(panel.items("assistant").first).to_contain_text("working")  # the model is streaming
    if image is not None:
        drop_image(panel.page, image)
        expect(panel.find(".tray .thumb")).to_have_count(1)
    panel.send(FOLLOW_UP)
    follow_up = panel.items("user").last
    expect(follow_up.locator(".delivery")).to_have_text("queued")
    panel.find(".stop").click()
    expect(panel.items("notice")).to_contain_text("Interrupted.")
    panel.expect_status("idle")


def expect_not_sent(panel: Panel, reason: str) -> None:
    follow_up = panel.items("user").filter(has_text=FOLLOW_UP)
    expect(follow_up.locator(".delivery")).to_have_attribute("data-state", "not-sent")
    expect(follow_up.locator(".delivery")).to_contain_text(reason)
    expect(follow_up.get_by_role("button", name="Send again")).to_be_visible()
    expect(follow_up.get_by_role("button", name="Edit")).to_be_visible()


def test_a_follow_up_an_interrupt_cancelled_reads_not_sent_also_after_a_reload_and_can_be_sent_again(
        page, daemon, mock, shots):
    mock.add(text_reply(*["working "] * 60, delay=0.1), text_reply("Counted them."))
    panel = Panel(page, daemon).open()
    follow_up_behind_a_turn_then_interrupt(panel)
    expect_not_sent(panel, "not sent: an interrupt cancelled it before Claude Code took it up")
    panel.reload()
    expect_not_sent(panel, "not sent: an interrupt cancelled it before Claude Code took it up")
    shots(page, "28-follow-up-not-sent")
    # What the page shows is what the model got: the follow-up never reached it.
    assert len(mock.requests) == 1 and FOLLOW_UP not in anthropic_text(mock.requests[0])
    follow_up = panel.items("user").filter(has_text=FOLLOW_UP).first
    follow_up.get_by_role("button", name="Send again").click()
    expect(panel.items("assistant").last).to_have_text("Counted them.")
    assert FOLLOW_UP in anthropic_text(mock.requests[-1])
    expect(follow_up.locator(".delivery")).to_contain_text("sent again below")
    expect(follow_up.get_by_role("button", name="Send again")).to_have_count(0)
    expect(panel.items("user").last.locator(".delivery")).to_have_text("started")


def test_edit_takes_a_message_that_was_not_sent_back_into_the_composer(page, daemon, mock):
    mock.add(text_reply(*["working "] * 60, delay=0.1))
    panel = Panel(page, daemon).open()
    follow_up_behind_a_turn_then_interrupt(panel)
    panel.items("user").filter(has_text=FOLLOW_UP).get_by_role("button", name="Edit").click()
    expect(panel.find("textarea")).to_have_value(FOLLOW_UP)
    expect(panel.find("textarea")).to_be_focused()


def test_a_codex_follow_up_is_taken_up_at_once_so_after_interrupt_and_reload_it_reads_as_reaching_the_model(
        page, daemon, openai):
    """Codex differs (measured): a message sent during a turn is a steer it takes up at once — it
    starts a new model request with it — so the follow-up reads started, reached the model, and
    an interrupt after that leaves nothing unsent."""
    openai.add(openai_reply(*["working "] * 60, delay=0.1), openai_reply(*["still working "] * 60, delay=0.1))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("a long task")
    panel.expect_status("running")
    expect(panel.items("assistant").first).to_contain_text("working")
    panel.send(FOLLOW_UP)
    follow_up = panel.items("user").filter(has_text=FOLLOW_UP)
    expect(follow_up.locator(".delivery")).to_have_text("started")
    expect(panel.items("assistant").last).to_contain_text("still working")
    assert FOLLOW_UP in openai_text(openai.requests[-1])
    panel.find(".stop").click()
    expect(panel.items("notice")).to_contain_text("Interrupted.")
    panel.reload()
    expect(follow_up.locator(".delivery")).not_to_have_attribute("data-state", "not-sent")
    expect(follow_up.get_by_role("button", name="Send again")).to_have_count(0)


def test_a_not_sent_message_keeps_its_image_when_edited_or_sent_again(page, daemon, mock):
    mock.add(text_reply(*["working "] * 60, delay=0.1), text_reply("Counted them."))
    panel = Panel(page, daemon).open()
    follow_up_behind_a_turn_then_interrupt(panel, image=png(21, 13))
    follow_up = panel.items("user").filter(has_text=FOLLOW_UP).first
    follow_up.get_by_role("button", name="Edit").click()
    expect(panel.find("textarea")).to_have_value(FOLLOW_UP)
    expect(panel.find(".tray .thumb")).to_have_count(1)  # the image is back with the text
    page.evaluate("() => window.__devhostChat.composer.clear()")  # the person sends it as it was instead
    follow_up.get_by_role("button", name="Send again").click()
    expect(panel.items("assistant").last).to_have_text("Counted them.")
    assert FOLLOW_UP in anthropic_text(mock.requests[-1])
    assert [png_size(image) for image in images_sent(mock.requests[-1])] == [(21, 13)]

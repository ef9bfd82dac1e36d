"""The context meter, the cost and Compact in the panel, on the real Claude Code: after a turn the
composer's row shows how much of the context the last model request held and what the
conversation cost, as devhostd's info says; Compact folds the conversation into a summary as a
turn of its own, and the conversation goes on after it."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.browser.core_list import core_info
from tests.integration.daemon import wait_until
from tests.mock_anthropic import message_text, text_reply


def test_the_meter_shows_the_context_and_cost_devhostd_knows_and_compact_folds_the_conversation(
        page, daemon, mock, shots):
    mock.add(text_reply("first answer"), text_reply("Summary of the conversation."))
    panel = Panel(page, daemon).open()
    compact = panel.find(".panel").get_by_role("button", name="Compact conversation")
    meter = panel.find(".panel").get_by_role("note", name="Context and cost")
    expect(compact).to_be_disabled()
    expect(compact).to_have_attribute("title", "Compact conversation: there is no conversation to compact yet")
    expect(meter).to_be_hidden()
    panel.send("hello")
    expect(panel.items("assistant")).to_have_text("first answer")
    [record] = daemon.sessions()
    # The turn's result frame (after the reply's text) is what tells the context and the cost.
    wait_until(lambda: "contextWindow" in core_info(daemon, record["chatId"])["usage"], what="the result's usage")
    usage = core_info(daemon, record["chatId"])["usage"]
    # The mock's answer is tiny: 10 tokens of a 1M window, a fraction of a cent.
    assert 0 < usage["contextTokens"] < usage["contextWindow"] / 100 and 0 < usage["costUsd"] < 0.01, usage
    expect(meter.locator(".words")).to_have_text(f"<1% context · ${usage['costUsd']:.4f}")
    expect(meter).to_have_attribute("title", f"{usage['contextTokens']:,} of {usage['contextWindow']:,} tokens "
                                    f"of context used by the last model request; ${usage['costUsd']:.4f} spent "
                                    "on this conversation so far")
    expect(compact).to_be_enabled()
    shots(page, "36-context-meter")
    compact.click()
    expect(panel.items("notice").last).to_have_text("The conversation was compacted.")
    expect(compact).to_be_enabled()  # the fold's turn ended
    # The conversation goes on after the fold (how many requests the fold itself makes is the CLI's).
    panel.send("and now?")
    expect(panel.items("user").last.locator(".delivery")).to_have_text("started")
    panel.expect_status("idle")
    wait_until(lambda: "and now?" in message_text(mock.requests[-1]), what="the next message at the model")

"""The chat panel in Chromium with the real Codex CLI (`codex app-server`) behind it."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_openai import message_text, shell_reply, text_reply


def test_a_codex_conversation_with_an_accepted_and_a_declined_command(page, daemon, openai, stack, shots):
    openai.add(text_reply("Hello ", "from Codex."),
               shell_reply("touch accepted.txt", justification="to make the file you asked for"), text_reply("Done."),
               shell_reply("touch declined.txt", justification="to make the other file"), text_reply("Left it."))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("say hello")
    expect(panel.items("assistant")).to_have_text("Hello from Codex.")
    panel.expect_status("idle")
    expect(panel.find("select.harness")).to_be_disabled()  # the attached session's harness
    expect(panel.find(".delivery")).to_have_text("started")

    panel.send("make the file")
    panel.expect_status("requires_action")
    approval = panel.items("tool").first  # the command asks inside its own card
    expect(approval).to_contain_text("touch accepted.txt")
    expect(approval).to_contain_text("to make the file you asked for")
    expect(panel.items("approval")).to_have_count(0)
    shots(page, "09-codex-approval")
    approval.get_by_role("button", name="Accept", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Done.")
    expect(panel.items("tool").first).to_have_attribute("data-status", "done")
    assert (stack / "project" / "accepted.txt").exists()

    panel.send("and the other one")
    panel.items("tool").nth(1).get_by_role("button", name="Decline").click()
    expect(panel.items("assistant").last).to_have_text("Left it.")
    expect(panel.items("tool").nth(1)).to_have_attribute("data-status", "error")
    expect(panel.items("tool").nth(1)).to_contain_text("declined")
    panel.expect_status("idle")
    assert not (stack / "project" / "declined.txt").exists()
    assert "and the other one" in message_text(openai.requests[-1])
    # After a reload the page still says what the person answered: the decision is an item's.
    panel.reload()
    expect(panel.items("tool").nth(0)).to_contain_text("You accepted.")
    expect(panel.items("tool").nth(1)).to_contain_text("You declined.")


def test_closing_a_session_and_resuming_it_from_the_panel(page, daemon, openai, shots):
    openai.add(text_reply("I will remember pelican."), text_reply("You said pelican."))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("remember the word pelican")
    expect(panel.items("assistant")).to_have_text("I will remember pelican.")
    panel.expect_status("idle")
    expect(panel.find(".badge")).to_have_text("idle")
    panel.find(".end").click()
    panel.expect_status("closed")
    expect(panel.find(".resume")).to_be_visible()
    shots(page, "10-closed-session")
    closed_id = panel.find("select.session").input_value()
    panel.find(".resume").click()
    expect(panel.find("select.session")).not_to_have_value(closed_id)
    expect(panel.items("assistant").first).to_have_text("I will remember pelican.")  # the transcript stays
    panel.send("what word?")
    expect(panel.items("assistant").last).to_have_text("You said pelican.")
    assert "remember the word pelican" in message_text(openai.requests[-1])

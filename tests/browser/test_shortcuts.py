"""The panel's keyboard shortcuts in Chromium, with the real Claude Code CLI on the mock model
server: each does what the "Keyboard shortcuts" help says, and none but the global open/close
fires while the person types in the page's own inputs."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply

PAGE_INPUT = """() => { const input = document.createElement('input'); input.id = 'page-input';
  input.setAttribute('aria-label', 'A field of the page'); document.body.append(input); }"""


def _focused_in_panel(page) -> str | None:
    """The class of the panel's element that has the focus (None when the focus is not in the panel)."""
    return page.evaluate("() => document.querySelector('devhost-chat').shadowRoot.activeElement?.className ?? null")


def test_alt_shift_d_opens_the_panel_into_the_message_and_closes_it_from_inside_even_from_a_page_field(page, daemon):
    """Alt+Shift+D works anywhere on the page: closed, it opens the panel with the cursor in the
    message; open with the focus on the page, it puts the cursor in the message; with the focus
    in the panel it closes it and gives the focus back to the page's field."""
    panel = Panel(page, daemon).load()
    page.evaluate(PAGE_INPUT)
    field = page.locator("#page-input")
    expect(panel.find(".launcher")).to_have_attribute("aria-keyshortcuts", "Alt+Shift+D")
    expect(panel.find(".launcher")).to_have_attribute("title", "devhost chat (Alt+Shift+D)")
    expect(panel.find(".panel")).to_be_hidden()
    field.focus()
    page.keyboard.press("Alt+Shift+D")
    expect(panel.find(".panel")).to_be_visible()
    expect(panel.find("textarea")).to_be_focused()
    field.focus()
    page.keyboard.press("Alt+Shift+D")  # open, focus on the page: into the message
    expect(panel.find(".panel")).to_be_visible()
    expect(panel.find("textarea")).to_be_focused()
    page.keyboard.press("Alt+Shift+D")  # from inside: closed, the page's field has the focus back
    expect(panel.find(".panel")).to_be_hidden()
    expect(field).to_be_focused()
    expect(field).to_have_value("")  # the shortcut typed nothing into the page


def test_the_help_lists_the_shortcuts_from_its_button_or_question_mark_and_not_from_typing(page, daemon, shots):
    """The header's "?" button and "?" pressed in the panel (outside the message) open the
    "Keyboard shortcuts" help; Escape closes it. "?" typed in the message or in the page's own
    field is just a character."""
    panel = Panel(page, daemon).open()
    page.evaluate(PAGE_INPUT)
    button = panel.find("button.help")
    expect(button).to_have_attribute("aria-label", "Keyboard shortcuts")
    expect(button).to_have_attribute("title", "Keyboard shortcuts (?)")
    help_ = panel.find(".shortcuts-help[role=dialog]")
    expect(help_).to_be_hidden()
    button.click()
    expect(help_).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(help_.locator("dt kbd")).to_contain_text(["Alt+Shift+D", "Enter", "Ctrl+Enter / ⌘+Enter", "Shift+Enter",
                                                      "↑", "Ctrl+C"])
    expect(help_).to_contain_text("never interrupts the agent")
    shots(page, "26-keyboard-shortcuts")
    page.keyboard.press("Escape")
    expect(help_).to_be_hidden()
    expect(button).to_be_focused()  # back where the focus was

    panel.find(".log").focus()
    page.keyboard.press("Shift+Slash")  # "?"
    expect(help_).to_be_visible()
    help_.get_by_role("button", name="Close the keyboard shortcuts").click()
    expect(help_).to_be_hidden()

    textarea = panel.find("textarea")
    textarea.focus()
    page.keyboard.press("Shift+Slash")
    expect(textarea).to_have_value("?")
    page.locator("#page-input").focus()
    page.keyboard.press("Shift+Slash")
    expect(page.locator("#page-input")).to_have_value("?")
    expect(help_).to_be_hidden()


def test_up_recalls_the_last_message_in_an_empty_composer_and_ctrl_enter_sends(page, daemon, mock):
    """↑ in an empty message brings back the last message of the conversation (and only there:
    the page's own field keeps its ↑); Ctrl+Enter sends it again."""
    mock.add(text_reply("First answer."), text_reply("Second answer."))
    panel = Panel(page, daemon).open()
    page.evaluate(PAGE_INPUT)
    textarea = panel.find("textarea")
    textarea.focus()
    page.keyboard.press("ArrowUp")
    expect(textarea).to_have_value("")  # nothing sent yet: nothing to recall
    textarea.fill("the first message")
    page.keyboard.press("Control+Enter")
    expect(panel.items("assistant")).to_have_text("First answer.")
    panel.expect_status("idle")
    expect(textarea).to_have_value("")
    page.locator("#page-input").focus()
    page.keyboard.press("ArrowUp")
    expect(textarea).to_have_value("")  # the page's field: not the panel's shortcut
    textarea.focus()
    page.keyboard.press("ArrowUp")
    expect(textarea).to_have_value("the first message")
    page.keyboard.type(", again")
    page.keyboard.press("Control+Enter")
    expect(panel.items("user").nth(1)).to_contain_text("the first message, again")
    expect(panel.items("assistant").nth(1)).to_have_text("Second answer.")


def test_ctrl_c_in_an_empty_message_interrupts_and_escape_never_does(page, daemon, mock):
    """While the agent works, Escape in the message closes the panel (a dialog) and leaves the turn
    running to its end; Ctrl+C with text in the message leaves it too; Ctrl+C in an empty message
    interrupts the turn."""
    words = [f"w{n} " for n in range(12)]
    mock.add(text_reply(*words, delay=0.15), text_reply(*["slow "] * 80, delay=0.2))
    panel = Panel(page, daemon).open()
    textarea = panel.find("textarea")
    panel.send("a short story")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("w1")
    textarea.focus()
    page.keyboard.press("Escape")
    expect(panel.find(".panel")).to_be_hidden()
    panel.find(".launcher").click()
    expect(panel.items("assistant")).to_have_text("".join(words).rstrip())  # the whole reply: not interrupted
    panel.expect_status("idle")
    expect(panel.items("notice")).to_have_count(0)

    panel.send("a long story")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("slow")
    textarea.focus()
    textarea.fill("a draft")
    page.keyboard.press("Control+c")
    expect(textarea).to_have_value("a draft")  # with text in the message Ctrl+C is the browser's
    panel.expect_status("running")
    textarea.fill("")
    page.keyboard.press("Control+c")
    expect(panel.items("notice")).to_contain_text("Interrupted.")
    panel.expect_status("idle")

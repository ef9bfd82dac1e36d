"""The composer's completion in Chromium, with the real Claude Code CLI on the mock model server:
"/" lists the session's slash commands and skills, "@" the files of the page's checkout; a
picked file goes to the CLI as its own file reference."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import message_text, text_reply

MARKER = "Inside the mentioned file: a marker, mention-5c1e."
SKILL = "---\nname: greet\ndescription: Says hello the greet way.\n---\n\nSay hello, skill-body-greet.\n"


def _listbox(panel: Panel):
    return panel.find("ul.completion[role=listbox]")


def _active_option(panel: Panel) -> str:
    """The option the combobox names as active (aria-activedescendant), as the person reads it."""
    active = panel.find("textarea").get_attribute("aria-activedescendant")
    assert active, "no option is active"
    return panel.find(f"#{active} .name").text_content()


def _type(panel: Panel, text: str) -> None:
    panel.find("textarea").press_sequentially(text)


def test_slash_lists_the_sessions_commands_and_skills_and_the_keys_move_pick_and_close(page, daemon, mock, stack):
    """After the first answer, "/" opens a list of the CLI's slash commands and the folder's
    skills; arrows move the active option, Escape closes the list, Tab picks; the picked skill
    runs as the CLI's own command."""
    skill = stack / "project" / ".claude" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    mock.add(text_reply("First answer."), text_reply("Hello."))
    panel = Panel(page, daemon).open()
    panel.send("hello")
    expect(panel.items("assistant")).to_have_text("First answer.")
    panel.expect_status("idle")

    textarea = panel.find("textarea")
    expect(textarea).to_have_attribute("role", "combobox")
    expect(textarea).to_have_attribute("aria-expanded", "false")
    textarea.focus()
    _type(panel, "/")
    listbox = _listbox(panel)
    expect(listbox).to_be_visible()
    expect(textarea).to_have_attribute("aria-expanded", "true")
    expect(listbox.locator("[role=option] .name", has_text="/compact")).to_have_count(1)  # the CLI's own
    greet = listbox.locator("[role=option]", has=page.locator(".name", has_text="/greet"))
    expect(greet).to_contain_text("Says hello the greet way. (project skill)")
    first = _active_option(panel)
    textarea.press("ArrowDown")
    second = _active_option(panel)
    assert second != first
    expect(listbox.locator("[aria-selected=true]")).to_have_count(1)
    textarea.press("ArrowUp")
    assert _active_option(panel) == first
    textarea.press("Escape")
    expect(listbox).to_be_hidden()
    expect(textarea).to_have_attribute("aria-expanded", "false")
    expect(textarea).to_have_value("/")  # Escape only closed the list

    _type(panel, "gree")
    expect(listbox).to_be_visible()
    assert _active_option(panel) == "/greet"
    textarea.press("Tab")
    expect(textarea).to_have_value("/greet ")
    expect(listbox).to_be_hidden()
    _type(panel, "the reader")
    textarea.press("Enter")  # the list is closed: Enter sends
    expect(panel.items("assistant").nth(1)).to_have_text("Hello.")
    expect(panel.items("user").nth(1)).to_contain_text("/greet the reader")
    assert "skill-body-greet" in message_text(mock.requests[-1])  # Claude Code ran its own /greet
    # The page sent it as the skill it picked (the send's `skills`), not as text that looks like one.
    sent = page.evaluate("""() => [...window.__devhostChat.transcript.items.values()]
                            .filter((i) => i.kind === 'user').map((i) => [i.text, i.skills || null])""")
    assert sent == [["hello", None], ["the reader", ["greet"]]]


def test_at_lists_the_checkouts_files_and_a_picked_file_reaches_the_cli_as_its_file_reference(page, daemon, mock,
                                                                                               stack, shots):
    """"@" lists the files of the page's checkout (not node_modules); Enter picks one, and the
    message goes with it as Claude Code's own @-reference, which the CLI reads into the prompt."""
    project = stack / "project"
    (project / "docs").mkdir()
    (project / "docs" / "notes.md").write_text(MARKER + "\n")
    (project / "src").mkdir()
    (project / "src" / "notes_view.js").write_text("export {};\n")
    (project / "node_modules" / "dep").mkdir(parents=True)
    (project / "node_modules" / "dep" / "notes.js").write_text("module.exports = {};\n")
    mock.add(text_reply("ok"))
    panel = Panel(page, daemon).open()
    textarea = panel.find("textarea")
    textarea.focus()
    _type(panel, "Read @notes")
    listbox = _listbox(panel)
    expect(listbox).to_be_visible()
    names = listbox.locator("[role=option] .name")
    expect(names).to_have_text(["docs/notes.md", "src/notes_view.js"])  # the dependency folder is left out
    shots(page, "25-completion-files")
    textarea.press("Enter")  # picks, does not send
    expect(textarea).to_have_value("Read @docs/notes.md ")
    _type(panel, "and say ok.")
    textarea.press("Enter")
    expect(panel.items("user")).to_contain_text("Read docs/notes.md and say ok.")
    expect(panel.items("assistant")).to_have_text("ok")
    said = message_text(mock.requests[-1])
    assert MARKER in said  # the CLI read the file itself: its @docs/notes.md reference


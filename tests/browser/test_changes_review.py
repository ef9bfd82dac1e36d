"""A turn's changed files in the panel (web/static/chat/changes.js), end to end: the real Claude
Code writes the page's module on a real Vite dev server behind devhostd; the turn's `changes` item
is a line under it ("1 file changed +1 −1") that opens a review of the files and their hunks;
Revert file, asked first in words, puts the file back (the page shows the old text after its hot
reload); a file edited on disk since the turn is a conflict that names it and offers Revert anyway;
Revert hunk undoes one part of a file and the review shows the part left; Undo turn and Rewind
(the turn out of the conversation too) say first what they will do.
The review is a modal dialog: Escape closes it (not the panel), the focus goes back to the line,
and axe-core finds nothing serious in it, light or dark. How a `changes` item is drawn (one file,
many, skipped files, the note when there is no checkpoint, nothing at all) is read from the
transcript as the panel builds it."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.a11y import assert_clean_in_both_themes
from tests.browser.panel import Panel
from tests.browser.test_reloads import INDEX, main_js
from tests.mock_anthropic import text_reply, tool_use_reply
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import vite, vite_port, write_config  # noqa: F401 - fixtures

MINUS = "\u2212"


@pytest.fixture
def stack(tmp_path, vite_port):
    """app.localhost proxies to the Vite dev server of project/, whose main.js writes "version N"."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    write_config(tmp_path / "project", "plain")
    (tmp_path / "project" / "index.html").write_text(INDEX)
    (tmp_path / "project" / "main.js").write_text(main_js(1))
    return tmp_path


def a_turn_that_writes_version(panel: Panel, page, mock, project, version: int):
    """The agent rewrites main.js to ``version`` (the person allows the Write); the page hot-updates.
    Returns the turn's `changes` line."""
    mock.add(tool_use_reply("Write", {"file_path": str(project / "main.js"), "content": main_js(version)}),
             text_reply(f"Now it says version {version}."))
    panel.send(f"make it version {version}")
    panel.items("tool").last.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text(f"Now it says version {version}.")
    expect(page.locator("#app")).to_have_text(f"version {version}")
    line = panel.items("changes").last
    expect(line).to_be_visible()
    return line


def review(panel: Panel):
    return panel.find(".changes-review")


def test_a_turns_changes_open_in_a_review_and_revert_file_puts_the_page_back(page, daemon, vite, mock):
    panel = Panel(page, daemon).open()
    expect(page.locator("#app")).to_have_text("version 1")
    line = a_turn_that_writes_version(panel, page, mock, vite, 2)
    opener = line.get_by_role("button", name=f"1 file changed +1 {MINUS}1")
    expect(opener).to_be_visible()

    opener.click()
    dialog = page.get_by_role("dialog", name="Changes of this turn")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".changes-sum")).to_have_text(f"1 file changed +1 {MINUS}1")
    expect(dialog.locator(".changes-list")).to_contain_text("modified")
    expect(dialog.locator(".changes-list")).to_contain_text("main.js")
    # The hunk, as devhostd's checkpoint store made it: the line before and the line after.
    hunk = dialog.locator(".changes-hunk")
    expect(hunk).to_have_count(1)
    expect(hunk.locator(".line.del")).to_have_text('-document.getElementById("app").textContent = "version 1";')
    expect(hunk.locator(".line.add")).to_have_text('+document.getElementById("app").textContent = "version 2";')
    expect(hunk.get_by_role("button", name=re.compile(r"^Revert hunk @@ .* @@ of main\.js$"))).to_be_visible()
    expect(dialog.get_by_role("button", name="Undo turn")).to_be_enabled()
    expect(dialog.get_by_role("button", name="Rewind")).to_be_enabled()
    assert_clean_in_both_themes(page, "the review of a turn's changes")
    page.emulate_media(color_scheme="light")

    # Escape closes the review, not the panel, and the focus is back on the line that opened it.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(panel.find(".panel")).to_be_visible()
    expect(opener).to_be_focused()
    page.keyboard.press("Enter")  # the keyboard opens it again
    expect(dialog).to_be_visible()

    dialog.get_by_role("button", name="Revert file main.js").click()
    question = dialog.get_by_role("alertdialog")
    expect(question).to_have_text(re.compile(r"^Put main\.js back as it was before this turn\?"))
    expect(question.get_by_role("button", name="Cancel")).to_be_focused()  # the safe answer is the default
    page.keyboard.press("Escape")  # answers the question only
    expect(question).to_be_hidden()
    expect(dialog).to_be_visible()
    assert "version 2" in (vite / "main.js").read_text()

    dialog.get_by_role("button", name="Revert file main.js").click()
    question.get_by_role("button", name="Revert file").click()
    expect(page.locator("#app")).to_have_text("version 1")  # put back on disk; Vite's hot update shows it
    assert (vite / "main.js").read_text() == main_js(1)
    expect(dialog.get_by_role("status")).to_have_text("Put back: main.js.")
    # The review reloaded what is left of the turn's changes: nothing.
    expect(dialog.locator(".changes-sum")).to_have_text("No changes left")
    expect(dialog.locator(".changes-file")).to_have_count(0)
    expect(dialog.get_by_role("button", name="Undo turn")).to_be_disabled()
    dialog.get_by_role("button", name="Close the review").click()
    expect(dialog).to_be_hidden()
    expect(line).to_have_text("1 file put back as before this turn")  # the item, republished
    expect(panel.find("textarea")).to_be_focused()  # the line's button went with the files


def test_a_file_changed_on_disk_since_the_turn_is_a_conflict_that_can_be_reverted_anyway(page, daemon, vite, mock):
    panel = Panel(page, daemon).open()
    expect(page.locator("#app")).to_have_text("version 1")
    line = a_turn_that_writes_version(panel, page, mock, vite, 2)
    (vite / "main.js").write_text(main_js(7))  # the person edits it after the turn
    expect(page.locator("#app")).to_have_text("version 7")

    line.get_by_role("button", name=re.compile(r"^1 file changed")).click()
    dialog = page.get_by_role("dialog", name="Changes of this turn")
    dialog.get_by_role("button", name="Revert file main.js").click()
    question = dialog.get_by_role("alertdialog")
    question.get_by_role("button", name="Revert file").click()
    # Nothing written: the question now names the file that changed since, and offers to go on.
    expect(question).to_contain_text("changed since the turn")
    expect(question.locator(".changes-conflict li")).to_have_text(["main.js"])
    assert (vite / "main.js").read_text() == main_js(7)
    expect(page.locator("#app")).to_have_text("version 7")
    question.get_by_role("button", name="Revert anyway").click()
    expect(page.locator("#app")).to_have_text("version 1")
    assert (vite / "main.js").read_text() == main_js(1)
    expect(dialog.get_by_role("status")).to_have_text("Put back: main.js.")


def test_undo_turn_puts_every_file_back_after_saying_how_many(page, daemon, vite, mock):
    panel = Panel(page, daemon).open()
    expect(page.locator("#app")).to_have_text("version 1")
    line = a_turn_that_writes_version(panel, page, mock, vite, 3)
    line.get_by_role("button", name=re.compile(r"^1 file changed")).click()
    dialog = page.get_by_role("dialog", name="Changes of this turn")
    dialog.get_by_role("button", name="Undo turn").click()
    question = dialog.get_by_role("alertdialog")
    expect(question).to_contain_text("Put the 1 file of this turn back as they were before it? "
                                     "The conversation stays as it is.")
    question.get_by_role("button", name="Undo turn").click()
    expect(page.locator("#app")).to_have_text("version 1")
    expect(dialog.locator(".changes-sum")).to_have_text("No changes left")


def test_revert_hunk_undoes_one_part_of_a_file_and_the_review_shows_the_part_left(page, daemon, vite, mock):
    lines = [f"line {n}" for n in range(1, 31)]
    (vite / "notes.txt").write_text("\n".join(lines) + "\n")
    changed_lines = ["LINE 1", *lines[1:29], "LINE 30"]  # far apart: two hunks
    written = "\n".join(changed_lines) + "\n"
    mock.add(tool_use_reply("Write", {"file_path": str(vite / "notes.txt"), "content": written}),
             text_reply("Shouted the ends."))
    panel = Panel(page, daemon).open()
    panel.send("shout the first and last lines")
    panel.items("tool").last.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Shouted the ends.")
    panel.items("changes").last.get_by_role("button", name=f"1 file changed +2 {MINUS}2").click()
    dialog = page.get_by_role("dialog", name="Changes of this turn")
    hunks = dialog.locator(".changes-hunk")
    expect(hunks).to_have_count(2)
    hunks.first.get_by_role("button", name=re.compile(r"^Revert hunk ")).click()
    question = dialog.get_by_role("alertdialog")
    expect(question).to_contain_text("of notes.txt? The rest of the file stays as it is.")
    question.get_by_role("button", name="Revert hunk").click()
    expect(dialog.get_by_role("status")).to_have_text("Undid that part of notes.txt.")
    expect(dialog.locator(".changes-sum")).to_have_text(f"1 file changed +1 {MINUS}1")
    expect(hunks).to_have_count(1)
    expect(hunks.locator(".line.add")).to_have_text("+LINE 30")
    assert (vite / "notes.txt").read_text() == "\n".join([*lines[:29], "LINE 30"]) + "\n"


def test_rewind_puts_the_files_back_takes_the_turn_out_of_the_conversation_and_says_what_it_did(
        page, daemon, vite, mock):
    panel = Panel(page, daemon).open()
    expect(page.locator("#app")).to_have_text("version 1")
    line = a_turn_that_writes_version(panel, page, mock, vite, 4)
    line.get_by_role("button", name=re.compile(r"^1 file changed")).click()
    dialog = page.get_by_role("dialog", name="Changes of this turn")
    dialog.get_by_role("button", name="Rewind").click()
    question = dialog.get_by_role("alertdialog")
    expect(question).to_contain_text("Put the 1 file back as they were before this turn, and take the conversation "
                                     "back to before it?")
    question.get_by_role("button", name="Rewind").click()
    expect(page.locator("#app")).to_have_text("version 1")
    assert (vite / "main.js").read_text() == main_js(1)
    said = dialog.get_by_role("status")
    expect(said).to_have_text(re.compile(r"^Rewound to before that turn: 1 file\(s\) put back"))
    expect(dialog.locator(".changes-sum")).to_have_text("No changes left")
    note = said.inner_text()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # The turn is out of the conversation: its message, answer and line are gone, the note says what happened.
    expect(panel.items("user")).to_have_count(0)
    expect(panel.items("changes")).to_have_count(0)
    expect(panel.items("notice").last).to_have_text(note)
    expect(panel.find("textarea")).to_be_focused()


# ---- how a changes item is drawn ---------------------------------------------------------------

SHOW = """([session, items]) => {
    const panel = window.__devhostChat;
    panel.attach(session);
    panel.connection.stop();
    panel.connection = { send: () => true, stop() {} };
    panel._onFrame({type: "snapshot", session, seq: items.length, info: null, items});
}"""


def shown(page, daemon, *changes):
    """The panel (on the page without an upstream: no Vite needed) showing one turn (a message,
    an answer) followed by ``changes`` items."""
    panel = Panel(page, daemon, "other.localhost").open()
    items = [{"id": "turn-1", "kind": "turn", "state": "completed"},
             {"id": "user-1", "kind": "user", "turnId": "turn-1", "text": "change things"},
             {"id": "assistant-1", "kind": "assistant", "turnId": "turn-1", "text": "Changed."},
             *({"turnId": "turn-1", "kind": "changes", **c} for c in changes)]
    record = {"id": "drawn", "harness": "claude-code", "status": "idle", "projectRootPath": "/nowhere"}
    page.evaluate(SHOW, [record, items])
    expect(panel.items("assistant")).to_have_text("Changed.")
    return panel


def changed(path, added, removed, status="modified"):
    return {"path": path, "status": status, "added": added, "removed": removed}


def test_a_changes_item_is_a_line_of_its_files_and_counts_with_what_was_skipped(page, daemon):
    panel = shown(page, daemon,
                  {"id": "changes-a", "files": [changed("src/App.jsx", 3, 1)], "added": 3, "removed": 1},
                  {"id": "changes-b", "files": [changed("a.txt", 1, 0, "added"), changed("b.txt", 0, 4, "deleted")],
                   "added": 1, "removed": 4, "skipped": ["big.bin", "huge.log"]})
    lines = panel.items("changes")
    expect(lines).to_have_count(2)
    expect(lines.nth(0).get_by_role("button")).to_have_text(f"1 file changed +3 {MINUS}1")
    expect(lines.nth(1).get_by_role("button")).to_have_text(f"2 files changed +1 {MINUS}4")
    expect(lines.nth(1)).to_contain_text("(2 skipped: too large)")


def test_a_turn_without_a_checkpoint_shows_why_one_put_back_says_so_and_one_with_nothing_shows_nothing(page, daemon):
    panel = shown(page, daemon,
                  {"id": "changes-a", "files": [], "added": 0, "removed": 0,
                   "note": "No checkpoint: the folder could not be read in time."},
                  {"id": "changes-b", "files": [], "added": 0, "removed": 0},
                  {"id": "changes-c", "files": [], "added": 0, "removed": 0, "reverted": ["a.txt", "b.txt"]})
    lines = panel.items("changes")
    expect(lines).to_have_count(2)
    expect(lines.nth(1)).to_have_text("2 files put back as before this turn")
    lines = lines.first
    expect(lines).to_have_text("No checkpoint: the folder could not be read in time.")
    expect(lines.get_by_role("button")).to_have_count(0)

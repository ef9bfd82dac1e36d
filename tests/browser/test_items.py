"""The panel renders the chat's items (one projection, made in Python from the CLIs' frames):
recorded exchanges of both CLIs (tests/fixtures/, projected by tests/projected.py) shown as a
person sees them, and answers sent back in the chat core's words. The live paths, with the
real CLIs, are in test_panel_claude.py, test_panel_codex.py and test_rendering.py."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.projected import recorded_items

VIEW = """async ([harness, items]) => {
    const { Transcript } = await import("/__devhost__/static/chat/transcript.js");
    const transcript = new Transcript(harness);
    transcript.load({seq: items.length, items});
    return transcript.list();
}"""

SHOW = """([session, items]) => {
    const panel = window.__devhostChat;
    panel.attach(session);
    panel.connection.stop();
    panel.connection = { send: (command) => { (window.sent ||= []).push(command); return true; }, stop() {} };
    panel._onFrame({type: "snapshot", session, seq: items.length, info: null, items});
}"""


@pytest.fixture
def view(page, daemon):
    Panel(page, daemon, "other.localhost").load()
    return lambda harness, name, end=None: page.evaluate(VIEW, [harness, recorded_items(harness, name, "hi", end)])


def kinds(items):
    return [item["kind"] for item in items]


def session(harness="claude-code", status="requires_action"):
    return {"id": "recorded", "harness": harness, "status": status, "projectRootPath": "/nowhere"}


def test_a_claude_exchange_shows_the_message_text_tools_and_a_question(view):
    asked = view("claude-code", "ask_question")
    assert kinds(asked) == ["user", "tool", "question", "assistant"]
    user, tool, question, answer = asked
    assert user["text"] == "hi" and tool["name"] == "AskUserQuestion" and "Blue" in tool["output"]
    assert question["questions"][0]["text"] == "Which color?" and question["open"]
    assert [o["label"] for o in question["questions"][0]["options"]] == ["Red", "Blue"]
    assert answer["text"] == "Blue it is."

    [thought] = [i for i in view("claude-code", "thinking") if i["kind"] == "thinking"]
    assert thought["text"].startswith("Let me think") and not thought["streaming"]


def test_an_approval_is_shown_inside_its_tool_call_and_an_interrupted_turn_says_so_after_it(view):
    interrupted = view("claude-code", "perm_pending_interrupt", end="aborted")
    assert kinds(interrupted) == ["user", "tool", "notice"], "no approval card of its own"
    tool = interrupted[1]
    assert tool["name"] == "Bash" and tool["approval"]["settled"] == "No longer waiting for an answer."
    assert not tool["approval"]["open"] and interrupted[2]["text"] == "Interrupted."


def test_a_codex_exchange_shows_shell_commands_and_file_changes_with_their_approvals(view):
    files = view("codex", "frames-file-approval")
    edits = [i for i in files if i["kind"] == "tool"]
    assert edits and all(e["name"] == "Edit files" and e["approval"] for e in edits)
    assert edits[0]["input"]["changes"][0]["path"].endswith(".txt")
    assert "approval" not in kinds(files)

    commands = view("codex", "frames-cmd-approval-untrusted")
    shells = [i for i in commands if i["kind"] == "tool"]
    assert all(s["name"] == "Shell" for s in shells) and any(s["state"] == "done" for s in shells)


def test_a_question_is_answered_in_the_cores_words_and_reads_answered(page, daemon):
    Panel(page, daemon).open()
    items = recorded_items("claude-code", "ask_question", "ask me a color")
    page.evaluate(SHOW, [session(), items])
    question = Panel(page, daemon).items("question")
    expect(question).to_contain_text("Which color?")
    question.get_by_label("Blue").check()
    question.get_by_role("button", name="Answer").click()
    [sent] = page.evaluate("window.sent")
    [asked] = [i for i in items if i["kind"] == "question"]
    assert sent == {"type": "answer", "requestId": asked["requestId"], "answers": {"0": "Blue"}}
    expect(question).to_contain_text("You answered.")


def test_an_approval_asks_inside_its_tool_card_and_after_a_reload_says_what_was_answered(page, daemon):
    panel = Panel(page, daemon).open()
    items = recorded_items("claude-code", "perm_pending_interrupt", "run it")
    pending = [{**i, "decision": "pending"} if i["kind"] == "approval" else i for i in items]
    page.evaluate(SHOW, [session(), pending])
    tool = panel.items("tool")
    expect(tool).to_have_count(1)
    expect(panel.items("approval")).to_have_count(0)
    expect(tool).to_have_attribute("data-status", "asking")
    tool.get_by_role("button", name="Deny").click()
    [approval] = [i for i in items if i["kind"] == "approval"]
    assert page.evaluate("window.sent") == [{"type": "approve", "requestId": approval["requestId"], "decision": "deny",
                                             "message": "The person denied this in the devhost panel."}]
    expect(tool).to_contain_text("You denied.")
    # A fresh page (a reload) knows only the items: the decision is in them.
    denied = [{**i, "decision": "deny"} if i["kind"] == "approval" else i for i in items]
    page.reload()
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    page.evaluate(SHOW, [session(status="idle"), denied])
    expect(panel.items("tool")).to_contain_text("You denied.")
    expect(panel.items("tool").get_by_role("button")).to_have_count(0)


def test_a_send_an_interrupt_cancelled_in_devhostd_reads_cancelled_and_a_refused_one_failed(page, daemon):
    Panel(page, daemon, "other.localhost").load()
    states = page.evaluate("""async () => {
        const { Transcript } = await import("/__devhost__/static/chat/transcript.js");
        const transcript = new Transcript();
        transcript.addLocal("a", "one", []);
        transcript.acknowledge("a", null, "not sent: an interrupt cancelled queued input");
        transcript.addLocal("b", "two", []);
        transcript.acknowledge("b", null, "the session was closed before the CLI took the message");
        return transcript.list().map((item) => item.delivery);
    }""")
    assert states == [{"state": "cancelled", "text": "cancelled by the interrupt"},
                      {"state": "failed", "text": "failed: the session was closed before the CLI took the message"}]

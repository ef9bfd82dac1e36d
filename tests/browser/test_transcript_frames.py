"""The panel's transcript folded from recorded native frames of both CLIs (tests/fixtures/),
in Chromium: the frames the daemon forwards become the items a person sees."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def forwarded_events(name: str) -> list[dict]:
    """Event frames as the chat socket sends them: what each CLI wrote that devhostd keeps."""
    payloads = []
    for line in (FIXTURES / name).read_text().splitlines():
        record = json.loads(line)
        if record.get("dir") == "cli->host":
            frame = record["frame"]
            if frame.get("type") not in ("control_response", "keep_alive"):
                payloads.append(frame)
        elif record.get("dir") == "<" and "method" in record["msg"]:
            payloads.append(record["msg"])  # notifications and server requests, not replies
    return [{"type": "event", "sequence": n + 1, "payload": p} for n, p in enumerate(payloads)]


FOLD = """async (events) => {
    const { Transcript } = await import("/__devhost__/static/chat/transcript.js");
    const transcript = new Transcript();
    transcript.reset(events);
    return transcript.list().map((item) => {
        const { rev, key, ...rest } = item;
        return rest;
    });
}"""


@pytest.fixture
def fold(page, daemon):
    Panel(page, daemon, "other.localhost").load()
    return lambda name: page.evaluate(FOLD, forwarded_events(name))


def kinds(items):
    return [item["kind"] for item in items]


def test_claude_frames_become_text_thinking_questions_approvals_and_errors(fold):
    plain = fold("claude-frames/plain.jsonl")
    assert [(i["kind"], i.get("text")) for i in plain if i["kind"] == "assistant"] == [("assistant", "Hello from the mock.")]

    thinking = fold("claude-frames/thinking.jsonl")
    [thought] = [i for i in thinking if i["kind"] == "thinking"]
    assert thought["text"].startswith("Let me think") and not thought["streaming"]
    assert kinds(thinking)[0] == "user" and "assistant" in kinds(thinking)

    asked = fold("claude-frames/ask_question.jsonl")
    assert kinds(asked) == ["user", "tool", "question", "assistant"]
    user, tool, question, answer = asked
    assert user["text"] == "ask me a color" and user["delivery"]["state"] == "started"
    assert tool["name"] == "AskUserQuestion" and "Blue" in tool["output"]
    assert question["questions"][0]["text"] == "Which color?"
    assert [o["label"] for o in question["questions"][0]["options"]] == ["Red", "Blue"]
    assert answer["text"] == "Blue it is."

    withdrawn = fold("claude-frames/perm_pending_interrupt.jsonl")
    [approval] = [i for i in withdrawn if i["kind"] == "approval"]
    assert approval["withdrawn"] is True and approval["input"]
    assert any(i["kind"] == "notice" and i["text"] == "Interrupted." for i in withdrawn)

    failed = fold("claude-frames/err_401.jsonl")
    assert [i["kind"] for i in failed if i["kind"] == "error"], failed


def test_codex_frames_become_messages_commands_file_changes_and_failures(fold):
    basic = fold("codex-frames/frames-basic.jsonl")
    assert [(i["kind"], i.get("text")) for i in basic] == [("user", "Say hello"), ("assistant", "Hello from the mock model!")]
    assert basic[0]["delivery"]["state"] == "started"

    files = fold("codex-frames/frames-file-approval.jsonl")
    approvals = [i for i in files if i["kind"] == "approval"]
    assert approvals and approvals[0]["title"] == "Change files" and approvals[0]["resolved"] is True
    assert approvals[0]["input"]["changes"][0]["path"].endswith(".txt")
    assert any(i["kind"] == "tool" and i["name"] == "Edit files" for i in files)

    commands = fold("codex-frames/frames-cmd-approval-untrusted.jsonl")
    assert any(i["kind"] == "approval" and i["title"] == "Run a command" for i in commands)
    assert any(i["kind"] == "tool" and i["name"] == "Shell" and i["done"] for i in commands)

    errors = fold("codex-frames/frames-errors.jsonl")
    assert [i for i in errors if i["kind"] == "error"], errors

    interrupted = fold("codex-frames/frames-interrupt.jsonl")
    assert any(i["kind"] == "notice" and i["text"] == "Interrupted." for i in interrupted)
    assert not any(i.get("streaming") for i in interrupted)

    steered = fold("codex-frames/frames-steer.jsonl")
    sent = {e["payload"]["params"]["item"]["id"] for e in forwarded_events("codex-frames/frames-steer.jsonl")
            if e["payload"].get("method") == "item/started" and e["payload"]["params"]["item"]["type"] == "userMessage"}
    assert [i["kind"] for i in steered].count("user") == len(sent) > 1  # one bubble per message, steers too


def test_a_claude_question_is_answered_in_the_clis_own_format(page, daemon):
    panel = Panel(page, daemon).open()
    events = forwarded_events("claude-frames/ask_question.jsonl")
    request = next(e["payload"] for e in events if e["payload"]["type"] == "control_request")
    cut = events.index(next(e for e in events if e["payload"] is request)) + 1
    page.evaluate("""([events, pending]) => {
        const panel = window.__devhostChat;
        panel.session = {id: "recorded", harness: "claude-code", status: "requires_action", projectRootPath: ""};
        panel.connection = { send: (command) => { window.sentCommand = command; return true; }, stop() {} };
        panel._onFrame({type: "snapshot", session: panel.session, pendingRequestIds: pending, events});
    }""", [events[:cut], [request["request_id"]]])
    question = panel.items("question")
    expect(question).to_contain_text("Which color?")
    question.get_by_label("Blue").check()
    question.get_by_role("button", name="Answer").click()
    sent = page.evaluate("window.sentCommand")
    assert sent["type"] == "respond" and sent["requestId"] == request["request_id"]
    assert sent["result"]["behavior"] == "allow"
    assert sent["result"]["updatedInput"]["answers"] == {"Which color?": "Blue"}  # as the CLI recorded it
    expect(question).to_contain_text("You answered.")


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

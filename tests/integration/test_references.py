"""skills.list, and a message's mentions, skills and chats, on the real CLIs against the mocks;
chat.setPreferences on a real daemon.

What reaches the model is read from the mock's requests: a mention reaches it as the CLI's own
file reference (Claude Code expands ``@path`` into the file; Codex gets its path), a skill as the
CLI's own skill (its SKILL.md's body reaches the model), another chat as its conversation's text.
"""
from __future__ import annotations

import time

import pytest

from devhostd.core_client import CoreConnection, CoreRequestError
from tests import mock_anthropic as ma
from tests import mock_openai as mo
from tests.integration.chats import items

MARKER = "Inside the mentioned file: a marker, refs-7f2a."
SKILL = "---\nname: {name}\ndescription: Says hello the {name} way.\n---\n\nSay hello, skill-body-{name}.\n"


def _folder(project, skills_folder: str, name: str) -> None:
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "notes.md").write_text(MARKER + "\n")
    path = project / skills_folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(SKILL.format(name=name))


def _send_and_finish(core, chat_id: str, text: str, **fields) -> str:
    turn = core.chats.send(chat_id, text, **fields)["turnId"]
    core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                    and e["payload"]["event"].get("type") == "item" and e["payload"]["event"]["item"]["id"] == turn
                    and e["payload"]["event"]["item"]["state"] != "running", timeout=90, what=f"turn {turn} ends")
    return turn


def _refused(call, code: str = "bad-request") -> str:
    with pytest.raises(CoreRequestError) as refused:
        call()
    assert refused.value.code == code, refused.value
    return str(refused.value)


def test_claude_lists_its_skills_and_takes_a_mention_and_a_skill_as_its_own(core, daemon, mock, stack):
    project = stack / "project"
    _folder(project, ".claude/skills", "greet")
    core.chats.create("c", provider="claude", cwd=str(project))
    # No CLI runs yet: the disk's SKILL.md says.
    assert core.chats.skills("c") == [{"name": "greet", "description": "Says hello the greet way.",
                                       "source": "project"}]
    core.chats.attach("c")
    mock.add(ma.text_reply("ok"), ma.text_reply("ok"))
    turn = _send_and_finish(core, "c", "Read the file and say ok.", mentions=["docs/notes.md"])
    assert MARKER in ma.message_text(mock.requests[-1])  # @docs/notes.md, expanded by the CLI itself
    user = next(i for i in items(core, "c", "user") if i["turnId"] == turn)
    assert user["mentions"] == ["docs/notes.md"] and user["text"] == "Read the file and say ok."

    # The running CLI's own list: its built-in skills too.
    listed = {s["name"]: s for s in core.chats.skills("c")}
    assert listed["greet"] == {"name": "greet", "description": "Says hello the greet way.", "source": "project"}
    assert any(s["source"] == "plugin" for s in listed.values())

    turn = _send_and_finish(core, "c", "say it to the reader", skills=["greet"])
    assert "skill-body-greet" in ma.message_text(mock.requests[-1])
    assert next(i for i in items(core, "c", "user") if i["turnId"] == turn)["skills"] == ["greet"]

    assert "resolves outside the chat's folder" in _refused(
        lambda: core.chats.send("c", "x", mentions=["../other"]))
    assert "no such file" in _refused(lambda: core.chats.send("c", "x", mentions=["docs/none.md"]))
    assert "No skill named 'nope'" in _refused(lambda: core.chats.send("c", "x", skills=["nope"]))


def test_codex_lists_its_skills_and_takes_a_mention_and_a_skill_as_its_own(core, daemon, openai, stack):
    project = stack / "project"
    _folder(project, ".agents/skills", "greet-agents")
    core.chats.create("x", provider="codex", cwd=str(project))
    assert core.chats.skills("x") == [{"name": "greet-agents", "description": "Says hello the greet-agents way.",
                                       "source": "project"}]
    core.chats.attach("x")
    openai.add(mo.text_reply("ok"), mo.text_reply("ok"))
    turn = _send_and_finish(core, "x", "Read the file and say ok.", mentions=["docs/notes.md"])
    assert "[Mentioned files]\n- docs/notes.md" in mo.message_text(openai.requests[-1])
    assert next(i for i in items(core, "x", "user") if i["turnId"] == turn)["mentions"] == ["docs/notes.md"]

    # The running CLI answers skills/list: its bundled skills are there, which the disk reader never lists.
    listed = {s["name"]: s for s in core.chats.skills("x")}
    assert listed["greet-agents"]["source"] == "project"
    assert any(s["source"] == "plugin" for s in listed.values())

    _send_and_finish(core, "x", "say it to the reader", skills=["greet-agents"])
    said = mo.message_text(openai.requests[-1])
    assert "<name>greet-agents</name>" in said and "skill-body-greet-agents" in said


def test_another_chats_conversation_goes_as_context(core, daemon, mock, stack):
    project = stack / "project"
    for chat in ("a", "b"):
        core.chats.create(chat, provider="claude", cwd=str(project))
        core.chats.attach(chat)
    mock.add(ma.text_reply("The answer is forty-two."), ma.text_reply("ok"))
    _send_and_finish(core, "a", "What is the answer?")
    turn = _send_and_finish(core, "b", "What did the other chat conclude?", chats=["a"])
    said = ma.message_text(mock.requests[-1])
    assert "[Context from chat a]\nUser: What is the answer?\n\nAssistant: The answer is forty-two." in said
    assert said.index("[End of context from chat a]") < said.index("What did the other chat conclude?")
    user = next(i for i in items(core, "b", "user") if i["turnId"] == turn)
    assert user["chats"] == ["a"] and user["text"] == "What did the other chat conclude?"
    _refused(lambda: core.chats.send("b", "x", chats=["nobody"]), "chat-not-found")


def test_the_newest_preferences_of_the_connected_clients_are_the_defaults_of_a_create(core, daemon, stack):
    project = str(stack / "project")
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as other:
        core.chats.set_preferences(runtimeMode="supervised", selections={"claude": {"model": "claude-x"}},
                                   accounts={"claude": "work"}, changedAt=10)
        other.chats.set_preferences(runtimeMode="auto-accept-edits", changedAt=20)
        made = core.chats.create("p1", provider="claude", cwd=project)
        assert made["runtimeMode"] == "auto-accept-edits" and made["selection"]["model"] is None
        named = core.chats.create("p2", provider="claude", cwd=project, runtimeMode="full-access")
        assert named["runtimeMode"] == "full-access"
    # The newer client left: its preferences go with it (once the daemon saw the socket close).
    deadline = time.monotonic() + 20
    while (made := core.chats.create("p3", provider="claude", cwd=project))["runtimeMode"] != "supervised":
        assert made["runtimeMode"] == "auto-accept-edits" and time.monotonic() < deadline, made
        core.chats.kill("p3")
        time.sleep(0.1)
    assert made["selection"]["model"] == "claude-x"
    assert "`runtimeMode` must be one of" in _refused(lambda: core.chats.set_preferences(runtimeMode="yolo"))

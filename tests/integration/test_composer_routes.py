"""What the panel's composer completes and sends, on a real daemon with the real Claude Code CLI:
the checkout's files (GET /chat/files), a session's skills (GET /chat/sessions/<id>/skills),
and a page send's ``mentions``, which reach the CLI as its own file references."""
from __future__ import annotations

import subprocess

from tests import mock_openai as mo
from tests.mock_anthropic import message_text, text_reply

MARKER = "Inside the mentioned file: a marker, page-mention-93d0."
SKILL = "---\nname: greet\ndescription: Says hello the greet way.\n---\n\nSay hello.\n"


def test_a_page_send_mentions_files_of_the_checkout_as_the_clis_own_references_and_refuses_others(daemon, mock,
                                                                                                  stack):
    (stack / "project" / "docs").mkdir()
    (stack / "project" / "docs" / "notes.md").write_text(MARKER + "\n")
    (stack / "outside.md").write_text("not the checkout's\n")
    mock.add(text_reply("ok"))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    refused = sock.result_for(sock.send_message("x", mentions=["../outside.md"]))
    assert "resolves outside the chat's folder" in refused["error"]
    refused = sock.result_for(sock.send_message("x", mentions=["docs/none.md"]))
    assert "no such file in the chat's folder" in refused["error"]
    refused = sock.result_for(sock.send_message("x", mentions="docs/notes.md"))
    assert "`mentions` is a list of at most 64 files" in refused["error"]

    command_id = sock.send_message("Read docs/notes.md and say ok.", mentions=["docs/notes.md"])
    assert sock.result_for(command_id)["delivery"] in ("queued", "started")
    user = sock.wait_item(lambda i: i["kind"] == "user")
    assert user["id"] == f"user-{command_id}" and user["mentions"] == ["docs/notes.md"]
    assert user["text"] == "Read docs/notes.md and say ok."
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done", what="the turn done")
    assert MARKER in message_text(mock.requests[-1])  # the CLI read its @docs/notes.md itself
    assert len(mock.requests) == 1  # the refused sends never reached the CLI
    sock.close()


def test_the_files_route_lists_the_pages_own_checkout_and_refuses_what_names_none(daemon, stack):
    (stack / "project" / "a.txt").write_text("a\n")
    (stack / "other" / "b.txt").write_text("b\n")
    status, listed = daemon.request("GET", f"/__devhost__/chat/files?{daemon.query()}")
    assert status == 200 and listed == {"files": ["a.txt"], "truncated": False, "source": "walk"}
    host = daemon.host("other.localhost")
    status, listed = daemon.request("GET", f"/__devhost__/chat/files?{daemon.query('other.localhost')}", host=host)
    assert status == 200 and listed["files"] == ["b.txt"]  # each page its own checkout
    status, refused = daemon.request("GET", f"/__devhost__/chat/files?{daemon.query('other.localhost')}")
    assert 400 <= status < 500 and refused["error"]  # another hostname's page, asked from app.localhost
    status, refused = daemon.request("GET", f"/__devhost__/chat/files?pageURL={daemon.page()}")
    assert 400 <= status < 500 and refused["error"]


def test_the_skills_route_lists_the_sessions_skills_for_its_own_page_only(daemon, stack):
    skill = stack / "project" / ".claude" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    record = daemon.create_session()
    status, listed = daemon.request("GET", f"/__devhost__/chat/sessions/{record['id']}/skills?{daemon.query()}")
    assert status == 200 and listed == {"skills": [{"name": "greet", "description": "Says hello the greet way.",
                                                    "source": "project"}]}
    host = daemon.host("other.localhost")
    status, refused = daemon.request(
        "GET", f"/__devhost__/chat/sessions/{record['id']}/skills?{daemon.query('other.localhost')}", host=host)
    assert status == 404 and "no session" in refused["error"]


def test_a_page_send_names_a_skill_as_the_clis_own_and_an_unknown_one_is_refused(daemon, openai, stack):
    """Codex has no slash commands: the skill a page picked goes as its own skill item (its
    SKILL.md's body reaches the model), with the text that followed it."""
    skill = stack / "project" / ".agents" / "skills" / "greet-agents" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL.replace("greet", "greet-agents").replace("Say hello.", "Say hello, skill-body-agents."))
    openai.add(mo.text_reply("ok"))
    record = daemon.create_session(harness="codex")
    sock = daemon.connect_thread(record["id"])
    refused = sock.result_for(sock.send_message("x", skills=["nope"]))
    assert "No skill named 'nope'" in refused["error"]
    command_id = sock.send_message("to the reader", skills=["greet-agents"])
    user = sock.wait_item(lambda i: i["kind"] == "user" and i["id"] == f"user-{command_id}")
    assert user["skills"] == ["greet-agents"] and user["text"] == "to the reader"
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done", what="the turn done")
    said = mo.message_text(openai.requests[-1])
    assert "<name>greet-agents</name>" in said and "skill-body-agents" in said and "to the reader" in said
    sock.close()


def test_a_git_checkouts_files_are_what_git_lists_without_what_it_ignores(daemon, stack):
    project = stack / "project"
    (project / "src").mkdir()
    (project / "src" / "app.js").write_text("export {};\n")
    (project / "debug.log").write_text("noise\n")
    (project / ".gitignore").write_text("*.log\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "add", "src/app.js"], check=True)
    status, listed = daemon.request("GET", f"/__devhost__/chat/files?{daemon.query()}")
    assert status == 200 and listed == {"files": [".gitignore", "src/app.js"], "truncated": False, "source": "git"}

"""What the panel's composer completes and sends, on a real daemon with the real Claude Code CLI:
the checkout's files (GET /chat/files), a session's skills (GET /chat/sessions/<id>/skills),
and a page send's ``mentions``, which reach the CLI as its own file references."""
from __future__ import annotations

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

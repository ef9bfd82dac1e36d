"""One conversation, two surfaces: a session of the Chat API is a chat of the core and back.

A chat held in the panel is listed by ``chat.list``, its approvals can be answered by an app on
the core, and it outlives the daemon with its items; a core chat in a routed directory is a
session the panel can list and attach to. An answer given on one surface settles the request
on the other, which then refuses a second answer.
"""
from __future__ import annotations

import signal

import pytest

from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import message_text, text_reply, tool_use_reply
from devhostd.core_client import CoreConnection, CoreRequestError




def items(core, chat_id: str) -> list[dict]:
    return core.chats.history(chat_id, limit=100)["items"]


def texts(core, chat_id: str, kind: str) -> list[str]:
    return [item.get("text") for item in items(core, chat_id) if item["kind"] == kind]


def waiting_for_approval(daemon, mock, command: str):
    """A page's session whose CLI asks to run ``command``: (record, socket, request id)."""
    mock.add(tool_use_reply("Bash", {"command": command, "description": "Create it"}), text_reply("Made it."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("make the file")
    state = sock.wait_for(lambda f: f["type"] == "state" and f["pendingRequestIds"], what="an approval")
    return record, sock, state["pendingRequestIds"][0]


def test_a_panel_session_is_listed_by_the_core_with_its_items(daemon, core, mock, stack):
    mock.add(text_reply("Hello from the panel's chat."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("hello, panel")
    sock.wait_event(lambda p: p["type"] == "result")
    listed = {info["chatId"]: info for info in core.chats.list()}
    info = listed[record["chatId"]]
    assert info["provider"] == "claude" and info["cwd"] == record["projectRootPath"]
    wait_until(lambda: texts(core, record["chatId"], "assistant") == ["Hello from the panel's chat."],
               what="the reply as an item")
    assert texts(core, record["chatId"], "user") == ["hello, panel"]
    sock.close()


def test_a_panel_approval_answered_on_the_core_is_settled_for_the_page(daemon, core, mock, stack):
    record, sock, request_id = waiting_for_approval(daemon, mock, "touch from-core.txt")
    core.chats.attach(record["chatId"])
    wait_until(lambda: any(i["kind"] == "approval" and i["decision"] == "pending"
                           for i in items(core, record["chatId"])), what="the approval item")
    core.chats.approve(record["chatId"], request_id, "allow")
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "Made it.")
    assert (stack / "project" / "from-core.txt").exists()
    state = sock.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "idle", what="idle")
    assert state["pendingRequestIds"] == []
    # The page's own answer now comes too late: devhost says it is not pending any more.
    sock.send({"type": "respond", "requestId": request_id, "result": {"behavior": "allow"}})
    refusal = sock.wait_for(lambda f: f["type"] == "error", what="the refusal")
    assert "is not pending" in refusal["message"]
    sock.close()


def test_an_approval_answered_in_the_page_is_refused_on_the_core(daemon, core, mock, stack):
    record, sock, request_id = waiting_for_approval(daemon, mock, "touch from-page.txt")
    sock.send({"type": "respond", "requestId": request_id, "result": {"behavior": "allow", "updatedInput": {
        "command": "touch from-page.txt", "description": "Create it"}}})
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "Made it.")
    [approval] = [i for i in items(core, record["chatId"]) if i["kind"] == "approval"]
    assert approval["decision"] == "allow"  # settled on the core as the page answered it
    with pytest.raises(CoreRequestError) as refused:
        core.chats.approve(record["chatId"], request_id, "deny")
    assert refused.value.code == "request-not-found"
    sock.close()


def test_a_core_chat_in_a_routed_directory_is_a_session_of_that_page(daemon, core, mock, stack):
    mock.add(text_reply("Answered on the core."))
    core.chats.create("from-the-app", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("from-the-app")
    [session] = [s for s in daemon.sessions() if s["chatId"] == "from-the-app"]
    assert (session["harness"], session["status"]) == ("claude-code", "idle")
    assert all(s["chatId"] != "from-the-app" for s in daemon.sessions("other.localhost"))
    sock = daemon.connect(session["id"])
    sent = core.chats.send("from-the-app", "hello from the app")
    # The page sees the CLI's own frames of a turn the core started.
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "Answered on the core.")
    assert sent["queued"] is False
    sock.close()


def test_a_panel_conversation_outlives_a_restart_with_its_items_and_goes_on(daemon, mock, stack, daemon_env):
    mock.add(text_reply("I will remember heron."), text_reply("It was heron."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("remember heron")
    native_id = sock.wait_event(lambda p: p["type"] == "result")["session_id"]
    daemon.proc.send_signal(signal.SIGTERM)
    assert sock.wait_closed() == 1001
    assert daemon.stop() == 0
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        [listed] = again.sessions()
        assert (listed["chatId"], listed["status"], listed["nativeSessionId"]) == (record["chatId"], "closed",
                                                                                  native_id)
        assert listed["title"] == "remember heron"  # named by its first message
        with CoreConnection(again.control_origin, token=again.core_token) as core:
            assert texts(core, record["chatId"], "user") == ["remember heron"]
            assert texts(core, record["chatId"], "assistant") == ["I will remember heron."]
            resumed = again.create_session(resumeId=native_id)
            assert resumed["chatId"] == record["chatId"]
            sock = again.connect(resumed["id"])
            sock.send_message("which bird?")
            sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "It was heron.")
            assert "remember heron" in message_text(mock.requests[1])  # the CLI's own saved conversation
            wait_until(lambda: texts(core, record["chatId"], "assistant") == ["I will remember heron.",
                                                                               "It was heron."],
                       what="both replies in one thread")
            sock.close()
    finally:
        assert again.stop() == 0

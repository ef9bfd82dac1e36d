"""The panel's thread socket: a conversation as the chat core's items, scoped to a page.

The page reads one projection of the CLI's frames (the items an app on the core reads too),
with a snapshot and sequenced events it can resume from; it sends, interrupts and answers in
the core's words. The Chat API's rules hold: a routed page's own origin only, refused before
the upgrade, and the page's directory checked on attach and before every command.
"""
from __future__ import annotations

import pytest
import websocket

from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply, tool_use_reply


def kinds(sock) -> list[str]:
    return [item["kind"] for item in sock.items().values()]


def test_a_send_streams_back_as_items_with_the_messages_own_id_and_its_acknowledgement(daemon, mock):
    mock.add(text_reply("Hello as items."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    assert sock.snapshot["session"]["id"] == record["id"] and sock.snapshot["items"] == []
    command_id = sock.send_message("hello, items")
    assert sock.result_for(command_id)["delivery"] in ("queued", "started")
    user = sock.wait_item(lambda i: i["kind"] == "user")
    assert user["id"] == f"user-{command_id}" and user["text"] == "hello, items"
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done", what="the turn done")
    assert [i["text"] for i in sock.items().values() if i["kind"] == "assistant"] == ["Hello as items."]
    # No native frame reaches this socket; every event has the next sequence number.
    assert not any("payload" in f for f in sock.frames)
    seqs = [f["seq"] for f in sock.frames if f["type"] == "event"]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[0] == sock.snapshot["seq"] + 1
    sock.close()


def test_a_reconnect_from_a_sequence_gets_only_what_came_after_and_a_fresh_one_the_same_items(daemon, mock):
    mock.add(text_reply("First reply."), text_reply("Second reply."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    sock.send_message("one")
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    sock.wait_item(lambda i: i["kind"] == "changes")  # the last item of a turn: what it changed
    seen = max(f["seq"] for f in sock.frames if f["type"] == "event")
    first_items = sock.items()
    sock.close()
    other = daemon.connect_thread(record["id"])
    other.send_message("two")
    other.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "Second reply." and not i["streaming"])
    other.close()

    again = daemon.connect_thread(record["id"], since=seen)
    assert again.snapshot["type"] == "resumed" and again.snapshot["seq"] == seen
    again.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "Second reply.")
    again.wait_item(lambda i: i["kind"] == "changes")
    assert all(f["seq"] > seen for f in again.frames if f["type"] == "event")
    resumed_items = {**first_items, **again.items()}
    fresh = daemon.connect_thread(record["id"])
    assert fresh.snapshot["type"] == "snapshot"
    assert {i["id"]: i.get("text") for i in fresh.snapshot["items"]} == \
        {k: v.get("text") for k, v in resumed_items.items()}
    # A sequence from the future (another daemon's) gets a snapshot, not a gap.
    future = daemon.connect_thread(record["id"], since=fresh.snapshot["seq"] + 1000)
    assert future.snapshot["type"] == "snapshot"
    for s in (again, fresh, future):
        s.close()


def test_an_approval_is_answered_in_the_cores_words_and_a_second_answer_is_refused(daemon, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": "touch from-thread.txt", "description": "Create it"}),
             text_reply("Made it."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    sock.send_message("make the file")
    approval = sock.wait_item(lambda i: i["kind"] == "approval" and i["decision"] == "pending")
    assert approval["toolName"] == "Bash" and approval["input"]["command"] == "touch from-thread.txt"
    assert any(i["kind"] == "tool" and i.get("toolUseId") == approval["toolUseId"] for i in sock.items().values()), \
        "the tool call the approval is for is an item of its own, before it"
    sock.send({"type": "approve", "requestId": approval["requestId"], "decision": "allow"})
    sock.wait_item(lambda i: i["id"] == approval["id"] and i["decision"] == "allow", what="the approval allowed")
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    assert (stack / "project" / "from-thread.txt").exists()
    sock.send({"type": "approve", "requestId": approval["requestId"], "decision": "deny"})
    refusal = sock.wait_for(lambda f: f["type"] == "error" and f.get("requestId") == approval["requestId"],
                            what="the refusal")
    assert "Nothing waits for approval" in refusal["message"]
    sock.send({"type": "approve", "requestId": approval["requestId"], "decision": "maybe"})
    bad = sock.wait_for(lambda f: f["type"] == "error" and "decision" in f["message"], what="the bad decision")
    assert "allow, allow-always, deny" in bad["message"]
    sock.close()


def test_a_denied_approval_reads_denied_in_a_snapshot_taken_after_it(daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "rm -rf build", "description": "Clean"}), text_reply("Left it."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    sock.send_message("clean up")
    approval = sock.wait_item(lambda i: i["kind"] == "approval" and i["decision"] == "pending")
    sock.send({"type": "approve", "requestId": approval["requestId"], "decision": "deny"})
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    sock.close()
    later = daemon.connect_thread(record["id"])
    [settled] = [i for i in later.snapshot["items"] if i["kind"] == "approval"]
    assert settled["decision"] == "deny"
    later.close()


def test_the_socket_is_refused_before_the_upgrade_off_its_page(daemon, mock):
    record = daemon.create_session()
    port = daemon.port

    def refused(url, **options):
        with pytest.raises(websocket.WebSocketBadStatusException) as caught:
            websocket.create_connection(url, timeout=10, **options)
        return caught.value.status_code

    base = f"ws://127.0.0.1:{port}/__devhost__/ws/thread?sessionId={record['id']}&{daemon.query()}"
    app = daemon.host("app.localhost")
    assert refused(base, host=app, origin="http://evil.localhost") == 403
    assert refused(base, host=app, suppress_origin=True) == 403
    control = daemon.control_origin.split("://", 1)[1]
    assert refused(base, host=control, origin=f"http://{control}") == 403  # the control origin has no page
    other = daemon.host("other.localhost")
    other_url = (f"ws://127.0.0.1:{port}/__devhost__/ws/thread?sessionId={record['id']}"
                 f"&{daemon.query('other.localhost')}")
    assert refused(other_url, host=other, origin=f"http://{other}") == 404  # another directory's page
    assert refused(base + "&since=-1", host=app, origin=f"http://{app}") == 400


def test_a_command_after_the_pages_checkout_moved_is_refused_and_nothing_is_sent(daemon, mock, stack):
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text().replace('root = "project"', 'root = "other"', 1))
    try:
        command_id = sock.send_message("are you still there?")
        refusal = sock.result_for(command_id)
        assert "checkout changed" in refusal["error"]
        sock.send({"type": "approve", "requestId": "anything", "decision": "allow"})
        refused = sock.wait_for(lambda f: f["type"] == "error" and f.get("requestId") == "anything")
        assert "checkout changed" in refused["message"]
        sock.send({"type": "stopTask", "taskId": "t1"})
        stopped = sock.wait_for(lambda f: f["type"] == "error" and "requestId" not in f
                                and "checkout changed" in f["message"], what="the stop refused")
        assert stopped
        assert mock.requests == []
        assert not any(i["kind"] == "user" for i in sock.items().values())
    finally:
        sock.close()


def test_a_closed_conversation_keeps_its_items_after_a_restart_and_its_resume_continues_them(
        daemon, daemon_env, stack, mock):
    mock.add(text_reply("Remembered."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    sock.send_message("remember this")
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    sock.close()
    assert daemon.stop() == 0
    second = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        [listed] = second.sessions()
        assert listed["status"] == "closed" and listed["title"] == "remember this"
        closed = second.connect_thread(listed["id"])
        texts = [(i["kind"], i.get("text")) for i in closed.snapshot["items"] if i["kind"] in ("user", "assistant")]
        assert texts == [("user", "remember this"), ("assistant", "Remembered.")]
        closed.close()
        mock.add(text_reply("Still here."))
        resumed = second.create_session(resumeId=listed["nativeSessionId"])
        assert resumed["chatId"] == listed["chatId"] and resumed["status"] != "closed"
        sock = second.connect_thread(resumed["id"])
        assert [i.get("text") for i in sock.snapshot["items"] if i["kind"] == "assistant"] == ["Remembered."]
        sock.send_message("and now?")
        sock.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "Still here." and not i["streaming"])
        sock.close()
    finally:
        assert second.stop() == 0

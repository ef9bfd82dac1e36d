"""A long conversation opened at once: the panel's thread socket, asked with ``historyLimit``,
sends the newest items first and the rest page by page on demand; a reconnect with ``since``
gets exactly the events after it. Without ``historyLimit`` a snapshot still holds every item.

The chat of 10,000 items is written the way storage/chat_store.py keeps it (a record), around
one real turn of Claude Code against the mock model, and read back by a restarted daemon.
"""
from __future__ import annotations

import json

import pytest
import websocket

from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply

OLD_TURNS = 2_500  # four items each: 10,000 items before the real turn


def old_items(turns: int = OLD_TURNS) -> list[dict]:
    items = []
    for n in range(turns):
        turn = f"turn-old-{n}"
        items += [{"id": turn, "kind": "turn", "state": "done", "origin": "user", "createdAt": 1_700_000_000_000 + n},
                  {"id": f"user-old-{n}", "kind": "user", "turnId": turn, "text": f"question {n}"},
                  {"id": f"assistant-old-{n}", "kind": "assistant", "turnId": turn, "text": f"answer {n} " * 20,
                   "streaming": False},
                  {"id": f"note-old-{n}", "kind": "note", "turnId": turn, "level": "info", "text": f"note {n}"}]
    return items


def grown(daemon: Daemon, turns: int = OLD_TURNS) -> None:
    """The stopped daemon's one chat, with ``turns`` turns of before (four items each) ahead of its own."""
    [path] = (daemon.state_dir / "core" / "chats").glob("c-*.json")
    record = json.loads(path.read_text())
    record["items"] = old_items(turns) + record["items"]
    path.write_text(json.dumps(record))


def test_a_long_chat_attaches_with_its_tail_pages_back_whole_and_reconnects_from_a_seq(daemon, daemon_env, stack,
                                                                                        mock):
    mock.add(text_reply("The newest answer."))
    record = daemon.create_session()
    sock = daemon.connect_thread(record["id"])
    sock.send_message("the newest question")
    sock.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done")
    sock.wait_item(lambda i: i["kind"] == "changes")
    sock.close()
    assert daemon.stop() == 0
    grown(daemon)
    second = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        [listed] = second.sessions()
        whole = second.connect_thread(listed["id"])  # a panel that does not page: every item
        every = [item["id"] for item in whole.snapshot["items"]]
        assert len(every) > 10_000 and "history" not in whole.snapshot
        whole.close()

        paged = second.connect(listed["id"], path="thread", extra="&historyLimit=100")
        first = paged.snapshot
        assert first["type"] == "snapshot" and first["seq"] == whole.snapshot["seq"]
        assert [item["id"] for item in first["items"]] == every[-100:], "the tail, in order"
        assert first["history"] == {"start": len(every) - 100, "cursor": f"0:{len(every) - 100}"}
        assert any(item.get("text") == "The newest answer." for item in first["items"])
        shown, cursor, pages = [item["id"] for item in first["items"]], first["history"]["cursor"], 0
        while cursor is not None:
            paged.send({"type": "history", "cursor": cursor, "limit": 100})
            answer = paged.wait_for(lambda f, c=cursor: f["type"] == "history" and f["cursor"] == c,
                                    what="a page of history")
            assert len(answer["items"]) == 100 or answer["history"]["cursor"] is None
            shown = [item["id"] for item in answer["items"]] + shown
            cursor, pages = answer["history"]["cursor"], pages + 1
        assert shown == every and pages == len(every) // 100, "nothing lost or doubled, in order"

        paged.send({"type": "history", "cursor": "7:12"})  # another clear's cursor
        expired = paged.wait_for(lambda f: f["type"] == "history" and f["cursor"] == "7:12", what="the refusal")
        assert expired["error"]["code"] == "history-expired" and "items" not in expired
        paged.send({"type": "history", "cursor": first["history"]["cursor"], "limit": 500})
        refused = paged.wait_for(lambda f: f["type"] == "error", what="the bad limit")
        assert "1..100" in refused["message"]
        paged.close()

        mock.add(text_reply("After the restart."))
        resumed = second.create_session(resumeId=listed["nativeSessionId"])
        live = second.connect(resumed["id"], path="thread", extra="&historyLimit=50")
        seen = live.snapshot["seq"]
        live.send_message("one more")
        live.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "After the restart."
                       and not i["streaming"])
        live.wait_item(lambda i: i["kind"] == "changes")
        told = [(f["seq"], f["event"]) for f in live.frames if f["type"] == "event"]
        again = second.connect(resumed["id"], path="thread", extra=f"&since={seen}&historyLimit=50")
        assert again.snapshot["type"] == "resumed" and again.snapshot["seq"] == seen
        last = told[-1][0]
        got = [(f["seq"], f["event"]) for f in again.frames if f["type"] == "event"]
        while not got or got[-1][0] < last:
            again.next()
            got = [(f["seq"], f["event"]) for f in again.frames if f["type"] == "event"]
        assert got[:len(told)] == told, "exactly the events after the seq, as the live socket was told them"
        for s in (live, again):
            s.close()
    finally:
        assert second.stop() == 0


def test_a_history_limit_out_of_its_range_is_refused_before_the_upgrade(daemon, mock):
    record = daemon.create_session()
    for bad in ("0", "101", "ten", "²"):
        with pytest.raises(websocket.WebSocketBadStatusException) as caught:
            daemon.connect(record["id"], path="thread", extra=f"&historyLimit={bad}")
        assert caught.value.status_code == 400

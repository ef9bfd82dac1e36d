"""A full disk under devhostd's state folder loses nothing: the turn that cannot be saved is
stopped, the panel and the core are told what happened and what to do, sends are refused until
there is room, and once there is the chat is saved whole, also across a restart. A message whose
attachments do not fit is not sent, and says so.

The state folder is a 1 MiB tmpfs of its own (root only), filled with one file and freed by
removing it; the CLIs' own files (HOME) and the daemon's log are elsewhere, as on a machine
whose data disk filled up.
"""
from __future__ import annotations

import base64
import re

import pytest

from tests.integration.chats import items
from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply
from tests.small_disk import small_disk
from devhostd.core_client import CoreConnection, CoreRequestError


def _event(core, predicate, what):
    return core.wait_event(lambda e: e["event"] == "chat.event" and predicate(e["payload"]["event"]),
                           what=what)["payload"]["event"]


def _item(core, predicate, what):
    return _event(core, lambda ev: ev.get("type") == "item" and predicate(ev["item"]), what)["item"]


def _status(core, chat_id, predicate, what):
    return core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == chat_id
                           and predicate(e["payload"]["info"]), what=what)["payload"]["info"]


def _turn_done(core, turn_id, state="done"):
    return _item(core, lambda i: i["id"] == turn_id and i["state"] == state, f"turn {turn_id} {state}")


def _newer(frames: list, predicate):
    """``predicate`` for the frames that come after those received so far."""
    seen = {id(frame) for frame in frames}
    return lambda frame: id(frame) not in seen and predicate(frame)


def _bugs(daemon) -> list[str]:
    return [line for line in daemon.log().splitlines() if " bug: " in line]


@pytest.fixture
def daemon_env(daemon_env):
    # The chat is tried again twice a second while it cannot be saved (five seconds by default).
    return {**daemon_env, "DEVHOSTD_STORE_RETRY_SECONDS": "0.5"}


def test_a_full_disk_stops_the_turn_tells_both_faces_and_the_chat_comes_back_whole(stack, daemon_env, mock):
    mock.add(text_reply("First answer."), text_reply(*[f"word{n} " for n in range(400)], delay=0.03),
             text_reply("Third answer."))
    state = stack / "state"
    with small_disk(state) as disk:
        first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=state)
        try:
            record = first.create_session()
            chat = record["chatId"]
            panel = first.connect_thread(record["id"])
            with CoreConnection(first.control_origin, token=first.core_token) as core:
                core.chats.attach(chat)
                core.chats.create("spare", provider="claude", cwd=str(stack / "project"))
                one = core.chats.send(chat, "one")["turnId"]
                _turn_done(core, one)

                # The disk fills while the agent is answering the second message.
                two = core.chats.send(chat, "two")["turnId"]
                _event(core, lambda ev: ev.get("type") == "delta", "the second answer streaming")
                disk.fill()

                # The core: an error note in the turn, the turn stopped, chat.status error with why.
                note = _item(core, lambda i: i["kind"] == "note" and i["level"] == "error", "the error note")
                assert "the disk holding devhostd's state folder" in note["text"] and "is full" in note["text"]
                assert "Free space on that disk, then send again" in note["text"]
                assert note["turnId"] == two
                _turn_done(core, two, "aborted")
                info = _status(core, chat, lambda i: i["status"] == "error", "status error")
                assert info["storeError"] == note["text"] and info["queuePaused"] is True

                # The panel: the same note among its items, and the session reads error with the words.
                panel.wait_item(lambda i: i["id"] == note["id"], what="the note on the panel")
                session = panel.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "error",
                                         what="the session's error")["session"]
                assert session["error"] == note["text"]

                # A message whose attachment the disk refuses is not sent, and says what to do.
                upload = {"name": "notes.txt", "mime": "text/plain", "data": base64.b64encode(b"n" * 50_000).decode()}
                with pytest.raises(CoreRequestError) as refused:
                    core.chats.send("spare", "see the file", attachments=[upload])
                assert refused.value.code == "storage-full"
                assert refused.value.message.startswith("The message was not sent: its attachments could not be saved")
                assert "Free space on that disk, then send it again" in refused.value.message
                assert [i for i in core.chats.history("spare")["items"] if i["kind"] == "user"] == []
                with pytest.raises(CoreRequestError) as refused:  # so does any other write it refuses
                    core.chats.publish_visual("spare", "A chart", "<p>bars</p>" * 5000)
                assert refused.value.code == "storage-full" and "Free space on that disk" in refused.value.message

                # Nothing more goes out while the chat cannot be saved, on either face.
                with pytest.raises(CoreRequestError) as refused:
                    core.chats.send(chat, "three")
                assert refused.value.code == "storage-full" and "Free space" in refused.value.message
                command = panel.send_message("three from the page")
                assert "is full" in panel.result_for(command)["error"]

                # What the CLI said before the stop is all there, in memory.
                during = {i["id"]: i for i in items(core, chat, "assistant")}
                streamed = next(i for i in during.values() if i["turnId"] == two)["text"]
                assert streamed.startswith("word0 word1 ")
                kept = core.chats.history(chat, limit=100)["items"]
                lines = [line for line in first.log().splitlines() if re.search(r"\berror\b.*kind=store", line)]
                assert len(lines) == 1, lines  # once, not once per event

                core_mark, panel_mark = list(core.events), list(panel.frames)
                disk.free()
                core.wait_event(_newer(core_mark, lambda e: e["event"] == "chat.status"
                                       and e["payload"]["info"]["status"] == "idle"
                                       and "storeError" not in e["payload"]["info"]), what="saved again")
                saved = _item(core, lambda i: i["kind"] == "note" and i["level"] == "info", "the saved-again note")
                assert "saved whole" in saved["text"]
                panel.wait_item(lambda i: i["id"] == saved["id"], what="the saved-again note on the panel")
                panel.wait_for(_newer(panel_mark, lambda f: f["type"] == "state" and "error" not in f["session"]),
                               what="the session's error gone")

                three = core.chats.send(chat, "three")["turnId"]
                _turn_done(core, three)
                before_restart = core.chats.history(chat, limit=100)["items"]
            panel.close()
            assert first.stop() == 0
            assert not _bugs(first), _bugs(first)
        finally:
            first.stop()

        again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=state)
        try:
            with CoreConnection(again.control_origin, token=again.core_token) as core:
                after = core.chats.history(chat, limit=100)["items"]
            assert after == before_restart
            by_id = {i["id"]: i for i in after}
            assert all(by_id[i["id"]] == i for i in kept)  # every item of the full disk, as it was
            assert [by_id[t]["state"] for t in (one, two, three)] == ["done", "aborted", "done"]
            assert [i["text"] for i in after if i["kind"] == "user"] == ["one", "two", "three"]
            assert next(i for i in after if i["kind"] == "assistant" and i["turnId"] == two)["text"] == streamed
            assert not _bugs(again), _bugs(again)
        finally:
            assert again.stop() == 0

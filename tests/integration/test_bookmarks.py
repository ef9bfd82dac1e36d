"""Bookmarks through the chat core on a real devhostd: marking a message and an answer, the list
to attached clients and in attach, kept across a restart, taken along by clear and kill."""
from __future__ import annotations

import os

import pytest

from tests.integration.chats import items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import text_reply
from devhostd.core_client import CoreConnection, CoreRequestError


def one_exchange(core, chat_id: str, stack) -> tuple[dict, dict]:
    core.chats.create(chat_id, provider="claude", cwd=str(stack / "project"))
    core.chats.send(chat_id, "make   the header\nblue")
    wait_until(lambda: items(core, chat_id, "assistant"), timeout=60, what="the answer")
    wait_until(lambda: all(t["state"] != "running" for t in items(core, chat_id, "turn")), what="the turn done")
    return items(core, chat_id, "user")[0], items(core, chat_id, "assistant")[0]


def bookmark_files(stack) -> list[str]:
    folder = stack / "state" / "core" / "chats"
    return sorted(name for name in os.listdir(folder) if name.startswith("b-"))


def test_bookmarks_are_added_renamed_listed_to_attached_clients_and_refused_clearly(core, mock, stack):
    mock.add(text_reply("It is blue now."))
    user, answer = one_exchange(core, "marks", stack)
    core.chats.attach("marks")
    listed = core.chats.add_bookmark("marks", user["id"], name="the ask")["bookmarks"]
    assert listed == [{"itemId": user["id"], "excerpt": "make the header blue", "createdAt": listed[0]["createdAt"],
                       "name": "the ask"}]
    event = core.wait_event(lambda e: e["event"] == "chat.bookmarks", what="the list to the attached client")
    assert event["payload"] == {"chatId": "marks", "bookmarks": listed}
    both = core.chats.add_bookmark("marks", answer["id"])["bookmarks"]
    assert [b["itemId"] for b in both] == [user["id"], answer["id"]] and both[1]["excerpt"] == "It is blue now."
    assert core.chats.rename_bookmark("marks", user["id"], "")["bookmarks"][0].get("name") is None
    turn = items(core, "marks", "turn")[0]
    for call, code in ((lambda: core.chats.add_bookmark("marks", turn["id"]), "item-not-found"),
                       (lambda: core.chats.add_bookmark("marks", "no-such-item"), "item-not-found"),
                       (lambda: core.chats.rename_bookmark("marks", "no-such-item", "x"), "bookmark-not-found")):
        with pytest.raises(CoreRequestError) as refused:
            call()
        assert refused.value.code == code
    assert core.chats.remove_bookmark("marks", "no-such-item")["bookmarks"] == core.chats.attach("marks")["bookmarks"]
    assert len(core.chats.attach("marks")["bookmarks"]) == 2


def test_bookmarks_outlive_a_restart_and_go_with_clear_and_kill(daemon_env, mock, stack):
    mock.add(text_reply("one"), text_reply("two"))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            user, _ = one_exchange(core, "kept", stack)
            core.chats.add_bookmark("kept", user["id"])
            other, _ = one_exchange(core, "killed", stack)
            core.chats.add_bookmark("killed", other["id"])
    finally:
        assert first.stop() == 0
    assert len(bookmark_files(stack)) == 2
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(again.control_origin, token=again.core_token) as core:
            core.chats.create("kept")
            assert [b["itemId"] for b in core.chats.attach("kept")["bookmarks"]] == [user["id"]]
            core.chats.clear("kept")
            assert core.chats.attach("kept")["bookmarks"] == []
            core.chats.create("killed")
            core.chats.kill("killed")
            assert bookmark_files(stack) == []
    finally:
        again.stop()

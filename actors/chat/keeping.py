"""What a chat keeps beside its items: bookmarks, visuals, attachments (actors/chat/actor.py).

A controller of the Chat actor. The lists are the durable face's (on disk beside the chat's
record: storage/sidecars.py), the rules are plain (actors/core/bookmarks.py); the visuals'
pages are the VisualStore's, which it tells to drop a chat's. It also holds the agents' token
store, whose token a cleared or killed chat revokes.
"""
from __future__ import annotations

import base64

import gevent

from actors.core import attachments as files
from actors.core import bookmarks
from actors.core.thread import now_ms
from actors.errors import ChatError
from actors.tell import tell


class Keeping:
    def __init__(self, chat, visual_store, agent_tokens):
        self._chat = chat
        self._visual_store = visual_store  # told to take the chat's visuals along on clear and kill
        self._agent_tokens = agent_tokens  # DEVHOSTD_TOKEN of this chat's CLIs (actors/agent_tokens.py)

    def add_bookmark(self, item_id: str, name: str | None) -> dict:
        durable = self._chat.durable
        marks = bookmarks.add(durable.kept.bookmarks, durable.thread.item(item_id), item_id, name, now_ms())
        durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def rename_bookmark(self, item_id: str, name: str) -> dict:
        marks = bookmarks.rename(self._chat.durable.kept.bookmarks, item_id, name)
        self._chat.durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def remove_bookmark(self, item_id: str) -> dict:
        marks = bookmarks.remove(self._chat.durable.kept.bookmarks, item_id)
        if marks != self._chat.durable.kept.bookmarks:
            self._chat.durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def visuals_changed(self, listed: list) -> None:
        self._chat.durable.set_visuals(listed)

    def drop_visuals(self) -> None:
        if self._visual_store is not None:
            tell(self._visual_store, "remove_chat", self._chat.chat_id)
        if self._chat.durable.kept.visuals:
            self._chat.durable.set_visuals([])

    def revoke_agent_token(self) -> None:
        """What the chat's agents held stops working: a cleared chat starts with a new token."""
        if self._agent_tokens is not None:
            self._agent_tokens.revoke(self._chat.chat_id)

    def attachment(self, attachment_id: str) -> dict:
        """An attachment of this chat's messages: its record (without its path) and its bytes."""
        store, chat_id = self._chat.durable.kept.attachments, self._chat.chat_id
        found = store.get(chat_id, attachment_id)
        if found is None:
            raise ChatError("item-not-found", f"No attachment {attachment_id} in chat {chat_id}")
        try:
            content = gevent.get_hub().threadpool.apply(store.read, (found,))
        except OSError:
            raise ChatError("item-not-found", f"Attachment {attachment_id} is gone from disk") from None
        return {"attachment": files.public(found), "data": base64.b64encode(content).decode()}

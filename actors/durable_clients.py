"""Who hears of a chat's changes (actors/durable_face.py): its attached clients, every client, the registry.

A plain part of the DurableFace. It owns the sinks attached to this chat (``push`` never
blocks) and their numbering, and the last status signature every connected client was told:
an attached client gets every ``ChatEvent`` (and the bookmarks and visuals lists), every
connected client gets ``ChatStatus`` when the signature changes, and the registry is told each
new info, so listing never asks a chat.
"""
from __future__ import annotations

import copy

from actors.messages import ChatEvent, ChatStatus
from actors.status import status_signature
from actors.tell import tell


class CoreClients:
    def __init__(self, *, chat_id: str, clients, registry):
        self._chat_id = chat_id
        self._clients = clients  # every connected core client: chat.status goes to all of them
        self._registry = registry  # told each new info (a tell)
        self._attached: dict[int, object] = {}
        self._next_subscriber = 0
        self._last_signature = None

    def join(self, sink) -> int:
        """Attaches a client's sink; its subscriber id."""
        self._next_subscriber += 1
        self._attached[self._next_subscriber] = sink
        return self._next_subscriber

    def leave(self, subscriber: int) -> None:
        self._attached.pop(subscriber, None)

    def leave_all(self) -> None:
        self._attached.clear()

    def tell(self, message) -> None:
        """To every attached client."""
        for sink in list(self._attached.values()):
            sink.push(message)

    def event(self, event: dict, seq: int, info: dict) -> None:
        """A logged event: to the attached clients, and what it changes of the info and the
        status to the registry and every client."""
        self.tell(ChatEvent(self._chat_id, event, seq))
        if event["type"] in ("info", "reset"):
            self.tell_registry(info)  # chat.list answers from the registry's copy
        if event["type"] in ("info", "reset") or event.get("item", {}).get("kind") in ("approval", "question"):
            signature = status_signature(info)
            if signature != self._last_signature:
                self._last_signature = signature
                self._clients.broadcast(ChatStatus(self._chat_id, info))

    def tell_registry(self, info: dict) -> None:
        if self._registry is not None:
            # A copy: the thread goes on changing it.
            tell(self._registry, "on_info", self._chat_id, copy.deepcopy(info))

"""A core chat's thread: its items, its info, and the events that change them.

Plain logic. Every change returns the ChatEvents a client sees (``item`` upserts a whole item by
id, ``delta`` appends text to one, ``info`` replaces the info, ``reset`` replaces everything),
which the Chat actor logs and broadcasts in that order. The thread itself always holds the
whole text, whatever a client's coalesced deltas look like.
"""
from __future__ import annotations

import secrets

from actors.clock import now_ms
from actors.core import background
from actors.core.summaries import LIMITS, summary
from actors.status import chat_status

TURN_STATES = ("running", "done", "aborted", "error")
NOT_RESUMED = "This turn could not be resumed after the machine restarted: "


def host_id(prefix: str) -> str:
    """Ids of items the host makes: ``<prefix>-<ms>-<6 base36>``."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    return f"{prefix}-{now_ms()}-" + "".join(secrets.choice(digits) for _ in range(6))


def new_info(chat_id: str, provider: str, cwd: str, model: str | None, runtime_mode: str,
             resume: str | None = None) -> dict:
    return {
        "chatId": chat_id, "provider": provider, "cwd": cwd, "agentSessionId": resume, "model": None,
        "selection": {"model": model, "options": {}}, "runtimeMode": runtime_mode, "status": "idle",
        "running": False, "activeTurnId": None, "slashCommands": [], "queue": [], "queuePaused": False,
        # What a CLI reports (contextTokens, contextWindow, costUsd) is added when it does.
        "usage": {"turns": 0},
        "requests": [], "background": [], "createdAt": now_ms(),
    }


class Thread:
    def __init__(self, info: dict, items: list[dict] | None = None):
        self.info = info
        self.items: dict[str, dict] = {}
        self.order: list[str] = []
        self._index: dict[str, int] = {}  # item id -> its place in order
        # Text appended to an item since its text was last joined: a long reply streamed as
        # thousands of deltas costs each delta its own length, not the whole text so far.
        self._parts: dict[str, list[str]] = {}
        # Every approval and question, in order, with its summary once made: info events (a
        # chat.configure, a cost report) while a request of megabytes waits cost no new summary
        # and no walk over every item. Storing the item again makes it anew.
        self._requests: dict[str, dict | None] = {}
        self.failed = False  # a transport failure or a crash mid-turn: status error until the next turn
        for item in items or []:
            self._store(item)

    # ---- reading -----------------------------------------------------------------------------

    def snapshot(self) -> dict:
        self._join()
        return {"info": self.info, "items": [self.items[i] for i in self.order]}

    def in_order(self) -> "InOrder":
        """The items in order as a sequence read item by item (each joined as it is read): a
        page of a long thread (actors/core/history.py) costs its own items, not a copy of all."""
        return InOrder(self)

    def item(self, item_id: str) -> dict | None:
        self._join(item_id)
        return self.items.get(item_id)

    def _clear(self) -> None:
        self.items.clear()
        self.order.clear()
        self._index.clear()
        self._parts.clear()
        self._requests.clear()

    def has(self, item_id: str) -> bool:
        return item_id in self.items

    def _join(self, item_id: str | None = None) -> None:
        for joined in ([item_id] if item_id is not None else list(self._parts)):
            parts = self._parts.pop(joined, None)
            if parts and joined in self.items:
                self.items[joined]["text"] = "".join(parts)

    def pending_requests(self) -> list[dict]:
        return [self.items[i] for i in self._requests if self._is_pending(self.items[i])]

    @staticmethod
    def _is_pending(item: dict) -> bool:
        return item.get("decision") == "pending" if item["kind"] == "approval" else item.get("state") == "pending"

    def active_turn(self) -> dict | None:
        turn_id = self.info.get("activeTurnId")
        return self.items.get(turn_id) if turn_id else None

    def busy(self) -> bool:
        turn = self.active_turn()
        return bool(turn and turn["state"] == "running")

    # ---- changing ----------------------------------------------------------------------------

    def _store(self, item: dict) -> int:
        if item["id"] not in self.items:
            self._index[item["id"]] = len(self.order)
            self.order.append(item["id"])
        self.items[item["id"]] = item
        if item["kind"] in ("approval", "question"):
            self._requests[item["id"]] = None
        else:
            self._requests.pop(item["id"], None)
        return self._index[item["id"]]

    def upsert(self, item: dict) -> list[dict]:
        """Merges ``item`` into the item with its id (or adds it); one ``item`` event."""
        current = self.item(item["id"])
        merged = {**current, **item} if current else {"createdAt": now_ms(), "turnId": self.info.get("activeTurnId"),
                                                       **item}
        index = self._store(merged)
        events = [{"type": "item", "item": merged, "historyIndex": index}]
        if merged["kind"] in ("approval", "question"):
            events += self.refresh_info()
        return events

    def append_text(self, item_id: str, text: str) -> list[dict]:
        item = self.items.get(item_id)
        if item is None or not text:
            return []
        parts = self._parts.get(item_id)
        if parts is None:
            parts = self._parts[item_id] = [item.get("text", "")]
        parts.append(text)
        return [{"type": "delta", "itemId": item_id, "text": text}]

    def open_turn(self, turn_id: str, origin: str = "user", label: str | None = None) -> list[dict]:
        self.failed = False
        turn = {"id": turn_id, "turnId": turn_id, "kind": "turn", "state": "running", "origin": origin,
                "endedAt": None, "createdAt": now_ms()}
        if label:
            turn["label"] = label  # why a turn no message opened runs (e.g. "Usage limit reset")
        events = self.upsert(turn)
        self.info["activeTurnId"] = turn_id
        self.info.pop("limit", None)  # a limit holds until the next turn opens
        return events + self.refresh_info()

    def turns(self) -> list[dict]:
        return [self.items[item_id] for item_id in self.order if self.items[item_id]["kind"] == "turn"]

    def add_user(self, turn_id: str, text: str, item_id: str | None = None, images: int = 0,
                 attachments: list[dict] | None = None, references: dict | None = None) -> list[dict]:
        item = {"id": item_id or host_id("user"), "kind": "user", "turnId": turn_id, "text": text}
        if images:
            item["images"] = images  # how many went with it (the images themselves are the CLI's)
        if attachments:
            item["attachments"] = attachments  # {id, name, mime, size}: read back with chat.attachment
        for key in ("mentions", "skills", "chats"):  # as the message named them (actors/core/references.py)
            if (references or {}).get(key):
                item[key] = list(references[key])
        return self.upsert(item)

    def note(self, level: str, text: str, turn_id: str | None = None, item_id: str | None = None) -> list[dict]:
        return self.upsert({"id": item_id or host_id("note"), "kind": "note", "level": level, "text": text,
                            "turnId": turn_id if turn_id is not None else self.info.get("activeTurnId")})

    def end_turn(self, state: str, cost: float | None = None, process_gone: bool = False,
                 limit: dict | None = None) -> list[dict]:
        """Closes the active turn: streaming items stop, running tools fail, and on an abort (or a
        dead process) every pending request is cancelled, so none stays open under a finished turn."""
        turn = self.active_turn()
        events: list[dict] = []
        if turn is None or turn["state"] != "running":
            return events
        self._join()
        for item_id in list(self.order):
            item = self.items[item_id]
            if item.get("turnId") != turn["id"]:
                continue
            if item.get("streaming"):
                events += self.upsert({**item, "streaming": False})
            if item["kind"] == "tool" and item.get("state") == "running" and \
                    (process_gone or not item.get("parentToolUseId")):
                # A subagent's tools go on after the turn that started it (it runs in the background).
                events += self.upsert({**item, "state": "error"})
        if state == "aborted" or process_gone:
            events += self.cancel_requests()
        ended = {**turn, "state": state, "endedAt": now_ms()}
        if cost is not None:
            ended["costUsd"] = cost  # what the CLI reported this turn cost
        if limit:
            ended["limit"] = limit  # a usage limit or an overloaded model; info.limit repeats it
            self.info["limit"] = limit
        events += self.upsert(ended)
        self.info["activeTurnId"] = None
        self.info["usage"]["turns"] += 1
        return events + self.refresh_info()

    def stop_background(self) -> list[dict]:
        """The CLI is gone: its subagents and background shells went with it (kept in
        info.backgroundStopped until the agent is told, actors/core/background.py)."""
        events: list[dict] = []
        stopped = []
        for item_id in list(self.order):
            item = self.items[item_id]
            if item["kind"] in ("subagent", "task") and item.get("status") == "running":
                events += self.upsert({**item, "status": "stopped"})
                stopped.append(item)
        if stopped:
            self.info["backgroundStopped"] = background.remember(self.info.get("backgroundStopped"), stopped)
        if self.info.get("background") or stopped:
            events += self.set_info(background=[])
        return events

    def cancel_requests(self) -> list[dict]:
        events = []
        for item in self.pending_requests():
            field = "decision" if item["kind"] == "approval" else "state"
            events += self.upsert({**item, field: "cancelled"})
        return events

    def set_info(self, **changes) -> list[dict]:
        self.info.update(changes)
        return self.refresh_info()

    def refresh_info(self) -> list[dict]:
        self.info["requests"] = [self._summary(item) for item in self.pending_requests()[:LIMITS["perChat"]]]
        # A chat that cannot be saved reads error (info.storeError says why) until it is saved.
        failed = self.failed or bool(self.info.get("storeError"))
        self.info["status"] = chat_status(pending=bool(self.info["requests"]), busy=self.busy(), failed=failed)
        return [{"type": "info", "info": self.info}]

    def _summary(self, item: dict) -> dict:
        made = self._requests.get(item["id"])
        if made is None:
            made = self._requests[item["id"]] = summary(item)
        return made

    def mark_failed(self) -> None:
        """A failure outside the turn (its CLI died): the status reads error until the next turn."""
        self.failed = True

    def rewind_to(self, turn_id: str) -> list[dict]:
        """The conversation back to before ``turn_id``: that turn and every item after it are
        gone (one ``reset`` event with the items kept, as a client then holds them)."""
        self._join()
        kept = [self.items[i] for i in self.order[:self._index[turn_id]]]
        self._clear()
        for item in kept:
            self._store(item)
        self.info["activeTurnId"] = None
        return [{"type": "reset", "info": self.info, "items": kept}]

    def prepend(self, items: list[dict]) -> list[dict]:
        """``items`` before everything the thread holds (the conversation before devhostd held
        it, replayed by its agent, while the person's first message may have gone in): one
        ``reset`` event with all the items, as a client then holds them."""
        self._join()
        kept = [self.items[i] for i in self.order]
        self._clear()
        for item in [*items, *kept]:
            self._store(item)
        return [{"type": "reset", "info": self.info, "items": [self.items[i] for i in self.order]}]

    def reset(self) -> list[dict]:
        self._clear()
        self.info.pop("backgroundStopped", None)  # a new conversation: nobody waits for that work
        self.failed = False
        return [{"type": "reset", "info": self.info, "items": []}]

    # ---- restarts ----------------------------------------------------------------------------

    def settle_after_restart(self) -> list[dict]:
        """On load: no process survived, so nothing streams, no tool runs, no request waits
        (pending ones are cancelled). The running turn itself is left to the resume decision."""
        events: list[dict] = []
        self._join()
        for item_id in list(self.order):
            item = self.items[item_id]
            if item.get("streaming"):
                events += self.upsert({**item, "streaming": False})
            if item["kind"] == "tool" and item.get("state") == "running":
                events += self.upsert({**item, "state": "error"})
        events += self.cancel_requests()
        events += self.stop_background()
        self.info["running"] = False
        return events + self.refresh_info()

    def abort_interrupted(self, reason: str) -> list[dict]:
        """On load: the turn that was running when the daemon stopped ends aborted, with a note."""
        turn = self.active_turn()
        if turn is None or turn["state"] != "running":
            return []
        events = self.note("warning", NOT_RESUMED + reason, turn_id=turn["id"])
        return events + self.end_turn("aborted", process_gone=True)

    def apply(self, event: dict) -> None:
        """Replays one logged event (the log holds exactly what clients were sent)."""
        kind = event.get("type")
        if kind == "item":
            self._parts.pop(event["item"]["id"], None)  # the item event holds the whole text
            self._store(event["item"])
        elif kind == "delta":
            self.append_text(event.get("itemId"), event.get("text", ""))
        elif kind == "info":
            self.info = event["info"]
        elif kind == "reset":
            self._clear()
            self.info = event["info"]
            for item in event.get("items") or []:
                self._store(item)


class InOrder:
    """A thread's items in order, read by index or slice (what ``history.page`` reads)."""

    def __init__(self, thread: Thread):
        self._thread = thread

    def __len__(self) -> int:
        return len(self._thread.order)

    def __getitem__(self, index):
        order = self._thread.order
        if isinstance(index, slice):
            return [self._thread.item(item_id) for item_id in order[index]]
        return self._thread.item(order[index])

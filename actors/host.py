"""The Host actor: the registry of chat sessions of this daemon.

It creates, lists, closes and forgets sessions, and ends them all at shutdown. Chats tell it
their record whenever it changes, so listing never has to ask a chat.
"""
from __future__ import annotations

import os
import secrets

import pykka

from actors.chat import Chat
from actors.guard import guarded
from actors.harness import HARNESSES


class ChatRequestError(Exception):
    """A request the host refuses; ``status`` is the HTTP status that fits."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Host(pykka.ThreadingActor):
    def __init__(self, environment: dict | None = None, chat_options: dict | None = None):
        super().__init__()
        self._environment = environment if environment is not None else dict(os.environ)
        self._chat_options = chat_options or {}
        self._chats: dict[str, pykka.ActorProxy] = {}
        self._refs: dict[str, pykka.ActorRef] = {}
        self._records: dict[str, dict] = {}
        self._order: list[str] = []

    def create(self, harness_id: str, root: str, command: tuple[str, ...], model: str | None,
               resume_id: str | None) -> dict:
        harness = HARNESSES.get(harness_id)
        if harness is None:
            raise ChatRequestError(400, f"unknown harness {harness_id!r}; use one of: {', '.join(HARNESSES)}")
        if resume_id:
            self._check_resume(harness, root, resume_id)
        session_id = secrets.token_hex(8)
        ref = Chat.start(session_id=session_id, harness=harness, root=root, command=command, model=model,
                         resume_id=resume_id, host=self.actor_ref.proxy(), **self._chat_options)
        self._refs[session_id] = ref
        self._chats[session_id] = ref.proxy()
        self._order.append(session_id)
        # The chat publishes its own record as it starts (a tell that queues behind this call);
        # until then the list shows what it will say.
        record = {"id": session_id, "harness": harness_id, "projectRootPath": root, "status": "starting",
                  "model": model}
        if resume_id:
            record["nativeSessionId"] = resume_id
        self._records[session_id] = record
        return record

    def _check_resume(self, harness, root: str, resume_id: str) -> None:
        for session_id, record in list(self._records.items()):
            if record.get("nativeSessionId") != resume_id or record["harness"] != harness.HARNESS_ID:
                continue
            if record["projectRootPath"] != root:
                raise ChatRequestError(400, "that conversation belongs to another project; resume it from "
                                            "a page of that project")
            if record["status"] != "closed":
                raise ChatRequestError(409, f"that conversation is already open in session {session_id}; "
                                            "attach to it instead")
        cwd = harness.find_conversation_cwd(resume_id, self._environment)
        if cwd is None:
            raise ChatRequestError(404, f"{harness.LABEL} has no saved conversation {resume_id}")
        if not _inside(os.path.realpath(cwd) if cwd else "", root):
            raise ChatRequestError(400, "that conversation belongs to another project; resume it from a page "
                                        "of that project")
        # The resumed session replaces the closed sessions of the same conversation in the list.
        for session_id, record in list(self._records.items()):
            if record.get("nativeSessionId") == resume_id and record["status"] == "closed":
                self._forget(session_id)

    def _forget(self, session_id: str) -> None:
        ref = self._refs.pop(session_id)
        self._chats.pop(session_id)
        self._records.pop(session_id, None)
        self._order.remove(session_id)
        ref.stop(block=False)  # frees the closed session's history

    def list(self, root: str) -> list[dict]:
        return [self._records[sid] for sid in self._order if self._records[sid]["projectRootPath"] == root]

    def chat(self, session_id: str):
        """(proxy, record) of a session, or (None, None)."""
        if session_id not in self._chats:
            return None, None
        return self._chats[session_id], self._records[session_id]

    @guarded
    def on_record(self, record: dict) -> None:
        if record["id"] in self._records:
            self._records[record["id"]] = record

    def chats(self) -> list:
        """Every session's chat proxy, oldest first (the daemon closes them all at shutdown)."""
        return [self._chats[sid] for sid in self._order]

    def on_stop(self) -> None:
        for ref in self._refs.values():
            ref.stop(block=False)


def _inside(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip("/") + "/"))

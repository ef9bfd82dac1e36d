"""One core envelope in, one answer out: the request is read, its caller checked (web/auth.py),
and the request family's handler asked (web/core/chats.py, approvals.py, background.py,
keeping.py, pages.py: each ``REQUESTS`` maps a request's name to ``handler(service, payload, client)``).
"""
from __future__ import annotations

import pykka

from actors.chatlog import daemon_log
from actors.errors import ChatError
from storage import write_failure
from web.auth import PERSON, Caller
from web.core import approvals, background, chats, checkpoints, keeping, pages, preferences, skills
from web.core.payload import chat_id

REQUESTS = {**chats.REQUESTS, **approvals.REQUESTS, **background.REQUESTS, **keeping.REQUESTS,
            **skills.REQUESTS, **preferences.REQUESTS, **pages.REQUESTS,
            **checkpoints.REQUESTS}


class CoreService:
    """Turns envelopes into asks of the registry and its chats. One per daemon."""

    def __init__(self, registry: pykka.ActorProxy, clients, visuals: pykka.ActorProxy | None = None):
        self.registry = registry
        self.clients = clients
        self.visuals = visuals
        self.pages: pykka.ActorProxy | None = None  # the open pages' memory (actors/page_memory.py), once started
        self.preferences = preferences.Preferences()  # the connected clients' (chat.setPreferences)

    def handle(self, frame, client=None, caller: Caller = PERSON) -> dict:
        """One envelope in, one answer out; never raises. ``caller`` says who asks: an agent may
        make only its own chat's agent-side requests (web/auth.py)."""
        request_id = frame.get("id") if isinstance(frame, dict) and isinstance(frame.get("id"), str) else None
        try:
            if not isinstance(frame, dict) or not request_id or not isinstance(frame.get("type"), str) \
                    or not frame["type"]:
                raise ChatError("bad-request", "a request is {id: <non-empty string>, type: <name>, payload: {...}}")
            payload = frame.get("payload", {})
            if not isinstance(payload, dict):
                raise ChatError("bad-request", "`payload` must be an object")
            handler = REQUESTS.get(frame["type"])
            if handler is None:
                raise ChatError("unknown-request", f"unknown request {frame['type']!r}")
            refusal = caller.refusal(frame["type"], payload)
            if refusal:
                raise ChatError("forbidden", refusal)
            return {"id": request_id, "ok": True, "result": handler(self, payload, client)}
        except ChatError as exc:
            return {"id": request_id, "ok": False, "error": {**exc.details, "code": exc.code, "message": str(exc)}}
        except pykka.Timeout:
            return {"id": request_id, "ok": False,
                    "error": {"code": "internal", "message": "the chat is busy; try again"}}
        except OSError as exc:
            if not write_failure.is_full(exc):
                return _bug(frame, request_id, exc)
            # A full disk is the machine's state, not a bug: the person is told what to free.
            full = {"code": "storage-full", "message": write_failure.not_done(exc)}
            return {"id": request_id, "ok": False, "error": full}
        except Exception as exc:  # noqa: BLE001 - answered as internal, and logged as the bug it is
            return _bug(frame, request_id, exc)


def _request_name(frame) -> str:
    """A request for a log line: its type, and the session (chat id) it was about when it names one
    that passed its check."""
    if not isinstance(frame, dict):
        return "?"
    payload = frame.get("payload")
    try:
        chat = chat_id(payload) if isinstance(payload, dict) and "chatId" in payload else None
    except ChatError:
        chat = None
    return f"{frame.get('type')}" + (f" of session {chat}" if chat else "")


def _bug(frame, request_id, exc: Exception) -> dict:
    daemon_log(f"bug: core request {_request_name(frame)} failed: {exc!r}")
    return {"id": request_id, "ok": False, "error": {"code": "internal", "message": "the request failed"}}

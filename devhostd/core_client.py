"""A small Python client of the chat core, for integrations and the tests.

    with CoreConnection("http://127.0.0.1:7777") as host:   # the secret from the default state folder
        host.chats.create("my-chat", provider="claude", cwd="/path/to/checkout")
        host.chats.attach("my-chat")
        host.chats.send("my-chat", "hello")
        host.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["info"]["status"] == "idle")

One WebSocket to ``/__devhost__/ws/core``; answers are matched by id, and every event that
arrives meanwhile is kept in ``events``, in order. The core's secret is sent as a bearer
token: ``token`` when given, else the one devhostd keeps in ``<state_dir>/core-token`` (the
daemon's default state folder when ``state_dir`` is not given). Needs ``websocket-client``.
"""
from __future__ import annotations

import itertools
import json
import time

import websocket


def core_secret(state_dir: str | None = None) -> str:
    """The chat core's secret as devhostd keeps it (storage/core_token.py)."""
    from storage import core_token
    from storage.state_folder import default_state_dir
    folder = state_dir or default_state_dir()
    token = core_token.read(folder)
    if token is None:
        raise CoreRequestError("unauthorized", f"no chat-core secret in {core_token.token_path(folder)}: start "
                                               "devhostd with that state folder once, or pass the token")
    return token


class CoreRequestError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class CoreConnection:
    def __init__(self, control_origin: str, timeout: float = 60, *, token: str | None = None,
                 state_dir: str | None = None):
        host = control_origin.split("://", 1)[1]
        token = token or core_secret(state_dir)
        self._ws = websocket.create_connection(f"ws://{host}/__devhost__/ws/core", origin=control_origin,
                                               timeout=timeout, header=[f"Authorization: Bearer {token}"])
        self._ids = itertools.count(1)
        self.timeout = timeout
        self.events: list[dict] = []
        self.chats = Chats(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self._ws.close()
        except Exception:  # noqa: BLE001
            pass

    def _next(self, timeout: float) -> dict:
        self._ws.settimeout(timeout)
        frame = json.loads(self._ws.recv())
        if frame.get("type") == "event":
            self.events.append(frame)
        return frame

    def request(self, kind: str, payload: dict | None = None):
        request_id = f"r{next(self._ids)}"
        self._ws.send(json.dumps({"id": request_id, "type": kind, "payload": payload or {}}))
        deadline = time.monotonic() + self.timeout
        while True:
            frame = self._next(max(0.1, deadline - time.monotonic()))
            if frame.get("id") == request_id and "ok" in frame:
                if frame["ok"]:
                    return frame["result"]
                raise CoreRequestError(frame["error"]["code"], frame["error"]["message"])

    def wait_event(self, predicate, timeout: float | None = None, what: str = "an event") -> dict:
        for frame in self.events:
            if predicate(frame):
                return frame
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {what}; last events: {[_short(e) for e in self.events[-12:]]}")
            frame = self._next(remaining)
            if frame.get("type") == "event" and predicate(frame):
                return frame


class Chats:
    """``host.chats.<method>``: one method per request of the seed page."""

    def __init__(self, connection: CoreConnection):
        self._c = connection

    def create(self, chat_id: str, **fields):
        return self._c.request("chat.create", {"chatId": chat_id, **fields})

    def configure(self, chat_id: str, **fields):
        return self._c.request("chat.configure", {"chatId": chat_id, **fields})

    def list(self):
        return self._c.request("chat.list")["chats"]

    def attach(self, chat_id: str, **fields):
        return self._c.request("chat.attach", {"chatId": chat_id, **fields})

    def detach(self, chat_id: str):
        return self._c.request("chat.detach", {"chatId": chat_id})

    def history(self, chat_id: str, **fields):
        return self._c.request("chat.history", {"chatId": chat_id, **fields})

    def send(self, chat_id: str, text: str, **fields):
        return self._c.request("chat.send", {"chatId": chat_id, "text": text, **fields})

    def skills(self, chat_id: str):
        """The skills the chat's CLI offers its folder: [{name, description, source}]."""
        return self._c.request("skills.list", {"chatId": chat_id})["skills"]

    def set_preferences(self, **fields):
        """This connection's defaults for the chats it creates (runtimeMode, selections, accounts, changedAt)."""
        return self._c.request("chat.setPreferences", fields)

    def attachment(self, chat_id: str, attachment_id: str):
        """An attachment of the chat's messages: {attachment: {id, name, mime, size}, data (base64)}."""
        return self._c.request("chat.attachment", {"chatId": chat_id, "attachmentId": attachment_id})

    def unqueue(self, chat_id: str, message_id: str):
        return self._c.request("chat.unqueue", {"chatId": chat_id, "messageId": message_id})

    def send_now(self, chat_id: str, message_id: str):
        return self._c.request("chat.sendNow", {"chatId": chat_id, "messageId": message_id})

    def approve(self, chat_id: str, request_id, decision: str, message: str | None = None,
                runtime_mode: str | None = None):
        """``runtime_mode``: the mode an approved plan goes on in."""
        payload = {"chatId": chat_id, "requestId": request_id, "decision": decision}
        if message is not None:
            payload["message"] = message
        if runtime_mode is not None:
            payload["runtimeMode"] = runtime_mode
        return self._c.request("chat.approve", payload)

    def answer(self, chat_id: str, request_id, answers: dict):
        return self._c.request("chat.answer", {"chatId": chat_id, "requestId": request_id, "answers": answers})

    def dismiss(self, chat_id: str, item_id: str):
        return self._c.request("chat.dismiss", {"chatId": chat_id, "itemId": item_id})

    def cancel(self, chat_id: str, subagents: bool = False):
        return self._c.request("chat.cancel", {"chatId": chat_id, "subagents": subagents})

    def stop_task(self, chat_id: str, task_id: str):
        return self._c.request("chat.stopTask", {"chatId": chat_id, "taskId": task_id})

    def subagent(self, chat_id: str, subagent_id: str, **fields):
        """A page of a delegated agent's own conversation; ``watch=True`` for chat.subagentChanged."""
        return self._c.request("chat.subagent", {"chatId": chat_id, "subagentId": subagent_id, **fields})

    def stop_subagent(self, chat_id: str, subagent_id: str):
        return self._c.request("chat.stopSubagent", {"chatId": chat_id, "subagentId": subagent_id})

    def publish_visual(self, chat_id: str, title: str, html: str, **fields):
        """Publishes an HTML page in the chat (loaded or not): {visual}. ``fields``: maxHeight,
        heights, turnId."""
        return self._c.request("chat.publishVisual", {"chatId": chat_id, "title": title, "html": html, **fields})

    def list_visuals(self, chat_id: str):
        return self._c.request("chat.listVisuals", {"chatId": chat_id})["visuals"]

    def remove_visual(self, chat_id: str, visual_id: str):
        return self._c.request("chat.removeVisual", {"chatId": chat_id, "visualId": visual_id})["visuals"]

    def copy_visuals(self, from_chat: str, to_chat: str, keep: list | None = None):
        """A fork's visuals (visuals.copyChat)."""
        payload = {"fromChatId": from_chat, "toChatId": to_chat, **({"keep": keep} if keep is not None else {})}
        return self._c.request("visuals.copyChat", payload)["visuals"]

    def add_bookmark(self, chat_id: str, item_id: str, name: str | None = None):
        return self._c.request("chat.addBookmark", {"chatId": chat_id, "itemId": item_id,
                                                    **({"name": name} if name is not None else {})})

    def rename_bookmark(self, chat_id: str, item_id: str, name: str):
        return self._c.request("chat.renameBookmark", {"chatId": chat_id, "itemId": item_id, "name": name})

    def remove_bookmark(self, chat_id: str, item_id: str):
        return self._c.request("chat.removeBookmark", {"chatId": chat_id, "itemId": item_id})

    def clear(self, chat_id: str, force: bool = False):
        return self._c.request("chat.clear", {"chatId": chat_id, "force": force})

    def compact(self, chat_id: str):
        return self._c.request("chat.compact", {"chatId": chat_id})

    def rename(self, chat_id: str, title: str):
        return self._c.request("chat.rename", {"chatId": chat_id, "title": title})

    def kill(self, chat_id: str):
        return self._c.request("chat.kill", {"chatId": chat_id})


def _short(frame: dict) -> str:
    payload = frame.get("payload") or {}
    event = payload.get("event") or {}
    if frame.get("event") == "chat.status":
        return f"status:{payload['info']['status']}"
    item = event.get("item") or {}
    return f"{event.get('type')}:{item.get('kind', '')}:{item.get('state', item.get('decision', ''))}"

"""The CoreHost actor: the registry of core chats (the seed's `host.chats`), and their store.

Chats are created by a client-chosen id; a chat already on disk is loaded instead, keeping its
provider, folder and model. At start the host loads every stored chat whose turn was running
when the daemon stopped, so the turn is settled (aborted with a note, or resumed) with no client
connected. Chats tell the host their info when it changes, so listing never asks a chat.
"""
from __future__ import annotations

import os

import pykka

from actors.core.queue import CoreError
from actors.core_chat import CoreChat
from actors.guard import guarded
from actors.harness import HARNESSES
from storage.chat_store import ChatStore, ChatUnreadable

PROVIDERS = {"claude": "claude-code", "codex": "codex"}  # the core's provider names -> harness ids
RUNTIME_MODES = ("supervised", "auto-accept-edits", "auto", "full-access")


class CoreClients:
    """Every connected core client, for chat.status (which goes to all of them)."""

    def __init__(self):
        self._sinks: set = set()

    def add(self, sink) -> None:
        self._sinks.add(sink)

    def remove(self, sink) -> None:
        self._sinks.discard(sink)

    def broadcast(self, frame: bytes) -> None:
        for sink in list(self._sinks):
            sink.push(frame)


class CoreHost(pykka.ThreadingActor):
    def __init__(self, data_dir: str, clients: CoreClients, commands=None, resuming_on: bool = False,
                 environment: dict | None = None):
        super().__init__()
        self._store = ChatStore(data_dir)
        self._clients = clients
        self._commands = commands or (lambda: {})  # harness id -> command, from the manifest
        self._resuming_on = resuming_on
        self._environment = environment if environment is not None else dict(os.environ)
        self._chats: dict[str, pykka.ActorRef] = {}
        # One proxy per chat, made once: building one introspects the whole actor (~0.4 ms).
        self._proxies: dict[str, pykka.ActorProxy] = {}
        self._infos: dict[str, dict] = {}

    def on_start(self) -> None:
        # Settle what a stop left running, without waiting for a client (spec I10).
        for chat_id in self._store.chat_ids():
            try:
                record, log = self._store.load(chat_id)
                info = (record or {}).get("info") or log[0]["event"]["info"]
                for line in log:
                    if line["event"].get("type") in ("info", "reset"):
                        info = line["event"]["info"]
                if info.get("activeTurnId") or info.get("running"):
                    self._load(chat_id, (record, log))
            except ChatUnreadable:
                continue  # answered chat-unreadable when a client asks for it; left as it is
            except Exception as exc:  # noqa: BLE001 - one bad chat must not keep the others from loading
                from actors.chatlog import daemon_log
                daemon_log(f"bug: chat {chat_id} could not be settled at start: {exc!r}")

    def create(self, payload: dict) -> dict:
        chat_id = payload["chatId"]
        if chat_id in self._chats:
            return self._infos[chat_id]  # create is idempotent per id
        try:
            stored_already = self._store.exists(chat_id)
        except ValueError as exc:  # an id no file can be named after: nothing of it could be kept
            raise CoreError("bad-request", str(exc)) from None
        if stored_already:
            try:
                stored = self._store.load(chat_id)
            except ChatUnreadable as exc:
                raise CoreError("chat-unreadable", str(exc)) from None
            return self._load(chat_id, stored)
        provider = payload.get("provider") or "claude"
        if provider not in PROVIDERS:
            raise CoreError("bad-request", f"provider must be one of: {', '.join(PROVIDERS)}")
        cwd = payload.get("cwd") or self._environment.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise CoreError("bad-request", f"cwd must be an existing absolute folder: {cwd}")
        runtime_mode = payload.get("runtimeMode") or "full-access"
        if runtime_mode not in RUNTIME_MODES:
            raise CoreError("bad-request", f"runtimeMode must be one of: {', '.join(RUNTIME_MODES)}")
        model = (payload.get("selection") or {}).get("model")
        harness = HARNESSES[PROVIDERS[provider]]
        ref = CoreChat.start(chat_id=chat_id, harness=harness, cwd=os.path.realpath(cwd),
                             command=self._command(harness), model=model, runtime_mode=runtime_mode,
                             store=self._store, clients=self._clients, registry=self.actor_ref.proxy(),
                             resuming_on=self._resuming_on, resume=payload.get("resume"))
        return self._register(chat_id, ref)

    def _load(self, chat_id: str, stored) -> dict:
        record, log = stored
        info = (record or {}).get("info") or {}
        if not info and log:
            info = log[0]["event"]["info"]  # a chat rebuilt from a log that starts at its beginning
        harness = HARNESSES.get(PROVIDERS.get(info.get("provider"), info.get("provider")))
        if harness is None:
            raise CoreError("chat-unreadable", f"chat {chat_id} names an unknown provider {info.get('provider')!r}")
        ref = CoreChat.start(chat_id=chat_id, harness=harness, cwd=info["cwd"],
                             command=self._command(harness), model=(info.get("selection") or {}).get("model"),
                             runtime_mode=info.get("runtimeMode", "full-access"), store=self._store,
                             clients=self._clients, registry=self.actor_ref.proxy(), stored=stored,
                             resuming_on=self._resuming_on)
        return self._register(chat_id, ref)

    def _register(self, chat_id: str, ref) -> dict:
        self._chats[chat_id] = ref
        self._proxies[chat_id] = ref.proxy()
        info = self._proxies[chat_id].info().get(timeout=10)
        self._infos[chat_id] = info
        return info

    def _command(self, harness) -> tuple[str, ...]:
        return tuple(self._commands().get(harness.HARNESS_ID) or harness.DEFAULT_COMMAND)

    def chat(self, chat_id: str):
        proxy = self._proxies.get(chat_id)
        if proxy is None:
            raise CoreError("chat-not-found", f"No chat {chat_id}")
        return proxy

    def list(self) -> list[dict]:
        return [self._infos[chat_id] for chat_id in self._chats]

    @guarded
    def on_info(self, chat_id: str, info: dict) -> None:
        if chat_id in self._chats:
            self._infos[chat_id] = info

    def forget(self, chat_id: str) -> None:
        ref = self._chats.pop(chat_id, None)
        self._proxies.pop(chat_id, None)
        self._infos.pop(chat_id, None)
        if ref is not None:
            ref.stop(block=False)

    def chats(self) -> list:
        return list(self._proxies.values())

    def on_stop(self) -> None:
        for ref in self._chats.values():
            ref.stop(block=False)

"""chat.setPreferences: a connected core client's defaults for the chats it creates (B17).

Each client on the core socket may state its preferences: ``runtimeMode``,
``terminalRuntimeMode``, ``selections`` (per provider: ``{model, …}``), ``accounts`` (per provider:
an account's name) and ``changedAt`` (ms; the time of the daemon's clock when absent). Of every
connected client's, the newest ``changedAt`` wins; a client's are dropped when it disconnects. A
``chat.create`` whose payload names no ``runtimeMode``, ``selection`` or ``account`` gets the
winner's (for the provider it creates): a preferred account the manifest does not name is passed
over (the chat gets the last picked, as with no preference), since a client's preferences may be
another machine's. ``terminalRuntimeMode`` is kept and answered back by nothing yet:
this host runs no terminal chats.
"""
from __future__ import annotations

import time

from actors.errors import ChatError
from actors.harness.mode_names import RUNTIME_MODES
from actors.harness import PROVIDERS

MAX_SELECTION_KEYS = 16
MAX_VALUE = 200


def read(payload: dict) -> dict:
    """The preferences a payload states, checked; refused with what to change."""
    kept: dict = {}
    for key in ("runtimeMode", "terminalRuntimeMode"):
        if payload.get(key) is not None:
            if payload[key] not in RUNTIME_MODES:
                raise ChatError("bad-request", f"`{key}` must be one of: {', '.join(RUNTIME_MODES)}")
            kept[key] = payload[key]
    for key, check in (("selections", _selection), ("accounts", _account)):
        value = payload.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or set(value) - set(PROVIDERS):
            raise ChatError("bad-request", f"`{key}` is an object by provider ({', '.join(PROVIDERS)})")
        kept[key] = {provider: check(key, provider, entry) for provider, entry in value.items()}
    changed = payload.get("changedAt")
    if changed is not None and (isinstance(changed, bool) or not isinstance(changed, int) or changed < 0):
        raise ChatError("bad-request", "`changedAt` is a time in ms since the epoch")
    kept["changedAt"] = changed if changed is not None else int(time.time() * 1000)
    return kept


def _selection(key: str, provider: str, entry) -> dict:
    if not isinstance(entry, dict) or len(entry) > MAX_SELECTION_KEYS or not all(
            isinstance(v, (str, int, float, bool)) or v is None for v in entry.values()) or not all(
            len(v) <= MAX_VALUE for v in entry.values() if isinstance(v, str)):
        raise ChatError("bad-request", f"`{key}.{provider}` is {{model, …}}: at most {MAX_SELECTION_KEYS} "
                                       f"plain values of at most {MAX_VALUE} characters")
    if entry.get("model") is not None and not isinstance(entry["model"], str):
        raise ChatError("bad-request", f"`{key}.{provider}.model` must be a model id")
    return dict(entry)


def _account(key: str, provider: str, entry) -> str:
    if not isinstance(entry, str) or not entry.strip() or len(entry) > MAX_VALUE:
        raise ChatError("bad-request", f"`{key}.{provider}` is an account's name (1..{MAX_VALUE} characters)")
    return entry


class Preferences:
    """Every connected client's preferences; the newest wins."""

    def __init__(self):
        self._by_client: dict[object, dict] = {}

    def set(self, client, preferences: dict) -> None:
        held = self._by_client.get(client)
        if held is None or preferences["changedAt"] >= held["changedAt"]:
            self._by_client[client] = preferences  # an older statement of the same client changes nothing

    def drop(self, client) -> None:
        self._by_client.pop(client, None)

    def newest(self) -> dict:
        return max(self._by_client.values(), key=lambda p: p["changedAt"], default={})

    def defaults_for(self, payload: dict) -> dict:
        """What a chat.create payload gets from the newest preferences where it names nothing."""
        preferences, added = self.newest(), {}
        if payload.get("runtimeMode") is None and preferences.get("runtimeMode"):
            added["runtimeMode"] = preferences["runtimeMode"]
        provider = payload.get("provider") or "claude"
        model = ((preferences.get("selections") or {}).get(provider) or {}).get("model")
        if not isinstance(payload.get("selection"), dict) and isinstance(model, str) and model:
            added["selection"] = {"model": model}
        account = (preferences.get("accounts") or {}).get(provider)
        if "account" not in payload and account:
            added["account"] = account
        return added


def set_preferences(service, payload, client):
    if client is None:
        raise ChatError("bad-request", "chat.setPreferences holds for a connected client: "
                                       "send it on the WebSocket /__devhost__/ws/core")
    service.preferences.set(client, read(payload))
    return {}


REQUESTS = {"chat.setPreferences": set_preferences}

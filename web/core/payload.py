"""Reading a core request's payload, and asking the chats: what every family of requests shares.

A payload that fails its check is a ChatError ``bad-request`` whose message says what to send;
an ask of a chat that stopped is ``chat-not-found``.
"""
from __future__ import annotations

import unicodedata

import pykka

from actors.errors import ChatError
from web import command_rules

ASK_TIMEOUT = 15.0


def text(payload, key, required=True, limit=200_000):
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        raise ChatError("bad-request", f"`{key}` must be a non-empty string")
    return value


def chat_id(payload) -> str:
    value = text(payload, "chatId", limit=200)
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise ChatError("bad-request", "`chatId` may not hold control characters")
    return value


def checked(rule, *args):
    """A shared rule's reading of the payload (web/command_rules.py), refused as bad-request."""
    try:
        return rule(*args)
    except command_rules.Invalid as exc:
        raise ChatError("bad-request", str(exc)) from None


def get(future, timeout: float = ASK_TIMEOUT):
    try:
        return future.get(timeout=timeout)
    except pykka.ActorDeadError:
        raise ChatError("chat-not-found", "that chat is gone") from None


def chat_of(service, payload):
    """The loaded chat the payload names."""
    return get(service.registry.chat(chat_id(payload)))


def known(service, chat: str) -> dict:
    """What the registry knows of a chat, loaded or not."""
    found = get(service.registry.known(chat))
    if found is None:
        raise ChatError("chat-not-found", f"No chat {chat}")
    return found

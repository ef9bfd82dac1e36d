"""What a chat-core message may point at besides its text: files of the chat's folder
(``mentions``), skills, and other chats (their conversation, as context). Pure but for
``resolve_mentions``, which looks the paths up (on the hub's threadpool: actors/guard.py).

A mention is a path relative to the chat's folder; one that resolves outside it (``..``, an
absolute path, a link out) or names nothing is refused, saying which. Another chat's
conversation goes as text before the message: its last CONTEXT_MESSAGES user and assistant
texts, each cut at CONTEXT_ITEM characters, at most CONTEXT_CHAT a chat and CONTEXT_TOTAL for all.
"""
from __future__ import annotations

import os

from actors.errors import ChatError
from actors.harness.paths import inside

CONTEXT_MESSAGES = 20
CONTEXT_ITEM = 2000
CONTEXT_CHAT = 12_000
CONTEXT_TOTAL = 48_000


def resolve_mentions(root: str, mentions: list[str]) -> tuple[str, ...]:
    """Each mention's real path, inside ``root``; refused (bad-request) when one is not."""
    top = os.path.realpath(root)
    found = []
    for mention in mentions:
        if os.path.isabs(mention) or "\0" in mention:
            raise ChatError("bad-request", f"mention {mention!r} must be a path relative to the chat's folder")
        path = os.path.realpath(os.path.join(top, mention))
        if not inside(path, top):
            raise ChatError("bad-request", f"mention {mention!r} resolves outside the chat's folder: "
                                           "name a file inside it")
        if not os.path.exists(path):
            raise ChatError("bad-request", f"mention {mention!r}: no such file in the chat's folder")
        found.append(path)
    return tuple(dict.fromkeys(found))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def chat_context(chat_id: str, items: list[dict]) -> str:
    """Another chat's conversation as context: its last user and assistant texts, oldest first
    (``items`` in the thread's order, as a history page gives them)."""
    said = []
    for item in reversed(items):
        if item.get("kind") in ("user", "assistant") and isinstance(item.get("text"), str) and item["text"].strip():
            who = "User" if item["kind"] == "user" else "Assistant"
            said.append(f"{who}: {_cut(item['text'].strip(), CONTEXT_ITEM)}")
            if len(said) == CONTEXT_MESSAGES:
                break
    body = "\n\n".join(reversed(said)) or "(nothing said yet)"
    if len(body) > CONTEXT_CHAT:
        body = "…" + body[-(CONTEXT_CHAT - 1):]  # the latest of it
    return f"[Context from chat {chat_id}]\n{body}\n[End of context from chat {chat_id}]"


def with_context(text: str, contexts: list[str]) -> str:
    """The message the CLI gets: the other chats' context first, then the person's text."""
    if not contexts:
        return text
    joined = _cut("\n\n".join(contexts), CONTEXT_TOTAL)
    return f"{joined}\n\n{text}" if text else joined

"""Reading a chat the way a core client sees it, for the integration tests."""
from __future__ import annotations


def items(core, chat_id: str, kind: str) -> list[dict]:
    """The chat's items of ``kind``, in order (its newest 100)."""
    return [i for i in core.chats.history(chat_id, limit=100)["items"] if i["kind"] == kind]


def info(core, chat_id: str) -> dict:
    """The chat's info as chat.list gives it."""
    return next(i for i in core.chats.list() if i["chatId"] == chat_id)

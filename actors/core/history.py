"""Paging a thread's items for a client: newest first, cursors that expire on a reset."""
from __future__ import annotations

import json

from actors.errors import ChatError

PAGE_ITEMS = 60
MAX_PAGE_ITEMS = 100
PAGE_BYTES = 512 * 1024  # a page stops before this; an item larger than it travels alone


def page(items: list[dict], reset_seq: int, cursor: str | None, limit: int = PAGE_ITEMS) -> dict:
    """The items just before ``cursor`` (the newest ones without a cursor), and where to go on.

    A cursor is ``<reset_seq>:<start index>``. ``reset_seq`` is the seq of the chat's last
    clear (its ``reset`` event; 0 before any): the indexes of before a clear name other items,
    so a cursor made before it has expired."""
    end = len(items)
    if cursor is not None:
        reset_text, _, start_text = cursor.partition(":")
        # isascii: "²" and "٣" are digits to isdigit() but not cursors this module wrote
        if reset_text != str(reset_seq) or not (start_text.isascii() and start_text.isdigit()) \
                or int(start_text) > len(items):
            raise ChatError("history-expired", "The conversation changed. Reload its history.")
        end = int(start_text)
    start, size = end, 0
    while start > 0 and end - start < min(limit, MAX_PAGE_ITEMS):
        cost = len(json.dumps(items[start - 1], separators=(",", ":")))
        if size and size + cost > PAGE_BYTES:
            break
        size += cost
        start -= 1
    return {"items": items[start:end],
            "history": {"start": start, "cursor": f"{reset_seq}:{start}" if start > 0 else None}}

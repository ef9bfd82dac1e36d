"""Bookmarks on a chat's items: a person marks a message of theirs or an answer of the agent's to
find it again. Plain functions over the list; the Chat actor stores it (storage/sidecars.py).

A bookmark is ``{itemId, name?, excerpt, createdAt}``: the excerpt is the item's text with its
whitespace collapsed (or its images, for a message of images only), cut at 160 characters; a
name is cut at 120, and an empty name removes it. At most 200 per chat.
"""
from __future__ import annotations

from actors.core.cuts import clip, collapsed
from actors.errors import ChatError

MAX_BOOKMARKS = 200
EXCERPT_CHARS = 160
NAME_CHARS = 120


def bookmarkable(item: dict | None) -> bool:
    """A person's message, or an answer of the agent itself (not a subagent's)."""
    return bool(item) and (item["kind"] == "user" or (item["kind"] == "assistant" and not item.get("parentToolUseId")))


def excerpt(item: dict) -> str:
    text = collapsed(item.get("text") or "", EXCERPT_CHARS)
    if not text and item.get("images"):
        text = f"{item['images']} image{'s' if item['images'] != 1 else ''}"
    return clip(text, EXCERPT_CHARS)


def add(bookmarks: list[dict], item: dict | None, item_id: str, name: str | None, now: int) -> list[dict]:
    if not bookmarkable(item):
        raise ChatError("item-not-found", f"No message or answer {item_id} to bookmark in this chat")
    kept = [b for b in bookmarks if b["itemId"] != item_id]
    if len(kept) >= MAX_BOOKMARKS:
        raise ChatError("too-many-bookmarks", f"A chat keeps at most {MAX_BOOKMARKS} bookmarks; remove one first")
    mark = {"itemId": item_id, "excerpt": excerpt(item), "createdAt": now}
    if name and name.strip():
        mark["name"] = clip(name.strip(), NAME_CHARS)
    return kept + [mark]


def rename(bookmarks: list[dict], item_id: str, name: str) -> list[dict]:
    if not any(b["itemId"] == item_id for b in bookmarks):
        raise ChatError("bookmark-not-found", f"No bookmark on {item_id}")
    renamed = []
    for mark in bookmarks:
        if mark["itemId"] == item_id:
            mark = {k: v for k, v in mark.items() if k != "name"}
            if name.strip():
                mark["name"] = clip(name.strip(), NAME_CHARS)
        renamed.append(mark)
    return renamed


def remove(bookmarks: list[dict], item_id: str) -> list[dict]:
    return [b for b in bookmarks if b["itemId"] != item_id]  # removing one that is gone is no error

"""VisualStore: the one keeper of every chat's visuals (actors/core/visuals.py has the rules).

One actor for all chats, so publishing, removing and copying run one after another, and every
change is told, with the chat's whole list, to the registry (which passes it to the chat, if it
is loaded, for its attached clients). A visual can be published in a chat nobody loaded.

    <data>/chats/v-<encoded id>.json           the list, {version: 1, visuals: [...]}
    <data>/attachments/<encoded id>/<id>.html  each page, bootstrap included
"""
from __future__ import annotations

import os

import pykka

from actors.errors import ChatError
from actors.guard import guarded, on_threadpool
from actors.tell import tell
from storage import sidecars
from storage.attachments import AttachmentStore, read_file


class VisualStore(pykka.ThreadingActor):
    def __init__(self, data_dir: str, registry=None):
        super().__init__()
        self._lists = sidecars.visuals(data_dir)
        self._pages = AttachmentStore(data_dir)
        self._registry = registry

    def ping(self) -> bool:
        return True

    def set_registry(self, registry) -> None:
        self._registry = registry

    def _announce(self, chat_id: str, listed: list[dict]) -> None:
        if self._registry is not None:
            tell(self._registry, "on_visuals", chat_id, listed)

    def list(self, chat_id: str) -> list[dict]:
        return self._lists.load(chat_id)

    def publish(self, chat_id: str, fields: dict, turn_id: str | None = None) -> dict:
        """Checks, bootstraps and keeps a page; answers its record (``fields``: title, html,
        maxHeight?, heights?, turnId?; ``turn_id``: the chat's running turn, when none is named)."""
        from actors.core import visuals as rules  # at the first visual: the rules are not start-up's
        from actors.core.thread import now_ms
        title, html, max_height, heights = rules.normalize(fields.get("title"), fields.get("html"),
                                                           fields.get("maxHeight"), fields.get("heights"))
        # Up to 16 MiB encoded, bootstrapped, written and synced: on the hub's threadpool, so no
        # other greenlet waits.
        page = on_threadpool(_page, html)
        turn = fields.get("turnId") if isinstance(fields.get("turnId"), str) and fields.get("turnId") else turn_id
        visual = rules.record(title, max_height, heights, len(page), now_ms(), turn)
        path = on_threadpool(self._pages.write_page, chat_id, visual["id"], page)
        listed = self._lists.load(chat_id) + [visual]
        try:
            self._lists.save(chat_id, listed)
        except OSError:
            os.unlink(path)  # a page no list names would never be removed
            raise
        self._announce(chat_id, listed)
        return visual

    def remove(self, chat_id: str, visual_id: str) -> list[dict]:
        listed = self._lists.load(chat_id)
        kept = [v for v in listed if v.get("id") != visual_id]
        if len(kept) != len(listed):
            self._lists.save(chat_id, kept)
            try:
                os.unlink(self._pages.page_path(chat_id, visual_id))
            except FileNotFoundError:
                pass
            self._announce(chat_id, kept)
        return kept

    @guarded
    def remove_chat(self, chat_id: str) -> None:
        """A clear or a kill: the list and every page go (the attachments folder is the chat's)."""
        had = self._lists.load(chat_id)
        self._lists.remove(chat_id)
        on_threadpool(self._remove_pages, chat_id, [v.get("id", "") for v in had])
        if had:
            self._announce(chat_id, [])

    def copy_chat(self, from_id: str, to_id: str, keep: list[str] | None = None) -> list[dict]:
        """A fork gets the visuals it keeps (all by default), each page written anew under it
        (pages of up to 16 MiB each: read and written on the hub's threadpool)."""
        target = self._lists.load(to_id)
        known = {v.get("id") for v in target}
        wanted = [v for v in self._lists.load(from_id)
                  if v.get("id") not in known and (keep is None or v.get("id") in keep)]
        copied = set(on_threadpool(self._copy_pages, from_id, to_id, [v["id"] for v in wanted]))
        target += [v for v in wanted if v["id"] in copied]
        self._lists.save(to_id, target)
        self._announce(to_id, target)
        return target

    def _copy_pages(self, from_id: str, to_id: str, visual_ids: list[str]) -> list[str]:
        """(On the threadpool.) The ids whose page was there to copy."""
        copied = []
        for visual_id in visual_ids:
            try:
                page = read_file(self._pages.page_path(from_id, visual_id))
            except OSError:
                continue  # its page is gone: nothing to copy
            self._pages.write_page(to_id, visual_id, page)
            copied.append(visual_id)
        return copied

    def _remove_pages(self, chat_id: str, visual_ids: list[str]) -> None:
        """(On the threadpool.)"""
        for visual_id in visual_ids:
            try:
                os.unlink(self._pages.page_path(chat_id, visual_id))
            except (FileNotFoundError, ValueError):
                pass

    def page(self, chat_id: str, visual_id: str) -> dict | None:
        """A visual as an attachment: ``{id, name: "<title>.html", mime: "text/html", size, path}``."""
        visual = next((v for v in self._lists.load(chat_id) if v.get("id") == visual_id), None)
        if visual is None:
            return None
        return {"id": visual_id, "name": f"{visual['title']}.html", "mime": "text/html", "size": visual["size"],
                "path": self._pages.page_path(chat_id, visual_id)}


def _page(html: str) -> bytes:
    """The page as kept (bootstrap included), or too large refused (the raw page and the kept one)."""
    from actors.core import visuals as rules
    raw = len(html.encode("utf-8", "surrogatepass"))
    if raw > rules.LIMITS["bytes"]:
        raise rules.too_large(raw)
    page = rules.inject(html).encode("utf-8", "surrogatepass")
    if len(page) > rules.LIMITS["bytes"]:
        raise rules.too_large(len(page))
    return page


def unknown_chat(chat_id: str) -> ChatError:
    return ChatError("chat-not-found", f"No chat {chat_id}")

"""The core's requests of what a chat keeps: bookmarks, visuals (actors/visual_store.py), and a
message's attachment or a visual's page read back (the seed's B25-B26, F)."""
from __future__ import annotations

import base64

import gevent

from actors.errors import ChatError
from storage.attachments import read_file
from web import command_rules as rules
from web.core.payload import chat_id, chat_of, checked, get, known, text

VISUAL_WAIT = 30.0  # seconds for writing a page of up to 16 MiB


def add_bookmark(service, payload, client):
    item, name = checked(rules.item_id, payload), checked(rules.bookmark_name, payload)
    return get(chat_of(service, payload).add_bookmark(item, name))


def rename_bookmark(service, payload, client):
    name = checked(rules.bookmark_name, payload)
    if name is None:
        raise ChatError("bad-request", "`name` is the bookmark's new name (empty removes the name)")
    item = checked(rules.item_id, payload)
    return get(chat_of(service, payload).rename_bookmark(item, name))


def remove_bookmark(service, payload, client):
    item = checked(rules.item_id, payload)
    return get(chat_of(service, payload).remove_bookmark(item))


def attachment(service, payload, client):
    """An attachment of the chat's messages, or a visual's page, read back: {attachment:
    {id, name, mime, size}, data}."""
    attachment_id = text(payload, "attachmentId", limit=64)
    try:
        return get(chat_of(service, payload).attachment(attachment_id))
    except ChatError as exc:
        page = get(service.visuals.page(chat_id(payload), attachment_id)) if service.visuals is not None else None
        if exc.code != "item-not-found" or page is None:
            raise
    try:
        content = gevent.get_hub().threadpool.apply(read_file, (page["path"],))
    except OSError:
        raise ChatError("item-not-found", f"Visual {attachment_id} is gone from disk") from None
    return {"attachment": {k: page[k] for k in ("id", "name", "mime", "size")},
            "data": base64.b64encode(content).decode()}


def _visual_store(service):
    if service.visuals is None:
        raise ChatError("chat-unsupported", "This host keeps no visuals")
    return service.visuals


def publish_visual(service, payload, client):
    """A page an agent publishes in a chat (loaded or not); a visual published while a turn
    runs belongs to that turn unless the input names another."""
    chat = chat_id(payload)
    store = _visual_store(service)
    turn = known(service, chat)["activeTurnId"]
    fields = {k: payload.get(k) for k in ("title", "html", "maxHeight", "heights", "turnId") if k in payload}
    return {"visual": get(store.publish(chat, fields, turn), timeout=VISUAL_WAIT)}


def list_visuals(service, payload, client):
    chat = chat_id(payload)
    known(service, chat)
    return {"visuals": get(_visual_store(service).list(chat))}


def remove_visual(service, payload, client):
    chat = chat_id(payload)
    chat_of(service, payload)  # the chat must be loaded (the seed's rule)
    return {"visuals": get(_visual_store(service).remove(chat, text(payload, "visualId", limit=64)))}


def copy_visuals(service, payload, client):
    """A fork's visuals: those of ``fromChatId`` it keeps (``keep``: ids; all when absent)."""
    source, target = text(payload, "fromChatId", limit=200), text(payload, "toChatId", limit=200)
    known(service, source)
    known(service, target)
    keep = payload.get("keep")
    if keep is not None and (not isinstance(keep, list) or not all(isinstance(k, str) for k in keep)):
        raise ChatError("bad-request", "`keep` is a list of visual ids")
    return {"visuals": get(_visual_store(service).copy_chat(source, target, keep), timeout=VISUAL_WAIT)}


def remove_chat_visuals(service, payload, client):
    """Takes back what a fork that failed wrote."""
    _visual_store(service).remove_chat(text(payload, "chatId", limit=200))
    return {}


REQUESTS = {"chat.addBookmark": add_bookmark, "chat.renameBookmark": rename_bookmark,
            "chat.removeBookmark": remove_bookmark, "chat.attachment": attachment,
            "chat.publishVisual": publish_visual, "chat.listVisuals": list_visuals,
            "chat.removeVisual": remove_visual, "visuals.copyChat": copy_visuals,
            "visuals.removeChat": remove_chat_visuals}

"""The core's frames as bytes: the events a chat tells its clients, and answers (a long list
encoded a piece at a time, so a 20 MB chat's snapshot never holds the hub)."""
from __future__ import annotations

from web.sockets import LIST_HERE, LONG_LIST, frame, frame_with_list


def encode(message) -> list[bytes]:
    """The core protocol's event frames for what a chat tells its clients (actors/messages.py)."""
    # At the first frame, not at start: its message classes cost start-up ~4 ms to define.
    from actors.messages import ChatBookmarks, ChatEvent, ChatStatus, ChatVisuals
    if isinstance(message, ChatEvent):
        payload = {"chatId": message.chat_id, "event": message.event, "seq": message.seq}
        return [frame({"type": "event", "event": "chat.event", "payload": payload})]
    if isinstance(message, ChatVisuals):
        return [frame({"type": "event", "event": "chat.visuals", "payload": {"chatId": message.chat_id,
                                                                             "visuals": message.visuals}})]
    if isinstance(message, ChatBookmarks):
        return [frame({"type": "event", "event": "chat.bookmarks", "payload": {"chatId": message.chat_id,
                                                                               "bookmarks": message.bookmarks}})]
    if isinstance(message, ChatStatus):
        return [frame({"type": "event", "event": "chat.status", "payload": {"chatId": message.chat_id,
                                                                            "info": message.info}})]
    raise TypeError(f"a core socket has no frame for {message!r}")


def encode_answer(answer: dict) -> bytes:
    """An answer as JSON. A snapshot's list of items (or a reconnect's events) is encoded an
    element at a time (web/sockets.py ``frame_with_list``)."""
    result = answer.get("result")
    key = next((k for k in ("items", "events") if isinstance(result, dict) and isinstance(result.get(k), list)
                and len(result[k]) > LONG_LIST), None)
    if key is None:
        return frame(answer)
    return frame_with_list({**answer, "result": {**result, key: LIST_HERE}}, result[key])

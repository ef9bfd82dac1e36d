"""The core's frames as bytes: the events a chat tells its clients, and answers (a long list
encoded a piece at a time, so a 20 MB chat's snapshot never holds the hub)."""
from __future__ import annotations

import gevent

from actors.messages import ChatBookmarks, ChatEvent, ChatStatus, ChatVisuals
from web.sockets import frame


def encode(message) -> list[bytes]:
    """The core protocol's event frames for what a chat tells its clients (actors/messages.py)."""
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


LONG_LIST = 64  # items past which an answer's list is encoded a piece at a time
PIECE_BYTES = 256 * 1024  # encoded between two chances for other greenlets to run
_SPLICE = "\u2063devhost-list\u2063"  # stands where a list goes; never in a chat's own data as a whole value


def encode_answer(answer: dict) -> bytes:
    """An answer as JSON. A snapshot's list of items (or a reconnect's events) is encoded an
    element at a time, other greenlets let run every PIECE_BYTES: one json.dumps of a 20 MB
    chat holds the hub for over 100 ms, and a C call cannot be moved off the hub by a thread
    (it keeps the GIL throughout)."""
    result = answer.get("result")
    key = next((k for k in ("items", "events") if isinstance(result, dict) and isinstance(result.get(k), list)
                and len(result[k]) > LONG_LIST), None)
    if key is None:
        return frame(answer)
    head, tail = frame({**answer, "result": {**result, key: _SPLICE}}).split(frame(_SPLICE), 1)
    pieces, size = [head, b"["], 0
    for n, element in enumerate(result[key]):
        piece = frame(element)
        pieces.append(b"," + piece if n else piece)
        size += len(piece)
        if size >= PIECE_BYTES:
            size = 0
            gevent.sleep(0)
    pieces += [b"]", tail]
    return b"".join(pieces)

"""What the chat core lists, for browser tests that check the panel against it."""
from __future__ import annotations


def core_chats(daemon) -> list[dict]:
    """The chats' infos as the core's chat.list gives them (the person's own secret, from the
    control origin)."""
    control = daemon.control_origin.split("//")[1]
    status, answer = daemon.request("POST", "/__devhost__/core", {"id": "1", "type": "chat.list", "payload": {}},
                                    host=control, origin=daemon.control_origin)
    assert status == 200 and answer["ok"], answer
    return answer["result"]["chats"]


def core_info(daemon, chat_id: str) -> dict:
    return next(chat for chat in core_chats(daemon) if chat["chatId"] == chat_id)

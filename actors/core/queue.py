"""The queue rules of a core chat, as plain functions over the chat's info."""
from __future__ import annotations

from actors.core.thread import host_id, now_ms
from actors.errors import ChatError

RESUME_PROMPT = "The app restarted while you were working on the previous message. Continue where you left off."
RESUME_NOTE = "Resumed after a restart"


def resume_words(info: dict) -> tuple[str, str]:
    """(prompt to the CLI, note in the thread) of a resume: the chat's own words where it set them."""
    words = info.get("resumeWords") if isinstance(info.get("resumeWords"), dict) else {}
    return words.get("prompt") or RESUME_PROMPT, words.get("note") or RESUME_NOTE
MAX_ATTEMPTS = 2  # a turn is worked on by at most two processes




def must_queue(info: dict, busy: bool) -> bool:
    """A send waits when a turn runs or anything waits already."""
    return busy or bool(info["queue"])


def enqueue(info: dict, text: str, attachments: list[dict] | None = None, references: dict | None = None) -> dict:
    message = {"id": host_id("queued"), "turnId": host_id("turn"), "text": text, "createdAt": now_ms()}
    if attachments:
        message["attachments"] = attachments  # stored already: records with paths, not bytes
    if references:
        message["references"] = references  # mentions, skills, chats and the chats' context, as sent
    info["queue"].append(message)
    return message


def take(info: dict, message_id: str, chat_id: str) -> dict:
    for index, message in enumerate(info["queue"]):
        if message["id"] == message_id:
            return info["queue"].pop(index)
    raise ChatError("request-not-found", f"No queued message {message_id} in chat {chat_id}")


def to_front(info: dict, message_id: str, chat_id: str) -> None:
    info["queue"].insert(0, take(info, message_id, chat_id))


def next_to_drain(info: dict, busy: bool, explicit: bool = False) -> dict | None:
    """The head of the queue when it may go out now: not busy, and not paused unless explicit."""
    if busy or not info["queue"] or (info["queuePaused"] and not explicit):
        return None
    return info["queue"].pop(0)


def resume_decision(turn: dict, agent_session: str | None, resuming_on: bool,
                    info: dict | None = None) -> tuple[bool, str | None, int]:
    """(resume?, reason it is not resumed, attempt) for a turn found running on load. ``info``
    carries the chat's own words (chat.configure): ``endedAt``, when whoever opened the chat
    stopped it (a turn it stopped is never resumed), and ``unownedReason``, the reason said
    instead of devhostd's own."""
    info = info or {}
    attempt = (turn.get("attempt") or 1) + (0 if turn.get("resumePending") else 1)
    ended_at = info.get("endedAt")
    if isinstance(ended_at, int) and ended_at >= (turn.get("createdAt") or 0):
        return False, info.get("unownedReason") or "the chat was stopped on purpose before the restart", attempt
    if not resuming_on:
        return False, info.get("unownedReason") or "this machine does not resume turns", attempt
    if not agent_session:
        return False, "the agent had not started a session to resume yet", attempt
    if attempt > MAX_ATTEMPTS:
        return False, "it was already resumed after an earlier restart", attempt
    return True, None, attempt

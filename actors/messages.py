"""The typed messages the chat runtime takes and gives: no wire format in here.

The web layer parses frames into these (web/commands.py, web/core.py) and encodes what comes
out of the runtime (web/chat_socket.py for the Chat API's frames); nothing under actors/ knows
JSON envelopes or HTTP. The native frames of a CLI are the one exception: they travel as the
CLI's own bytes, so a snapshot never re-encodes them.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Send:
    command_id: str
    text: str
    model: str | None  # None keeps the session's model; "" returns to the CLI's default
    images: tuple[tuple[str, str], ...] = ()  # (media type, base64 data)
    # The chat core's references (actors/core/references.py): each skill as (name, its SKILL.md
    # or None), each mentioned file as its real path inside the chat's folder; the driver writes
    # them as its CLI's own (a slash command and @path, or skill items and the path in the text).
    skills: tuple[tuple[str, str | None], ...] = ()
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Interrupt:
    pass


@dataclass(frozen=True)
class Respond:
    request_id: str | int
    result: dict = field(default_factory=dict)


# ---- what a Chat-API socket is told (its sink encodes each; web/chat_socket.py) ---------------

@dataclass(frozen=True)
class NativeEvents:
    """CLI frames as stored in the session's history: ``first`` is the first one's sequence."""
    first: int
    raws: tuple[bytes, ...]


@dataclass(frozen=True)
class SessionState:
    record: dict
    pending: tuple


@dataclass(frozen=True)
class CommandResult:
    session_id: str
    command_id: str
    delivery: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Notice:
    """An ``error`` frame: something a person should read, not tied to one command."""
    message: str


def is_lowercase_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except (ValueError, AttributeError, TypeError):
        return False


# ---- what a chat-core client is told (web/core.py encodes each) ------------------------------

@dataclass(frozen=True)
class ChatEvent:
    """One event of a chat's log, to the clients attached to that chat."""
    chat_id: str
    event: dict
    seq: int


@dataclass(frozen=True)
class ChatBookmarks:
    """A chat's whole list of bookmarks after a change, to the clients attached to that chat."""
    chat_id: str
    bookmarks: list


@dataclass(frozen=True)
class ChatVisuals:
    """A chat's whole list of visuals after a change, to the clients attached to that chat."""
    chat_id: str
    visuals: list


@dataclass(frozen=True)
class ChatStatus:
    """A chat's info after its status signature changed, to every connected client."""
    chat_id: str
    info: dict

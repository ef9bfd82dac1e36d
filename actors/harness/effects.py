"""What a decoded native frame means to a chat, independent of which CLI sent it.

A harness module turns each CLI frame into a list of these; the Chat actor applies them. They
carry no native payload: the payload itself goes to the event history unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ready:
    """The CLI answered its handshake and takes messages."""
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class NativeSession:
    session_id: str


@dataclass(frozen=True)
class Delivery:
    """Evidence of what became of one message devhost wrote (keyed by its native message id)."""
    message_id: str
    delivery: str  # "queued" | "started" | "error"
    error: str | None = None


@dataclass(frozen=True)
class Earlier:
    """The conversation as the CLI replayed it on resuming (an ACP agent's session/load), as
    items: the first items of a chat made for the resume, dropped by one that holds them."""
    items: tuple[dict, ...]


@dataclass(frozen=True)
class PromptTaken:
    """The CLI shows it received the message devhost wrote last (a resumed turn's prompt is no
    longer pending)."""


@dataclass(frozen=True)
class MessageSettled:
    """The CLI is done with a message: completed, cancelled, discarded or refused."""
    message_id: str


@dataclass(frozen=True)
class TurnStarted:
    cli_turn: str | None = None  # the CLI's own id of the turn, where it gives one (Codex)


@dataclass(frozen=True)
class TurnEnded:
    error: str | None = None  # None: completed or interrupted on request
    interrupted: bool = False
    limit: dict | None = None  # a failed turn that hit a usage limit or an overloaded model (core/limits.py)


@dataclass(frozen=True)
class Facts:
    """What the CLI reported about its session, for the chat's info (only reported values):
    ``slashCommands``, ``costTotalUsd`` (this process's total so far), ``contextTokens`` (what
    the last model request held), ``contextWindow``."""
    fields: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class PlanUsage:
    """How much of the plan's usage window is used, as the CLI reported it (a warning before
    the wall): ``{window, utilization (0..1), status, resetsAt? (ms)}``."""
    usage: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class RequestOpened:
    request_id: str | int
    kind: str


@dataclass(frozen=True)
class RequestClosed:
    request_id: str | int


@dataclass(frozen=True)
class ModelInUse:
    model: str


@dataclass(frozen=True)
class ControlFailed:
    """A request devhost made to the CLI failed; the text is shown to the person."""
    message: str


@dataclass(frozen=True)
class Usage:
    """What the CLI reported a turn cost, for the log (only reported values)."""
    fields: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Write:
    """Frames the protocol must send now, in answer to what it just read."""
    frames: tuple


@dataclass(frozen=True)
class Deadline:
    """Call ``expire(request_id)`` on the driver after ``seconds`` (a reply that never comes)."""
    request_id: object
    seconds: float


@dataclass(frozen=True)
class StartFailed:
    """The CLI cannot take messages (its handshake or conversation failed); the text says why."""
    message: str


@dataclass(frozen=True)
class ModelRefused:
    """The CLI refused a model change; the session keeps the model it had."""
    message: str


@dataclass(frozen=True)
class Retry:
    """The CLI retries a failed model request (Claude Code's system/api_retry): the turn goes
    on, but a reply already under way may come out shorter than it would have."""
    attempt: int | None
    of: int | None
    status: int | None
    error: str | None


@dataclass(frozen=True)
class Skills:
    """The skills the CLI reported for the chat's folder (actors/harness/skills.py's dicts), or
    None when it would not say."""
    listed: tuple | None


@dataclass(frozen=True)
class Rewound:
    """What the CLI said of a rewind of its conversation (Codex's ``thread/revert`` reply):
    ``ok``, and the text for the person (why not, when it refused)."""
    ok: bool
    message: str

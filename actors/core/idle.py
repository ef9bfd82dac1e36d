"""Idle CLIs let go: when a chat may end its CLI for having been idle, and after how long.

Pure rules (the timer and the ending are actors/chat/idle.py's). A CLI process holds ~190 MB
(Claude Code) or ~185 MB (Codex) for as long as it lives, and an idle conversation needs none
of it: its next message resumes the CLI's own saved conversation (``--resume`` of Claude
Code's session id, Codex's ``thread/resume``), as after a daemon restart. So a CLI quiet for
``[devtools.chat] idle_cli_minutes`` is ended, unless something still lives in it or waits on
it; ending it then would lose that something, or show a page a restart it did not ask for.
"""
from __future__ import annotations

from dataclasses import dataclass



def idle_seconds(minutes) -> float | None:
    """Seconds of idleness after which the CLI is let go; None: never (``0``, or no setting)."""
    if minutes is None or isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or minutes <= 0:
        return None
    return float(minutes) * 60.0


@dataclass(frozen=True)
class IdleFacts:
    """What a chat knows of its CLI now; each field's default is the idle one."""
    running: bool = True  # a CLI process is the chat's (there is something to let go)
    session_open: bool = True  # a closed session's CLI is ended already, by the close
    ended: bool = False  # the chat is frozen (the daemon stops) or removed: its own ending comes
    starting: bool = False  # the CLI is not ready yet
    turn_active: bool = False  # the link's turn (the CLI works, or a turn it began by itself)
    thread_busy: bool = False  # the thread's turn runs
    sends: bool = False  # a message is in flight (waiting for its acknowledgement) or queued behind one
    messages_waiting: bool = False  # a message written to the CLI it has not taken up yet
    requests: bool = False  # an approval or a question waits for a person
    background: bool = False  # subagents or background shells still run in the CLI
    take_up_owed: bool = False  # a limited turn is to be taken up on this CLI (info.resumeAt)
    swap_waiting: bool = False  # a settings swap is owed, or messages wait for one
    native_readers: bool = False  # a Chat-API socket streams the CLI's native frames


# Checked in this order: the first that holds is the reason said.
_HOLDS = (
    ("running", False, "no CLI runs"),
    ("session_open", False, "the session is closed"),
    ("ended", True, "the chat is ending"),
    ("starting", True, "the CLI is starting"),
    ("turn_active", True, "a turn runs"),
    ("thread_busy", True, "a turn runs"),
    ("sends", True, "a message is on its way"),
    ("messages_waiting", True, "a message waits for the CLI to take it up"),
    ("requests", True, "a request waits for an answer"),
    ("background", True, "background work runs"),
    ("take_up_owed", True, "a take-up after a usage limit is owed"),
    ("swap_waiting", True, "a settings swap waits"),
    ("native_readers", True, "a Chat-API socket streams the CLI's events"),
)


def what_holds(facts: IdleFacts) -> str | None:
    """Why the chat keeps its CLI now, or None: it may let it go once it has been idle long enough."""
    for field, holding, reason in _HOLDS:
        if getattr(facts, field) == holding:
            return reason
    return None


def may_let_go(facts: IdleFacts) -> bool:
    return what_holds(facts) is None

"""Background work a CLI's end took with it, and the note that tells the agent so.

A subagent or a background shell runs inside the CLI's process: when that process ends (the
daemon restarted, the session was closed, the CLI exited) they end too and are marked stopped.
The agent itself knows nothing of it: its resumed conversation may wait for a report that
will never come. So the chat keeps what was stopped (``info.backgroundStopped``) and its next
message carries a short note naming it, once. Plain functions, linear in their input.
"""
from __future__ import annotations

MAX_KEPT = 16  # the newest ones: a note names a handful, never a wall of them
DESCRIPTION_CHARS = 160


def _described(item: dict) -> str:
    """An item's words, clipped before they are cleaned (a huge one costs its clip, not its size)."""
    for key in ("description", "command", "taskId"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            words = " ".join(value[:DESCRIPTION_CHARS * 2].split())
            return words if len(words) <= DESCRIPTION_CHARS else words[:DESCRIPTION_CHARS - 1] + "…"
    return ""


def remember(kept: list | None, stopped: list[dict]) -> list[dict]:
    """What was stopped so far and not told, with ``stopped`` (subagent and task items) added."""
    entries = [{"kind": item["kind"], "description": _described(item)} for item in stopped[-MAX_KEPT:]]
    return ((kept or []) + entries)[-MAX_KEPT:]


def note(kept: list[dict]) -> str:
    """The words the agent gets with its next message."""
    named = [f"- {'a subagent' if e.get('kind') == 'subagent' else 'a background task'}"
             + (f": {e['description']}" if e.get("description") else "") for e in kept]
    return ("Your previous process ended (devhost restarted, the session was closed, or it exited) while this "
            "background work was still running; it was stopped and will not report back:\n"
            + "\n".join(named) + "\nStart again whatever of it you still need.")

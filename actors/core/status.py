"""The core's chat status, from the facts (spec B41 and section 2)."""
from __future__ import annotations

STATUSES = ("running", "needs-you", "idle", "error", "exited")


def chat_status(*, pending: bool, busy: bool, failed: bool) -> str:
    if pending:
        return "needs-you"  # whatever else holds, a person is waited on
    if busy:
        return "running"
    if failed:
        return "error"  # a transport failure or a crash mid-turn, until the next turn
    return "idle"


def status_signature(info: dict) -> tuple:
    """What decides whether a chat.status goes out: only a change of this (spec B40)."""
    return (info.get("status"), repr(info.get("limit")), info.get("resumeAt"), info.get("resumeAtReset"),
            info.get("delegating"), tuple(r["requestId"] for r in info.get("requests") or []))

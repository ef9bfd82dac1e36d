"""A conversation's status: one derivation from the facts, rendered in both vocabularies.

The Chat API says ``starting / idle / running / requires_action / error / closed`` (a session);
the chat core says ``running / needs-you / idle / error`` (a chat). Both
come from the same situation, in the order a person most needs to see first: a closed session
is closed whatever else holds; then someone is waited on; then work runs; then the last turn
failed; then the CLI is starting; else nothing goes on.
"""
from __future__ import annotations

SESSION_STATUSES = ("starting", "idle", "running", "requires_action", "error", "closed")
CHAT_STATUSES = ("running", "needs-you", "idle", "error", "exited")

_SESSION = {"closed": "closed", "waiting": "requires_action", "working": "running", "failed": "error",
            "starting": "starting", "idle": "idle"}
# The core has no closed or starting: a chat whose session is closed, or whose CLI is still
# starting, has nothing running that a person waits on.
_CHAT = {"closed": "idle", "waiting": "needs-you", "working": "running", "failed": "error",
         "starting": "idle", "idle": "idle"}


def situation(*, closed: bool = False, waiting: bool = False, working: bool = False, failed: bool = False,
              starting: bool = False) -> str:
    if closed:
        return "closed"
    if waiting:
        return "waiting"
    if working:
        return "working"
    if failed:
        return "failed"
    if starting:
        return "starting"
    return "idle"


def session_status(*, closed: bool, starting: bool, turn_active: bool, pending_requests: int,
                   error: str | None) -> str:
    """The Chat API's status of a session."""
    return _SESSION[situation(closed=closed, waiting=bool(pending_requests), working=turn_active,
                              failed=bool(error), starting=starting)]


def chat_status(*, pending: bool, busy: bool, failed: bool) -> str:
    """The chat core's status of a chat."""
    return _CHAT[situation(waiting=pending, working=busy, failed=failed)]


def status_signature(info: dict) -> tuple:
    """What decides whether a chat.status goes out: only a change of this."""
    return (info.get("status"), repr(info.get("limit")), info.get("resumeAt"), info.get("resumeAtReset"),
            info.get("delegating"), tuple(r["requestId"] for r in info.get("requests") or []))

"""Usage limits, rate limits and overloaded models: when a limited turn may be taken up again,
and in what words. Plain functions over a chat's info; the Chat actor keeps the timer.

A limit is not a turn state: the turn ends ``error`` with ``limit: {kind, resetsAt?, window?,
message}`` (``kind`` is ``usage``, ``rate`` — the service answered 429 Too Many Requests until
the CLI's retries ran out — or ``overload`` — 503 / 529, the model is busy for everyone;
``resetsAt`` ms since the epoch when the CLI or the error named one) and ``info.limit`` repeats
it until the next turn opens. The queue is paused.

Taking the turn up again is owed only when the host installed it (``[core] resume_at_reset``)
and the chat did not turn it off (``resumeAtReset: false``); it is a turn of its own
(``origin: "agent"``) on the CLI's own session, at most once per limited turn.
"""
from __future__ import annotations

import re

LIMIT_RETRY_DELAYS_MS = (60_000, 300_000, 900_000)  # an overloaded model: 1, 5, 15 minutes
RESET_MARGIN_MS = 3_000  # after a usage window's reset, so the service has certainly turned it over

WAKE_WORDS = {
    "usage": {"text": "Your previous turn stopped on a usage limit, which has reset now. Continue where you left off.",
              "label": "Usage limit reset", "note": "Resumed after the usage limit reset"},
    "rate": {"text": "Your previous turn stopped on the service's rate limit. Continue where you left off.",
             "label": "Rate limit", "note": "Tried again after the rate limit"},
    "overload": {"text": "Your previous turn stopped because the model was overloaded. Continue where you left off.",
                 "label": "Overloaded model", "note": "Tried again after the model was overloaded"},
}

WARNING_UTILIZATION = 0.8  # a window used this much reads allowed_warning where the CLI does not say

# How OpenAI and Anthropic word a rate limit's wait in an error text: "Please try again in 20s",
# "try again in 1m30s", "retry after 12 seconds".
RETRY_IN = re.compile(r"(?:try again|retry) (?:in|after) ((?:\d+(?:\.\d+)?\s*(?:seconds?|minutes?|ms|h|m|s)\s*)+)",
                      re.IGNORECASE)
UNIT_MS = {"ms": 1, "s": 1000, "second": 1000, "seconds": 1000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
           "h": 3_600_000}

WINDOWS = {300: "five_hour", 10080: "seven_day", 1440: "one_day", 60: "one_hour"}  # minutes -> name


def window_name(minutes) -> str | None:
    """A usage window by its length in minutes, in Claude Code's words (``five_hour``)."""
    if not isinstance(minutes, int) or minutes <= 0:
        return None
    return WINDOWS.get(minutes, f"{minutes}_minutes")


def epoch_ms(epoch_seconds) -> int | None:
    """A CLI's reset time (epoch seconds) in ms, or None for anything else."""
    return int(epoch_seconds * 1000) if isinstance(epoch_seconds, (int, float)) and epoch_seconds > 0 else None


def rate_limit(message: str, now_ms: int, resets_at_ms: int | None = None) -> dict:
    """A turn whose requests were refused 429 until the CLI gave up: ``kind: rate``, with when it
    may go again where known (a reset the CLI named, else the wait the error text names)."""
    limit = {"kind": "rate", "message": message}
    wait = retry_in_ms(message)
    if isinstance(resets_at_ms, int):
        limit["resetsAt"] = resets_at_ms
    elif wait is not None:
        limit["resetsAt"] = now_ms + wait
    return limit


def retry_in_ms(text: str) -> int | None:
    """The wait an error text names ("try again in 1m30s") in ms, or None."""
    found = RETRY_IN.search(text or "")
    if not found:
        return None
    total = 0.0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(seconds?|minutes?|ms|h|m|s)", found.group(1), re.IGNORECASE):
        total += float(amount) * UNIT_MS[unit.lower()]
    return int(total)


def resume_at(limit: dict, tries: int, now: int) -> int | None:
    """When the limited turn is taken up (ms), or None when it is not: an overloaded model (or a
    rate limit with no time named) after 1, 5 and 15 minutes; a usage or rate limit at its reset
    (later tries not before ``now`` plus the delay); a usage limit with no reset named, or a
    fourth limited turn in a row, never."""
    if tries < 1 or tries > len(LIMIT_RETRY_DELAYS_MS):
        return None
    delay = LIMIT_RETRY_DELAYS_MS[tries - 1]
    resets = limit.get("resetsAt")
    if limit.get("kind") == "overload" or (limit.get("kind") == "rate" and not isinstance(resets, int)):
        return now + delay
    if not isinstance(resets, int):
        return None
    return resets + RESET_MARGIN_MS if tries == 1 else max(resets + RESET_MARGIN_MS, now + delay)


def tries(turns: list[dict]) -> int:
    """How many limited turns in a row end the thread (a turn that was not limited resets it)."""
    count = 0
    for turn in reversed(turns):
        if not turn.get("limit"):
            break
        count += 1
    return count


def owed_when_switched_on(limit: dict | None, now: int) -> bool:
    """Turning resume on after the limited turn owes only a usage or rate limit still to reset."""
    return bool(limit) and limit.get("kind") in ("usage", "rate") and isinstance(limit.get("resetsAt"), int) \
        and limit["resetsAt"] > now


def plan_usage(window: str | None, utilization, resets_at_ms, status: str | None) -> dict:
    """How much of a plan's usage window is used (``info.planUsage``): a warning before the wall."""
    usage = {"window": window, "utilization": utilization, "status": status}
    if isinstance(resets_at_ms, int):
        usage["resetsAt"] = resets_at_ms
    return usage

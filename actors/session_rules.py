"""Pure rules of a chat session: the text it sends, how its log lines and errors are cut.

Its status is derived in actors/status.py, with the chat core's."""
from __future__ import annotations

ERROR_DETAIL_BYTES = 512
LOG_LINE_BYTES = 2048
PROMPT_LABEL = "Instructions from devhost"


def compose_message(text: str, prompt: str) -> str:
    """The user's text with the manifest's prompt appended as a labelled section."""
    if not prompt or not text.strip():
        return text
    return f"{text}\n\n---\n{PROMPT_LABEL}:\n{prompt}"


def cut_utf8(text: str, limit: int, marker: str = "…") -> str:
    """At most ``limit`` bytes of UTF-8, never splitting a character, marked when cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    room = limit - len(marker.encode())
    if room < 0:
        return data[:max(limit, 0)].decode("utf-8", "ignore")  # no room for the marker: the limit wins
    return data[:room].decode("utf-8", "ignore") + marker


def exit_reason(label: str, code: int | None, stderr_tail: str) -> str:
    if code is None:
        head = f"{label} could not be started"
    elif code < 0:
        head = f"{label} was killed by signal {-code}"
    else:
        head = f"{label} exited with code {code}"
    tail = " ".join(stderr_tail.split())
    return cut_utf8(f"{head}: {tail}" if tail else head, ERROR_DETAIL_BYTES)

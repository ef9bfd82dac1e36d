"""Joining text deltas before they go out: a client gets fewer, larger events.

Deltas to the same item within one tick are joined; a delta to another item, or any other
event, lets the held one out first. The thread itself is appended at once; only the events
are held, so the host always has the whole text. The held text is kept as pieces, joined once
when it goes out: a tick of thousands of deltas costs each its own length.
"""
from __future__ import annotations


class DeltaJoiner:
    def __init__(self):
        self._held: dict | None = None
        self._pieces: list[str] = []

    @property
    def holding(self) -> bool:
        return self._held is not None

    def add(self, event: dict) -> tuple[list[dict], bool]:
        """(events to send now, whether a new hold started and needs a flush timer)."""
        if self._held is not None and self._held["itemId"] == event["itemId"]:
            self._pieces.append(event["text"])
            return [], False
        out = self.flush()
        self._held = dict(event)
        self._pieces = [event["text"]]
        return out, True

    def flush(self) -> list[dict]:
        held, self._held = self._held, None
        if held is None:
            return []
        held["text"] = "".join(self._pieces)
        self._pieces = []
        return [held]

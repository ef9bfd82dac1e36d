"""The native requests a link's CLI waits on (actors/cli_link.py): approvals, questions, in order.

A plain part of the CliLink. It owns which requests are open, their kinds and when each was
asked (for the log's "waited"). Writing an answer, and a request's deadline (the CLI's
process serial and its driver), are the link's: it tells this part what happened.
"""
from __future__ import annotations

import time


def waited_words(opened: float | None, now: float) -> str | None:
    """How long a request waited, as the log says it; None when it was never seen open."""
    return f"{now - opened:.1f}s" if opened is not None else None


class PendingRequests:
    def __init__(self, log):
        self._log = log
        self._pending: dict = {}  # native request id -> kind, in arrival order
        self._opened: dict = {}  # native request id -> when it was asked (monotonic)

    def __bool__(self) -> bool:
        return bool(self._pending)

    def __len__(self) -> int:
        return len(self._pending)

    def waits_on(self, request_id) -> bool:
        return request_id in self._pending

    def ids(self) -> list:
        return list(self._pending)

    def kind_of(self, request_id) -> str:
        """The kind of an open request (KeyError: none of that id is open)."""
        return self._pending[request_id]

    def opened(self, request_id, kind: str, turn) -> None:
        self._pending[request_id] = kind
        self._opened[request_id] = time.monotonic()
        self._log("request.open", turn=turn, request=request_id, kind=kind)

    def closed(self, request_id) -> bool:
        """The CLI withdrew a request; True when it was open."""
        kind = self._pending.pop(request_id, None)
        if kind is None:
            return False
        self._log("request.cancelled", request=request_id, kind=kind, waited=self._waited(request_id))
        return True

    def answered(self, request_id, delivered: bool) -> None:
        kind = self._pending.pop(request_id)
        self._log("request.answered", request=request_id, kind=kind, waited=self._waited(request_id),
                  delivered=delivered)

    def expired(self, request_id) -> None:
        """Its deadline passed (the driver says what follows: frames to write, effects)."""
        self._log("error", kind="timeout", request=request_id, waited=self._waited(request_id))

    def clear(self) -> None:
        """Nothing is waited on any more (the process ended, or is no longer listened to)."""
        self._pending.clear()

    def _waited(self, request_id) -> str | None:
        return waited_words(self._opened.pop(request_id, None), time.monotonic())

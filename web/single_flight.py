"""One computation per key at a time, its answer shared for a short while.

The panel's routes are on the page's own origin, so the page's scripts can call them as often as
they like; a costly answer (a checkout's file list, a search over every conversation) is worked
out once for all the requests that arrive while it is being worked out, and reused for
``fresh_seconds`` after. A failure is handed to the requests that waited for it and not kept.
Greenlets only: the waiting is gevent's.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Hashable

import gevent.event


class SingleFlight:
    def __init__(self, fresh_seconds: float, most_kept: int = 64, clock: Callable[[], float] = time.monotonic):
        self._fresh = fresh_seconds
        self._most = most_kept
        self._clock = clock
        self._running: dict[Hashable, gevent.event.AsyncResult] = {}
        self._kept: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], object], timeout: float | None = None):
        """``compute()``'s answer for ``key``: a fresh kept one, the one being worked out (waited
        for at most ``timeout`` seconds: TimeoutError after), or a new one."""
        kept = self._kept.get(key)
        if kept is not None and self._clock() - kept[0] < self._fresh:
            return kept[1]
        running = self._running.get(key)
        if running is not None:
            try:
                return running.get(timeout=timeout)
            except gevent.Timeout:
                raise TimeoutError(f"still being worked out after {timeout} s") from None
        result = self._running[key] = gevent.event.AsyncResult()
        try:
            value = compute()
        except Exception as exc:
            result.set_exception(exc)
            raise
        except BaseException:  # the greenlet working it out was killed: its waiters must not wait for ever
            result.set_exception(TimeoutError("the request working it out was stopped; ask again"))
            raise
        else:
            self._keep(key, value)
            result.set(value)
            return value
        finally:
            del self._running[key]

    def forget(self, key: Hashable) -> None:
        self._kept.pop(key, None)

    def _keep(self, key, value) -> None:
        self._kept[key] = (self._clock(), value)
        self._kept.move_to_end(key)
        while len(self._kept) > self._most:
            self._kept.popitem(last=False)

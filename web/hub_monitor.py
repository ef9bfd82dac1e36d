"""A blocked hub, logged once per block with how long it held the hub and where.

gevent's monitor thread (``GEVENT_MONITOR_THREAD_ENABLE``; the threshold is
``GEVENT_MAX_BLOCKING_TIME``, in seconds) looks every threshold whether the hub switched
greenlets, and reports again every threshold while one block lasts. It also monitors any hub
gevent makes in another thread (one that printed from the monitor thread itself, or a
threadpool worker that touched gevent): such a hub never switches, so it would be reported
every period for the daemon's life. So: only the main hub's reports count; the monitor thread
only notes them (it touches nothing of gevent's, which would make it a hub), and the hub
writes one line per block once it runs again, when the block's length is known.

gevent's own report renders the tree of every greenlet, in Python, on the monitor thread: with
a few thousand greenlets that holds the GIL for tens of milliseconds at each report (and a
threadpool worker's hub, which never switches, is reported every period): the monitor itself
stalled the hub it watched. ``install`` replaces its look with a cheap one: the main hub only,
and the blocked thread's innermost frames only.
"""
from __future__ import annotations

import collections
import sys
import time
import traceback

import gevent
import gevent.events

from actors.chatlog import daemon_log

STACK_FRAMES = 3  # the innermost frames of the blocked stack: where the hub was held


class HubBlockReports:
    def __init__(self, hub, log=daemon_log):
        self._hub = hub
        self._log = log
        self._noted: collections.deque = collections.deque()  # (perf_counter, threshold, info); thread-safe
        self._wake = hub.loop.async_()  # send() is safe from any thread; its callback runs on the hub
        self._wake.start(self._write)

    def on_event(self, event) -> None:
        """(In the monitor thread.)"""
        if isinstance(event, gevent.events.EventLoopBlocked) and event.hub is self._hub:
            self._noted.append((time.perf_counter(), event.blocking_time, event.info))
            self._wake.send()

    def _write(self) -> None:
        """(On the hub, once it runs again.) The reports of one block are one line."""
        if not self._noted:
            return
        first_at, threshold, info = self._noted[0]
        reports = len(self._noted)
        for _ in range(reports):
            self._noted.popleft()
        # At least the threshold before the first report, and until now.
        held = time.perf_counter() - first_at + threshold
        self._log(f"warning: the hub was blocked for {held:.3f}s (over {threshold}s; {reports} report"
                  f"{'s' if reports != 1 else ''}) at: {where(info)}")


def where(info: list[str]) -> str:
    """The blocked greenlet and the innermost frames of its stack, from gevent's report."""
    greenlet = next((line.split(" : Greenlet ", 1)[1].rsplit(" appears", 1)[0] for line in info
                     if " : Greenlet " in line), "?")
    marker = next((n for n, line in enumerate(info) if line.startswith("Blocked Stack")), None)
    frames = []
    if marker is not None and marker + 1 < len(info):
        lines = [line.strip() for line in info[marker + 1].splitlines() if line.strip()]
        frames = lines[-2 * STACK_FRAMES:]
    return f"{greenlet[:200]}: " + " | ".join(frames)


def install() -> HubBlockReports | None:
    """With the monitor on, reports go to the daemon's log as one line each (gevent's own
    multi-page printout is turned off)."""
    if not gevent.config.monitor_thread:
        return None
    from zope.event import subscribers
    gevent.config.print_blocking_reports = False
    reports = HubBlockReports(gevent.get_hub())
    _look_cheaply(reports._hub)
    subscribers.append(reports.on_event)
    return reports


def report(thread_ident: int, active, frame) -> list[str]:
    """A blocked hub's report in the shape of gevent's own (``where`` reads it): the greenlet,
    and the innermost frames of the blocked thread's stack."""
    stack = "".join(traceback.format_stack(frame, limit=2 * STACK_FRAMES)) if frame is not None else ""
    return [f"{thread_ident} : Greenlet {active!r} appears to be blocked",
            f"Blocked Stack (for thread id {thread_ident}):", stack]


def _look_cheaply(main_hub) -> None:
    from gevent import _monitor
    from zope.event import notify

    def monitor_blocking(self, hub):
        """(In the monitor thread.) As gevent's, but for the main hub only and without the tree."""
        if hub is not main_hub:
            return None
        blocked = self._greenlet_tracer.did_block_hub(hub)
        if not blocked:
            return None
        info = report(hub.thread_ident, blocked[1], sys._current_frames().get(hub.thread_ident))
        notify(gevent.events.EventLoopBlocked(blocked[1], gevent.config.max_blocking_time, info, hub=hub))
        return True

    _monitor.PeriodicMonitoringThread.monitor_blocking = monitor_blocking

"""The AgentScanner actor: one shared scan of every agent on the machine, and activity streams.

- ``agents(directory)`` answers from the last scan while it is younger than five seconds, else
  scans first. The actor handles one message at a time, so requests that arrive during a scan
  wait for it and share it (one scan, however many pages ask).
- ``watch(directory, sink, opened_ms)`` opens an activity stream: a fresh scan says which agents
  run now (followed from their transcripts' ends as of the stream's opening); while any stream
  is open a ticker greenlet tells the actor to ``poll``: read what the followed transcripts gained, and every
  ``RESCAN_SECONDS`` scan again for agents that came, went or switched sessions. Each event
  goes to the sink as one encoded JSON message (``sink.push(bytes)``, which never blocks).
- ``unwatch`` (a tell) stops a stream's watching.

Nothing here blocks the hub: /proc passes and long loops yield, transcripts are read from
offsets and windows, long lines are parsed on the hub's threadpool.
"""
from __future__ import annotations

import time
import traceback

import gevent
import pykka

from actors.agents import rows as agent_rows
from actors.agents.events import encode
from actors.agents.scan import Scanner, ScanResult
from actors.chatlog import daemon_log
from actors.guard import guarded, spawn_logged

SHARE_SECONDS = 5.0
TICK_SECONDS = 0.5
RESCAN_SECONDS = 1.5
WATCH_FRESH_SECONDS = 0.5
SLOW_SCAN_SECONDS = 1.0


class AgentScanner(pykka.ThreadingActor):
    def __init__(self, scanner: Scanner | None = None, clock=time.monotonic, share_seconds: float = SHARE_SECONDS,
                 tick_seconds: float = TICK_SECONDS, rescan_seconds: float = RESCAN_SECONDS):
        super().__init__()
        self._scanner = scanner or Scanner()
        self._clock = clock
        self._share = share_seconds
        self._tick = tick_seconds
        self._rescan = rescan_seconds
        self._last: ScanResult | None = None
        self._last_at = 0.0
        self._scans = 0
        self._watches: dict = {}  # watch id -> actors.agents.activity.Watch
        self._next_watch = 0
        self._ticker: gevent.Greenlet | None = None
        self._poll_queued = False

    def ping(self) -> bool:
        return True

    # ---- the agents list ------------------------------------------------------------------

    def _scan(self, max_age: float) -> ScanResult:
        if self._last is None or self._clock() - self._last_at >= max_age:
            try:
                result = self._scanner.scan()
            except Exception as exc:  # noqa: BLE001 - a bug: said in the answer and the log, never fatal
                daemon_log(f"bug: agents: the scan failed:\n{traceback.format_exc()}")
                result = ScanResult([], {"every harness": f"the scan failed ({type(exc).__name__})"})
            self._scans += 1
            if result.seconds > SLOW_SCAN_SECONDS:
                daemon_log(f"agents: a scan took {result.seconds:.2f}s ({len(result.agents)} agents)")
            self._last, self._last_at = result, self._clock()
        return self._last

    def agents(self, directory: str) -> dict:
        """``{"rows": [(row, devhost session id or None)], "error": str | None}`` for the agents
        in ``directory`` or below, from a scan at most five seconds old."""
        result = self._scan(self._share)
        return {"rows": agent_rows.rows_for(result.agents, directory), "error": result.error_text()}

    def scans(self) -> int:
        """How many scans ran (tests: requests within five seconds share one)."""
        return self._scans

    # ---- activity streams -----------------------------------------------------------------

    def watch(self, directory: str, sink, opened_ms: int | None = None) -> int:
        """``opened_ms``: when the stream opened (the agents running then are followed from
        their transcripts' ends as of that moment, however long this scan takes)."""
        result = self._scan(WATCH_FRESH_SECONDS)
        self._next_watch += 1
        from actors.agents.activity import Watch  # at the first stream: the transcripts' parsers
        watch = Watch(directory, sink, opened_ms)
        watch.start(result.agents, result.errors)
        self._watches[self._next_watch] = watch
        if self._ticker is None or self._ticker.dead:
            self._ticker = spawn_logged(self._ticking)
        return self._next_watch

    @guarded
    def unwatch(self, watch_id: int) -> None:
        watch = self._watches.pop(watch_id, None)
        if watch is not None:
            watch.close()

    def watching(self) -> int:
        return len(self._watches)

    def _ticking(self) -> None:
        proxy = self.actor_ref.proxy()
        while True:
            gevent.sleep(self._tick)
            if not self._watches:
                self._ticker = None
                return
            if not self._poll_queued:
                self._poll_queued = True
                try:
                    proxy.poll()  # a tell in effect: the future is never waited on
                except pykka.ActorDeadError:
                    return

    @guarded
    def poll(self) -> None:
        try:
            for watch_id, watch in list(self._watches.items()):
                if watch.sink.closed:
                    self.unwatch(watch_id)
            if not self._watches:
                return
            fresh = None
            if self._clock() - self._last_at >= self._rescan:
                fresh = self._scan(self._rescan)
            for watch in list(self._watches.values()):
                messages = watch.update(fresh.agents, fresh.errors) if fresh is not None else []
                messages += watch.read()
                for message in messages:
                    watch.sink.push(encode(message))
        finally:
            self._poll_queued = False

    def on_stop(self) -> None:
        if self._ticker is not None:
            self._ticker.kill(block=False)
        for watch in self._watches.values():
            watch.close()
            try:
                watch.sink.close(1001, "devhostd is stopping")
            except Exception:  # noqa: BLE001 - a sink of a socket already gone
                pass
        self._watches.clear()

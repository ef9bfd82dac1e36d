"""Kept-alive HTTP/1.1 connections to the proxy's upstreams, reused across requests.

A dev page of hundreds of ES modules is hundreds of requests; opening an upstream connection
for each costs a handshake per module (and leaves as many sockets in TIME_WAIT). The pool
keeps a few idle connections per upstream for a short while. A connection goes back only
once its answer was read to its end and the upstream did not say it would close it.

An idle connection the upstream has closed (its keep-alive timeout: 5 s for Node's servers,
Vite's included) is found before it is used: an idle connection with anything to read (its
end, or bytes nobody asked for) is never reused. What is left is the race of an upstream
closing as a request goes out; the proxy retries that once on a fresh connection, for
idempotent requests without a body only (web/proxy/relay.py).
"""
from __future__ import annotations

import time
from collections import defaultdict

import gevent
from gevent.monkey import get_original

# The system's select, not gevent's: with a timeout of 0 it never blocks, and gevent's starts
# and stops a watcher on the hub for each look (a few percent of a small proxied answer).
_select_now = get_original("select", "select")

MAX_IDLE_PER_UPSTREAM = 8  # a browser opens at most 6 connections per host, plus a tab or two
IDLE_SECONDS = 4.0  # under Node's 5 s keep-alive timeout, so the upstream rarely closes first


class UpstreamPool:
    def __init__(self, max_idle: int = MAX_IDLE_PER_UPSTREAM, idle_seconds: float = IDLE_SECONDS):
        self._max_idle = max_idle
        self._idle_seconds = idle_seconds
        self._idle: dict = defaultdict(list)  # upstream -> [(connection, idle since)], newest last
        self._reaper = None

    def acquire(self, upstream, connect_timeout: float):
        """(connection, reused): an idle connection that is still usable, else a new one
        (not connected yet: the relay connects it when the request goes out)."""
        idle = self._idle.get(upstream)
        now = time.monotonic()
        while idle:
            connection, since = idle.pop()
            if now - since < self._idle_seconds and _still_usable(connection):
                return connection, True
            connection.close()
        return upstream.client(connect_timeout), False

    def release(self, upstream, connection) -> None:
        """Keeps a connection whose last answer was read whole, for the next request."""
        if connection.sock is None:
            return  # closed already (the answer ended with the connection)
        idle = self._idle[upstream]
        idle.append((connection, time.monotonic()))
        while len(idle) > self._max_idle:
            idle.pop(0)[0].close()
        if self._reaper is None:
            self._reaper = gevent.spawn(self._reap)

    def idle_count(self, upstream) -> int:
        return len(self._idle.get(upstream, ()))

    def close(self) -> None:
        for idle in self._idle.values():
            for connection, _ in idle:
                connection.close()
        self._idle.clear()

    def _reap(self) -> None:
        """Closes connections idle past IDLE_SECONDS, so none lingers half-closed; ends once
        nothing is idle (release starts it again)."""
        try:
            while any(self._idle.values()):
                gevent.sleep(self._idle_seconds / 2)
                now = time.monotonic()
                for upstream, idle in list(self._idle.items()):
                    keep = [(c, since) for c, since in idle if now - since < self._idle_seconds]
                    for connection, since in idle:
                        if now - since >= self._idle_seconds:
                            connection.close()
                    if keep:
                        self._idle[upstream] = keep
                    else:
                        del self._idle[upstream]
        finally:
            self._reaper = None


def _still_usable(connection) -> bool:
    """An idle connection has nothing to read; if it has, that is its end (or garbage)."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        readable, _, _ = _select_now([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable

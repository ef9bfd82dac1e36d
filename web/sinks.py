"""What a socket's writer reads from, and how it writes: shared by every WebSocket of the daemon.

An actor pushes frames into a sink without ever blocking; one writer greenlet per socket owns
every write. A client more than SINK_LIMIT_BYTES behind is disconnected (1013): it reconnects
and reads a snapshot, so nothing is lost.
"""
from __future__ import annotations

import socket

import gevent.queue

from actors.chatlog import daemon_log

SINK_LIMIT_BYTES = 32 * 1024 * 1024  # queued for one socket before its client counts as too slow
_CLOSE = object()


class SocketSink:
    """What the Chat actor holds for a socket: push and close never block the actor."""

    def __init__(self, limit_bytes: int = SINK_LIMIT_BYTES, abort=None):
        self.queue = gevent.queue.Queue()
        self._limit = limit_bytes
        self._queued = 0
        self._abort = abort  # cuts the connection when the client stopped reading altogether
        self.closed = False

    def push(self, frame: bytes) -> None:
        if self.closed:
            return
        if self._queued + len(frame) > self._limit:
            # Too slow to keep up: drop what waits and disconnect; the page reconnects to a
            # snapshot, which has everything. A writer stuck in a send is woken by the abort.
            self.closed = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait((_CLOSE, 1013, "client too slow; reconnect for a snapshot"))
            if self._abort is not None:
                self._abort()
            return
        self._queued += len(frame)
        self.queue.put_nowait(frame)

    def taken(self, frame: bytes) -> None:
        self._queued -= len(frame)

    def close(self, code: int, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait((_CLOSE, code, reason))


def write_live(ws, sink) -> None:
    """Writes what the sink receives until it closes; the only writer of its socket."""
    try:
        while True:
            item = sink.queue.get()
            if isinstance(item, tuple) and item and item[0] is _CLOSE:
                ws.close(item[1], item[2])
                return
            sink.taken(item)
            ws.send_text(item)
    except Exception as exc:  # noqa: BLE001 - a dead peer (OSError, geventwebsocket's errors) or a bug
        if not ws.closed:
            daemon_log(f"socket writer stopped: {exc!r}")
            abort(ws)
    finally:
        sink.closed = True


def abort(ws) -> None:
    """Cuts the TCP connection under a socket whose peer stopped reading; both greenlets wake."""
    try:
        ws.handler.socket.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError):
        pass

"""What a socket's writer reads from, and how it writes: shared by every WebSocket of the daemon.

An actor pushes frames (or typed messages, which the sink's ``encode`` turns into frames: the
wire format lives in web/, never in actors/) into a sink without ever blocking; one writer greenlet per socket owns
every write. The writer takes whatever is queued when it wakes (up to BATCH_FRAMES frames or
BATCH_BYTES bytes) and sends it with one write: a busy stream costs one system call and one
hub switch per batch, not per frame, and a quiet one still goes out at once (nothing waits
for a batch to fill). A client more than SINK_LIMIT_BYTES behind is disconnected (1013): it
reconnects and reads a snapshot, so nothing is lost.

The bound stretches for large messages: a socket may also fall REPLY_COPIES times the largest
message it got since it last caught up behind. Claude Code writes a reply's whole text up to
three times back to back (one streamed delta, the assistant message, the result), so a reply
near or over the bound would otherwise cut every socket that reads it, however fast; a page that
stopped reading is still cut, at most REPLY_COPIES lines of the CLI's (each bounded by
actors/cli_process.py) later. The frames are one bytes object for every socket of a chat
(``encoded_once``), so the stretch costs no memory per socket.
"""
from __future__ import annotations

import socket
from collections import deque

import gevent
import gevent.event

from actors.chatlog import daemon_log

SINK_LIMIT_BYTES = 32 * 1024 * 1024  # queued for one socket before its client counts as too slow
BATCH_FRAMES = 256  # at most this many frames, or
BATCH_BYTES = 256 * 1024  # about this many bytes, go out in one write
TOO_SLOW = (1013, "client too slow; reconnect for a snapshot")
REPLY_COPIES = 3  # a reply's text, back to back: its delta, its assistant message, its result
TOO_SLOW_GRACE = 2.0  # seconds a too-slow socket has to take its close frame before it is cut


def encoded_once(encode_one):
    """An encoder that encodes a message once for all the sockets it goes to: a chat tells
    every socket of a conversation the same message object in a row."""
    last: list = [None, None]  # (message, frames)

    def encode(message) -> list[bytes]:
        if last[0] is message:
            return last[1]
        frames = encode_one(message)
        last[:] = [message, frames]
        return frames

    return encode


class SocketSink:
    """What an actor holds for a socket: push and close never block the actor."""

    def __init__(self, limit_bytes: int = SINK_LIMIT_BYTES, abort=None, encode=None):
        self._encode = encode  # typed message -> frames (bytes), for the runtime's messages
        self._frames: deque[bytes] = deque()
        self._wake = gevent.event.Event()
        self._limit = limit_bytes
        self._queued = 0
        self._largest = 0  # the largest frame pushed since the queue was last empty
        self._abort = abort  # cuts the connection when the client stopped reading altogether
        self._close: tuple[int, str] | None = None
        self.closed = False

    @property
    def queued_bytes(self) -> int:
        return self._queued

    def push(self, message) -> None:
        """Queues a frame (bytes), or the frames of a typed message, which are encoded here."""
        if isinstance(message, (bytes, bytearray)):
            self.push_many((message,))
        elif not self.closed:
            self.push_many(self._encode(message))

    def push_many(self, frames) -> None:
        """Queues frames in order; all of them, or (too slow) none and a 1013 close."""
        if self.closed:
            return
        size = largest = 0
        for frame in frames:
            size += len(frame)
            largest = max(largest, len(frame))
        self._largest = max(self._largest, largest)
        if self._queued and self._queued + size > max(self._limit, REPLY_COPIES * self._largest):
            # Too slow to keep up: drop what waits and close with 1013; the page reconnects to
            # a snapshot, which has everything. The close frame goes out if the page still
            # reads; a writer stuck in a send (a page that stopped reading) is cut after a grace.
            # (A single message larger than the bound, on an empty queue, is still sent whole,
            # and the copies of a large reply fit: see REPLY_COPIES.)
            behind = self._queued + size
            self._frames.clear()
            self._queued = 0
            self.closed = True
            self._close = TOO_SLOW
            self._wake.set()
            daemon_log(f"a socket fell {behind >> 20} MiB behind: closing it with 1013 (it reconnects to a snapshot)")
            if self._abort is not None:
                gevent.spawn_later(TOO_SLOW_GRACE, self._abort)
            return
        self._frames.extend(frames)
        self._queued += size
        self._wake.set()

    def close(self, code: int, reason: str = "") -> None:
        """Queues a close after what is already queued."""
        if not self.closed:
            self.closed = True
            self._close = (code, reason)
            self._wake.set()

    def take(self, max_frames: int = BATCH_FRAMES, max_bytes: int = BATCH_BYTES):
        """Waits for something to write: (frames, None), or ([], (code, reason)) once every
        frame queued before a close is taken. A frame larger than max_bytes comes alone."""
        while not self._frames and self._close is None:
            self._wake.clear()
            self._wake.wait()
        batch = []
        size = 0
        frames = self._frames
        while frames and len(batch) < max_frames and (not batch or size + len(frames[0]) <= max_bytes):
            frame = frames.popleft()
            batch.append(frame)
            size += len(frame)
        self._queued -= size
        if not frames:
            self._largest = 0  # caught up: the bound is the plain one again
        if batch:
            return batch, None
        return batch, self._close


_writers: dict = {}  # writer greenlet -> its sink, while it writes


def write_live(ws, sink) -> None:
    """Writes what the sink receives until it closes; the only writer of its socket."""
    _writers[gevent.getcurrent()] = sink
    try:
        while True:
            frames, close = sink.take()
            if close is not None:
                ws.close(*close)
                return
            ws.send_texts(frames)
    except Exception as exc:  # noqa: BLE001 - a dead peer (OSError, geventwebsocket's errors) or a bug
        if not ws.closed:
            daemon_log(f"socket writer stopped: {exc!r}")
            abort(ws)
    finally:
        sink.closed = True
        _writers.pop(gevent.getcurrent(), None)


def wait_for_closing_writers(timeout: float) -> None:
    """Waits (at most ``timeout`` s) until every writer with a close queued has written it:
    at shutdown, the 1001 close frames reach their pages before the process ends."""
    closing = [writer for writer, sink in list(_writers.items()) if sink.closed]
    gevent.joinall(closing, timeout=timeout)


def abort(ws) -> None:
    """Cuts the TCP connection under a socket whose peer stopped reading; both greenlets wake."""
    try:
        ws.handler.socket.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError):
        pass

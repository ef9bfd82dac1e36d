"""How every WebSocket of devhostd's own is served, once the upgrade passed its checks
(``DevhostApp.websocket_precheck``: Host, Origin, handshake, the route's own check).

One shape for each: a sink (web/sinks.py) the actors push into, attached to whatever feeds it;
one writer greenlet that owns every write; this greenlet reads the client's frames until it
closes, sends a frame over the limit (closed with 1009), or the sink closes; then the sink is
detached from what fed it, closed with 1000, and the writer is waited for.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import gevent

from actors.chatlog import daemon_log
from actors.guard import spawn_logged
from web.sinks import SocketSink, abort, write_live
from web.websocket import MessageTooBig

WRITER_GRACE = 5.0  # seconds the writer has to send what is queued and the close frame


def frame(value) -> bytes:
    """One JSON frame, as compact as JSON goes."""
    return json.dumps(value, separators=(",", ":")).encode()


LONG_LIST = 64  # elements past which a frame's list is encoded a piece at a time
PIECE_BYTES = 256 * 1024  # encoded between two chances for other greenlets to run
LIST_HERE = "\u2063devhost-list\u2063"  # stands where the list goes; never a whole value of a chat's own


def frame_with_list(outer: dict, elements: list) -> bytes:
    """``frame(outer)`` with ``elements`` where ``outer`` holds LIST_HERE, encoded an element at a
    time and other greenlets let run every PIECE_BYTES: one json.dumps of a 20 MB chat holds the
    hub for over 100 ms, and a C call cannot be moved off the hub by a thread (it keeps the GIL
    throughout)."""
    head, tail = frame(outer).split(frame(LIST_HERE), 1)
    pieces, size = [head, b"["], 0
    for n, element in enumerate(elements):
        piece = frame(element)
        pieces.append(b"," + piece if n else piece)
        size += len(piece)
        if size >= PIECE_BYTES:
            size = 0
            gevent.sleep(0)
    pieces += [b"]", tail]
    return b"".join(pieces)



class NotAttached(Exception):
    """``attach`` could not attach: the client is told ``message`` and the socket closes with 1011."""

    def __init__(self, message: str | None):
        super().__init__(message or "")
        self.message = message


@dataclass
class SocketRoute:
    """What one kind of socket does; ``serve(ws)`` runs it.

    - ``attach(sink)``: what the socket holds (a subscriber, a client); raise NotAttached;
    - ``receive(message, sink, held)``: one frame the client sent;
    - ``detach(held)``: when it ends, however it ends;
    - ``write(ws, sink, held)``: the writer (default: what the sink gets, as it comes);
    - ``too_big``: the frame sent before the 1009 close (None: none);
    - ``name``: for the log line of a socket whose reading failed.
    """
    name: str
    attach: Callable
    receive: Callable | None = None
    detach: Callable | None = None
    write: Callable | None = None
    encode: Callable | None = None
    too_big: bytes | None = None

    def serve(self, ws) -> None:
        sink = SocketSink(abort=lambda: abort(ws), encode=self.encode)
        try:
            held = self.attach(sink)
        except NotAttached as exc:
            sink.close(1011)  # anything that pushed meanwhile is dropped with it
            if exc.message:
                ws.send_text(frame({"type": "error", "message": exc.message}))
            ws.close(1011)
            return
        writer = spawn_logged(self.write or (lambda ws, sink, held: write_live(ws, sink)), ws, sink, held)
        try:
            self._read(ws, sink, held)
        finally:
            if self.detach is not None:
                self.detach(held)
            sink.close(1000)
            writer.join(timeout=WRITER_GRACE)
            if not writer.dead:
                writer.kill(block=False)

    def _read(self, ws, sink, held) -> None:
        try:
            while not sink.closed:
                try:
                    message = ws.receive()
                except MessageTooBig:
                    if self.too_big is not None:
                        sink.push(self.too_big)
                    sink.close(1009, "message too big")
                    return
                if message is None:
                    return
                if self.receive is not None:
                    self.receive(message, sink, held)
        except Exception as exc:  # noqa: BLE001 - a client's frame that fails ends its socket, nothing else
            daemon_log(f"{self.name} socket ended: {exc!r}")

"""Holding a page's hot reloads while the agent works on its files.

A dev server tells the page what changed over the app's own WebSocket (Vite's HMR channel),
which devhostd tunnels (web/proxy/tunnel.py). While a person holds reloads for a routed hostname, what
the dev server sends on those sockets is kept here, frame by frame, and sent on in order when
the hold ends or the person applies it: the page never updates or reloads under them mid-turn.

The hold is bounded: past HOLD_BYTES held, or HOLD_SECONDS since it began holding, it ends by
itself and releases everything (``ended`` says why, for the panel's notice). Nothing is ever
dropped. Control frames (ping, pong) are never held: the connection must stay alive; nor is a
dev server's handshake or keepalive message (web/hmr_messages.py), which changes nothing on the
page and is never counted as an update.

Plain objects on the hub: every call comes from a greenlet of the daemon, so the only lock is the
one that keeps a tunnel's writes in order (the pump and a release may both write to its page).
The frames are cut by their headers only; their bytes pass exactly as the dev server sent them.
"""
from __future__ import annotations

import gevent
import gevent.lock

from web.hmr_messages import is_update

HOLD_BYTES = 8 * 1024 * 1024
HOLD_SECONDS = 600.0
BIG_FRAME = 1024 * 1024  # a frame this long streams through as it comes, never held whole


class FrameSplitter:
    """Cuts a WebSocket byte stream into frames: ``feed`` gives ``(bytes, opcode, fin, whole)``
    pieces. A frame up to BIG_FRAME comes as one whole piece; a longer one in pieces as its bytes
    arrive (the first carries its opcode; ``whole`` is False), so nothing waits for it to end."""

    def __init__(self):
        self._buffer = bytearray()
        self._streaming = 0  # bytes of a big frame still to stream through

    def feed(self, data: bytes) -> list[tuple[bytes, int, bool, bool]]:
        pieces = []
        self._buffer += data
        while self._buffer:
            if self._streaming:
                piece = bytes(self._buffer[:self._streaming])
                del self._buffer[:len(piece)]
                self._streaming -= len(piece)
                pieces.append((piece, -1, False, False))
                continue
            header = _header(self._buffer)
            if header is None:
                break
            head_length, payload_length, opcode, fin = header
            total = head_length + payload_length
            if payload_length > BIG_FRAME:
                self._streaming = total
                continue
            if len(self._buffer) < total:
                break
            pieces.append((bytes(self._buffer[:total]), opcode, fin, True))
            del self._buffer[:total]
        # The start of a big frame: the next loop streams it (its first piece names its opcode).
        return pieces


def _header(buffer: bytearray):
    """(header length, payload length, opcode, fin) of the frame at the start, or None yet."""
    if len(buffer) < 2:
        return None
    fin, opcode = bool(buffer[0] & 0x80), buffer[0] & 0x0F
    masked, length = bool(buffer[1] & 0x80), buffer[1] & 0x7F
    head = 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length, head = int.from_bytes(buffer[2:4], "big"), 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length, head = int.from_bytes(buffer[2:10], "big"), 10
    return head + (4 if masked else 0), length, opcode, fin


class Tunnel:
    """One tunnelled app socket: the page's side, what is held for it, and the lock that keeps
    what is written to it in order (the pump and a release may both write)."""

    def __init__(self, client):
        self.client = client
        self.lock = gevent.lock.Semaphore()
        self.held: list[bytes] = []
        self.updates = 0  # whole messages among what is held
        self.streaming = False  # in the middle of a big frame: it passes as it comes

    def flush(self) -> None:
        """Sends what is held, in order; the caller holds the lock."""
        frames, self.held, self.updates = self.held, [], 0
        if frames:
            self.client.sendall(b"".join(frames))


class _Host:
    def __init__(self):
        self.tunnels: set[Tunnel] = set()
        self.held = False
        self.ended = None  # why the hold last ended by itself: "size", "time"
        self.timer = None


class ReloadHolds:
    def __init__(self, max_bytes: int = HOLD_BYTES, max_seconds: float = HOLD_SECONDS):
        self._hosts: dict[str, _Host] = {}
        self._max_bytes = max_bytes
        self._max_seconds = max_seconds

    def _host(self, hostname: str) -> _Host:
        return self._hosts.setdefault(hostname.lower(), _Host())

    # ---- tunnels ---------------------------------------------------------------------------

    def open(self, hostname: str, client) -> Tunnel:
        tunnel = Tunnel(client)
        self._host(hostname).tunnels.add(tunnel)
        return tunnel

    def close(self, hostname: str, tunnel: Tunnel) -> None:
        self._host(hostname).tunnels.discard(tunnel)
        tunnel.held.clear()  # the page is gone: there is nobody to send it to

    def relay(self, hostname: str, tunnel: Tunnel, pieces) -> None:
        """Sends the dev server's pieces on to the page, or holds them; OSError when the page's
        side is gone. A tunnel always sends what it holds before anything newer."""
        host = self._host(hostname)
        with tunnel.lock:
            for data, opcode, fin, whole in pieces:
                if not whole:
                    if not tunnel.streaming and host.held:
                        self._end(host, "size")  # too big to hold: the hold ends
                    tunnel.streaming = True
                elif host.held and opcode in (0, 1, 2, 8) and (tunnel.held or is_update(data, opcode, fin)):
                    # Data and close wait, in order; ping/pong pass, and so does a handshake or a
                    # keepalive message with nothing held before it (web/hmr_messages.py).
                    tunnel.streaming = False
                    tunnel.held.append(data)
                    tunnel.updates += 1 if fin and opcode != 8 and is_update(data, opcode, fin) else 0
                    if self._held_bytes(host) > self._max_bytes:
                        self._end(host, "size")
                    continue
                else:
                    tunnel.streaming = False
                if tunnel.held and not host.held:
                    tunnel.flush()
                tunnel.client.sendall(data)

    # ---- the person's switch ---------------------------------------------------------------

    def state(self, hostname: str) -> dict:
        host = self._host(hostname)
        return {"held": host.held, "updates": sum(t.updates for t in host.tunnels),
                "bytes": self._held_bytes(host), "ended": host.ended}

    def hold(self, hostname: str, on: bool) -> dict:
        host = self._host(hostname)
        if on and not host.held:
            host.held, host.ended = True, None
            host.timer = gevent.spawn_later(self._max_seconds, self._expire, host)
        elif not on and host.held:
            host.held = False
            self._release(host)
        return self.state(hostname)

    def apply(self, hostname: str) -> dict:
        """Sends what is held and goes on holding."""
        self._release(self._host(hostname))
        return self.state(hostname)

    @staticmethod
    def _held_bytes(host: _Host) -> int:
        return sum(len(frame) for t in host.tunnels for frame in t.held)

    def _expire(self, host: _Host) -> None:
        host.timer = None
        if host.held:
            self._end(host, "time")

    def _end(self, host: _Host, why: str) -> None:
        """The hold ends by itself: each tunnel sends what it held, from its own greenlet (a
        pump may call this holding its own tunnel's lock; it flushes its own before going on)."""
        host.held, host.ended = False, why
        if host.timer is not None:
            host.timer.kill(block=False)
            host.timer = None
        for tunnel in list(host.tunnels):
            gevent.spawn(self._flush, tunnel)

    def _release(self, host: _Host) -> None:
        if not host.held and host.timer is not None:
            host.timer.kill(block=False)
            host.timer = None
        for tunnel in list(host.tunnels):
            self._flush(tunnel)

    @staticmethod
    def _flush(tunnel: Tunnel) -> None:
        try:
            with tunnel.lock:
                tunnel.flush()
        except OSError:
            pass  # that page went away; its tunnel closes on its own

"""Who gets a connection: only the daemon's own user, and nobody can hold the door shut.

- **Same user only.** Every connection is looked up by its peer socket (web/peer_owner.py) and
  closed at once unless that socket belongs to the user devhostd runs as. Where the owner
  cannot be told at all (no Linux), every local account gets in, as the README says.
- **Fair waiting.** A connection that has not sent its request's headers yet (a slow client, an
  idle kept-alive one) waits in a pool of at most ``WAITING_LIMIT``. Every local client is
  127.0.0.1, so a cap per address would be one cap for everybody, which one process renewing
  slow connections fills. Instead a newcomer over the limit pushes out the connection that
  has waited longest: a client that sends its headers at once (a browser, a program) is never
  the oldest for long, so it is served however many slow ones another process keeps opening.
"""
from __future__ import annotations

import os
import socket
import time
from collections import OrderedDict

from actors.chatlog import daemon_log
from web import peer_owner

WAITING_LIMIT = 256


class WaitingPool:
    """Connections waiting to send a request's headers, oldest first. Each is an object with a
    ``push_out()`` that lets its connection go."""

    def __init__(self, limit: int = WAITING_LIMIT):
        self.limit = limit
        self._waiting: OrderedDict[int, object] = OrderedDict()
        self.pushed_out = 0

    def __len__(self) -> int:
        return len(self._waiting)

    def enter(self, connection) -> None:
        while len(self._waiting) >= self.limit:
            _, oldest = self._waiting.popitem(last=False)
            self.pushed_out += 1
            oldest.push_out()
        self._waiting[id(connection)] = connection

    def leave(self, connection) -> None:
        self._waiting.pop(id(connection), None)


def shut(sock: socket.socket) -> None:
    """Ends a connection another greenlet reads: its read wakes to an end of stream."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # gone already


class SameUser:
    """Tells whether a connection's peer is the daemon's own user; refusals are logged at most
    once every RATE seconds (another account cannot flood the log)."""

    RATE = 10.0

    def __init__(self, uid: int | None = None):
        self.uid = os.geteuid() if uid is None else uid
        self.enforced = peer_owner.SUPPORTED
        self._last_note = -self.RATE
        self.refused = 0

    def admits(self, sock) -> bool:
        if not self.enforced:
            return True
        try:
            owner = peer_owner.owner_of(sock)
        except peer_owner.NetlinkRefused:
            owner = peer_owner.owner_from_proc(sock)  # a locked-down sandbox
        if owner == self.uid:
            return True
        self.refused += 1
        now = time.monotonic()
        if now - self._last_note >= self.RATE:
            self._last_note = now
            who = "an owner devhostd could not find" if owner is None else f"uid {owner}"
            daemon_log(f"refused a connection from {who}: devhostd serves only its own user (uid {self.uid}); "
                       f"{self.refused} refused so far")
        return False

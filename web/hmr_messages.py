"""Which of a dev server's hot-reload messages are not updates (web/reload_hold.py).

Holding reloads keeps what would change the page. A dev server also sends messages that change
nothing: the handshake a page's hot-reload client waits for after it connects (Vite's
``{"type":"connected"}``: until it comes, Vite's client stays "connecting…" and a page loaded
while reloads are held would never be told the dev server is there) and its keepalives
(``{"type":"ping"}``). Those pass even while reloads are held, and are never counted as updates
waiting. Anything else — an update, a full reload, a prune, an error, a custom event, a message
this module cannot read — is an update: holding too much is safe, letting one through is not.

Only a whole, small text frame is read (its payload unmasked when masked); its bytes are never
changed.
"""
from __future__ import annotations

import json

# The message types of Vite's HMR protocol (measured on vite 8.4.0, tests/peers.sh) that carry
# no change for the page.
NOT_UPDATES = frozenset({"connected", "ping"})
_SMALL = 256  # bytes of payload: a handshake or a ping is a few bytes; an update is read no further


def is_update(frame: bytes, opcode: int, fin: bool) -> bool:
    """Whether a whole frame of the dev server's would change the page (a data frame, not a
    handshake or keepalive message). Control frames are the caller's: they are never held."""
    if opcode != 1 or not fin:
        return True
    payload = _payload(frame)
    if payload is None:
        return True
    try:
        message = json.loads(payload)
    except ValueError:
        return True
    return not (isinstance(message, dict) and message.get("type") in NOT_UPDATES)


def _payload(frame: bytes) -> bytes | None:
    if len(frame) < 2:
        return None
    masked, length = bool(frame[1] & 0x80), frame[1] & 0x7F
    head = 2
    if length == 126:
        length, head = int.from_bytes(frame[2:4], "big"), 4
    elif length == 127:
        return None  # far past _SMALL
    if length > _SMALL:
        return None
    if masked:
        key, body = frame[head:head + 4], frame[head + 4:head + 4 + length]
        return bytes(b ^ key[i % 4] for i, b in enumerate(body))
    return frame[head:head + length]

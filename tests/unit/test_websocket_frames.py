"""web.websocket: a client frame's payload unmasked exactly as RFC 6455 §5.3 says, fast enough
that a 16 MiB frame never holds the hub (geventwebsocket's own loop held it for seconds)."""
from __future__ import annotations

import os

from web.websocket import UNMASK_PIECE, unmask


def byte_by_byte(payload: bytes, mask: bytes) -> bytes:
    return bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def test_unmasking_is_the_rfcs_xor_for_every_length_and_piece_boundary():
    for length in (0, 1, 3, 4, 5, 1001, UNMASK_PIECE - 1, UNMASK_PIECE, UNMASK_PIECE + 7):
        payload, mask = os.urandom(length), os.urandom(4)
        assert unmask(payload, mask) == byte_by_byte(payload, mask), length


def test_unmasking_twice_gives_the_payload_back():
    payload, mask = os.urandom(3 * UNMASK_PIECE + 5), os.urandom(4)
    assert unmask(unmask(payload, mask), mask) == payload

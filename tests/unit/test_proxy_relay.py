"""The relay's streamed answer (web/proxy/relay.py): a compressed body is decoded in bounded pieces."""
from __future__ import annotations

import gzip
import zlib

from web.proxy.relay import _ResponseBody
from web.proxy.upstream import CHUNK


class _Bomb:
    """An upstream response whose small gzip body inflates to 64 MiB."""

    def __init__(self):
        self._data = gzip.compress(b"\0" * (64 << 20))
        self.length = None

    def read1(self, n):
        data, self._data = self._data[:n], self._data[n:]
        return data

    def close(self):
        pass


def test_decompression_goes_in_bounded_pieces():
    body = _ResponseBody(None, _Bomb(), False, zlib.decompressobj(16 + zlib.MAX_WBITS))
    sizes = [len(piece) for piece in body]
    assert sum(sizes) == 64 << 20 and max(sizes) <= CHUNK

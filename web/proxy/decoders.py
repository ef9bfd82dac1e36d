"""Undoing the content encodings browsers ask for, so a page can be given the panel without
asking the dev server for it uncompressed: gzip and deflate (zlib), br (Google's ``brotli``) and
zstd (``backports.zstd``, Python 3.14's ``compression.zstd`` for older Pythons), both pinned
kept libraries.

Every decoder has zlib's streaming shape, which the proxy's loop relies on:
``decompress(data, max_length)`` gives at most about ``max_length`` bytes and keeps what it did
not get to in ``unconsumed_tail``; ``eof`` says whether the stream ended where it should. A small
body that expands to gigabytes is therefore decoded in bounded pieces, with other greenlets
running between them.
"""
from __future__ import annotations

import zlib

import brotli

try:
    from compression import zstd  # Python 3.14+
except ImportError:
    from backports import zstd

DECODABLE = ("gzip", "x-gzip", "deflate", "br", "zstd", "identity")
ERRORS = (zlib.error, brotli.error, zstd.ZstdError)  # a broken compressed body


class Deflate:
    """HTTP "deflate" is meant to be zlib-wrapped, but some servers send raw deflate."""

    def __init__(self):
        self._inner = None

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        if self._inner is None:
            if not data:
                return b""
            wrapped = len(data) >= 2 and (data[0] & 0x0F) == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            self._inner = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._inner.decompress(data, max_length)

    @property
    def unconsumed_tail(self) -> bytes:
        return self._inner.unconsumed_tail if self._inner is not None else b""

    @property
    def eof(self) -> bool:
        return self._inner is None or self._inner.eof


class Brotli:
    """brotli's own output limit: once reached, it is asked again with no input until drained."""

    def __init__(self):
        self._inner = brotli.Decompressor()
        self._draining = False

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        if self._draining or not data:
            piece = self._inner.process(b"", output_buffer_limit=max_length or 0)
        else:
            piece = self._inner.process(data, output_buffer_limit=max_length or 0)
        self._draining = bool(max_length) and len(piece) >= max_length and not self._inner.is_finished()
        return piece

    @property
    def unconsumed_tail(self) -> bytes:
        # Input is taken whole; what is left to give is asked for with no input (see above).
        return b""

    @property
    def eof(self) -> bool:
        return self._inner.is_finished()


class Zstd:
    """zstd keeps the input it was given: once ``max_length`` is reached it is asked again with
    no input until it needs more. Frames one after another (allowed in HTTP) each get a fresh
    decompressor."""

    def __init__(self):
        self._inner = zstd.ZstdDecompressor()
        self._started = False

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        if self._inner.eof:
            if not data:
                return b""
            self._inner = zstd.ZstdDecompressor()  # the next frame (the caller passes what followed)
        if not data and self._inner.needs_input:
            return b""
        self._started = True
        return self._inner.decompress(data, max_length or -1)

    @property
    def unconsumed_tail(self) -> bytes:
        # Input is taken whole, and what is left to give is asked for with none; only what
        # follows a frame's end comes back, to start the next frame.
        return self._inner.unused_data if self._inner.eof else b""

    @property
    def eof(self) -> bool:
        return not self._started or (self._inner.eof and not self._inner.unused_data)


def decoder_for(encoding: str):
    """A fresh decoder for a Content-Encoding (lowercase), or None for identity."""
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return Deflate()
    if encoding == "br":
        return Brotli()
    if encoding == "zstd":
        return Zstd()
    return None

"""The content encodings the proxy undoes (web/proxy/decoders.py), streamed in bounded pieces."""
from __future__ import annotations

import brotli

from web.proxy.decoders import decoder_for, zstd


def test_br_and_zstd_are_decoded_in_bounded_pieces_and_a_cut_stream_is_not_taken_for_whole():
    body = b"<!doctype html>" + b"a" * 5_000_000
    for encoding, packed in (("br", brotli.compress(body)), ("zstd", zstd.compress(body))):
        decoder, out, data = decoder_for(encoding), [], packed
        while True:
            piece = decoder.decompress(data, 65536)
            data = decoder.unconsumed_tail
            out.append(piece)
            if not data and len(piece) < 65536:
                break
        assert b"".join(out) == body and max(map(len, out)) <= 2 * 65536 and decoder.eof, encoding
        cut = decoder_for(encoding)
        cut.decompress(packed[: len(packed) // 2], 65536)
        assert not cut.eof, encoding

"""Where the devtools script goes into HTML, however the body is cut into chunks."""
from __future__ import annotations

import gzip
import time
import zlib

from web.proxy import (CHUNK, PANEL_SCRIPT, SNIFF_LIMIT, ScriptInjector, Upstream, _ResponseBody,
                       request_target,
                       rewrite_location)


def inject(*chunks: bytes) -> bytes:
    injector = ScriptInjector()
    return b"".join(injector.feed(chunk) for chunk in chunks) + injector.finish()


def test_the_script_goes_right_after_the_head_tag_even_when_the_tag_is_split():
    page = b'<!doctype html><html><head lang="x"><title>t</title></head><body>hi</body></html>'
    for cut in range(1, len(page)):
        assert inject(page[:cut], page[cut:]) == page.replace(b'<head lang="x">', b'<head lang="x">' + PANEL_SCRIPT)


def test_header_elements_are_not_taken_for_the_head():
    page = b"<!doctype html><body><header>menu</header><p>x</p></body>"
    assert inject(page) == b"<!doctype html><body>" + PANEL_SCRIPT + b"<header>menu</header><p>x</p></body>"


def test_without_head_or_body_the_script_follows_the_doctype_never_precedes_it():
    assert inject(b"<!DOCTYPE html>\n<p>bare</p>") == b"<!DOCTYPE html>" + PANEL_SCRIPT + b"\n<p>bare</p>"
    assert inject(b"<p>fragment</p>") == PANEL_SCRIPT + b"<p>fragment</p>"


def test_at_most_the_sniff_limit_is_held_back():
    injector = ScriptInjector()
    assert injector.feed(b"<!doctype html>" + b" " * 100) == b""  # still looking
    out = injector.feed(b"x" * SNIFF_LIMIT)
    assert out.startswith(b"<!doctype html>" + PANEL_SCRIPT)
    assert injector.feed(b"rest") == b"rest"
    assert injector.finish() == b""


def test_the_script_is_injected_once():
    page = b"<head></head><head></head>"
    assert inject(page).count(PANEL_SCRIPT) == 1


def test_the_upstream_path_is_only_ever_a_path_on_the_manifests_upstream():
    upstream = Upstream.parse("http://127.0.0.1:3000/base/")
    assert (upstream.host, upstream.port, upstream.base_path) == ("127.0.0.1", 3000, "/base")
    assert request_target({"PATH_INFO": "/a b/ü", "QUERY_STRING": "x=%20"}, upstream) == "/base/a%20b/%FC?x=%20"
    # An absolute-form request line names another host: only its path is kept.
    assert request_target({"PATH_INFO": "http://evil.example/steal"}, upstream) == "/base/steal"
    assert Upstream.parse("https://localhost").port == 443


def test_only_locations_on_the_upstreams_own_origin_are_pointed_back():
    upstream = Upstream.parse("http://127.0.0.1:3000")
    routed = "app.localhost:7777"
    assert rewrite_location("http://127.0.0.1:3000/login", upstream, routed) == "http://app.localhost:7777/login"
    assert rewrite_location("http://127.0.0.1:3000", upstream, routed) == "http://app.localhost:7777/"
    assert rewrite_location("HTTP://127.0.0.1:3000/a?b=1#c", upstream, routed) == "http://app.localhost:7777/a?b=1#c"
    assert rewrite_location("http://127.0.0.1:30000/x", upstream, routed) == "http://127.0.0.1:30000/x"
    assert rewrite_location("http://127.0.0.1:3000@evil.example/", upstream, routed) == "http://127.0.0.1:3000@evil.example/"
    assert rewrite_location("https://127.0.0.1:3000/", upstream, routed) == "https://127.0.0.1:3000/"
    assert rewrite_location("https://example.com/", upstream, routed) == "https://example.com/"
    assert rewrite_location("/relative", upstream, routed) == "/relative"


def test_locations_match_on_host_in_any_case_the_effective_port_and_ipv6_and_lose_the_base_path():
    routed = "app.localhost:7777"
    local = Upstream.parse("http://LocalHost/app/")
    assert rewrite_location("http://localhost:80/app/x", local, routed) == "http://app.localhost:7777/x"
    assert rewrite_location("http://LOCALHOST/app", local, routed) == "http://app.localhost:7777/"
    assert rewrite_location("/app/login?next=/", local, routed) == "/login?next=/"
    assert rewrite_location("/application", local, routed) == "/application"
    assert rewrite_location("http://localhost:8080/app/x", local, routed) == "http://localhost:8080/app/x"
    six = Upstream.parse("http://[::1]:3000")
    assert six.origin == "http://[::1]:3000"
    assert rewrite_location("http://[::1]:3000/x", six, routed) == "http://app.localhost:7777/x"
    assert rewrite_location("http://[::2]:3000/x", six, routed) == "http://[::2]:3000/x"


def test_the_script_goes_at_whichever_of_head_body_and_the_head_end_comes_first():
    # A "<head>" inside a body script is the page's text, not its head.
    page = b"<!doctype html><body><script>const t = '<head>';</script></body>"
    assert inject(page) == b"<!doctype html><body>" + PANEL_SCRIPT + page[len(b"<!doctype html><body>"):]
    # No <head> tag, but its end: the script goes in just before it, still in the head.
    page = b"<!doctype html><title>t</title></head><body>x</body>"
    assert inject(page) == page.replace(b"</head>", PANEL_SCRIPT + b"</head>")
    for cut in range(1, len(page)):
        assert inject(page[:cut], page[cut:]) == page.replace(b"</head>", PANEL_SCRIPT + b"</head>")
    assert inject(b"<HEAD>") == b"<HEAD>" + PANEL_SCRIPT  # short, at the very end, any case


def test_looking_for_the_head_scans_each_byte_a_bounded_number_of_times():
    injector = ScriptInjector()
    filler = b"<p>" + b"x" * 61 + b"</p>"  # many "<" that are not ours
    page = b"<!doctype html>" + filler * (SNIFF_LIMIT // len(filler))
    started = time.perf_counter()
    out = b"".join(injector.feed(page[i:i + 1]) for i in range(len(page)))
    assert time.perf_counter() - started < 1.0
    assert (out + injector.finish()).startswith(b"<!doctype html>" + PANEL_SCRIPT)


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


def test_a_navigation_is_what_the_browser_says_it_is_or_an_accept_that_prefers_html():
    from web.proxy import is_navigation, prefers_html
    chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"
    assert is_navigation({"HTTP_SEC_FETCH_DEST": "document", "HTTP_ACCEPT": "*/*"})
    assert not is_navigation({"HTTP_SEC_FETCH_DEST": "iframe", "HTTP_ACCEPT": chrome})
    assert not is_navigation({"HTTP_SEC_FETCH_DEST": "empty", "HTTP_ACCEPT": chrome})
    assert is_navigation({"HTTP_ACCEPT": chrome})  # an older browser, no Sec-Fetch-*
    assert not is_navigation({"HTTP_ACCEPT": chrome, "HTTP_HX_REQUEST": "true"})
    assert not is_navigation({"HTTP_ACCEPT": chrome, "HTTP_X_REQUESTED_WITH": "XMLHttpRequest"})
    assert prefers_html(chrome) and prefers_html("text/html")
    assert not prefers_html("*/*") and not prefers_html("") and not prefers_html("application/json, text/html;q=0.5")
    assert not prefers_html("text/html;q=0") and not prefers_html("text/html;q=oops")


def test_br_and_zstd_are_decoded_in_bounded_pieces_and_a_cut_stream_is_not_taken_for_whole():
    import brotli

    from web.decoders import decoder_for, zstd
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

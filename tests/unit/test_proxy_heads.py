"""What the proxy changes in the heads it passes on (web/proxy/heads.py): which Locations are pointed
back at the routed hostname, and which requests are page navigations (the only ones given the panel)."""
from __future__ import annotations

from web.proxy.heads import is_navigation, prefers_html, request_headers, rewrite_location, status_code, upgrade_request
from web.proxy.upstream import Upstream


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


def test_a_navigation_is_what_the_browser_says_it_is_or_an_accept_that_prefers_html():
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


BROWSER = {"REQUEST_METHOD": "GET", "PATH_INFO": "/hmr", "QUERY_STRING": "t=1", "REMOTE_ADDR": "127.0.0.1",
           "HTTP_HOST": "app.localhost:7777", "HTTP_CONNECTION": "keep-alive, X-Secret",
           "HTTP_X_SECRET": "hop", "HTTP_KEEP_ALIVE": "timeout=5", "HTTP_ACCEPT_ENCODING": "gzip, sdch, br;q=0.5",
           "HTTP_X_FORWARDED_FOR": "10.9.9.9", "HTTP_X_FORWARDED_HOST": "evil.example", "HTTP_COOKIE": "a=1"}


def test_the_upstream_gets_no_hop_by_hop_header_and_devhostds_own_forwarded_headers():
    sent = dict(request_headers(BROWSER))
    # Hop-by-hop, by the RFC's list and by what Connection names, stays on this hop.
    assert not {"Connection", "Keep-Alive", "X-Secret"} & set(sent)
    assert sent["Cookie"] == "a=1" and sent["Accept-Encoding"] == "gzip, sdch, br;q=0.5"
    assert (sent["X-Forwarded-For"], sent["X-Forwarded-Host"], sent["X-Forwarded-Proto"]) == \
        ("10.9.9.9, 127.0.0.1", "app.localhost:7777", "http")
    # An answer devhostd may rewrite asks only for encodings it can undo.
    assert dict(request_headers(BROWSER, narrow=True))["Accept-Encoding"] == "gzip, br;q=0.5"
    assert dict(request_headers({**BROWSER, "HTTP_ACCEPT_ENCODING": "sdch"}, narrow=True))["Accept-Encoding"] \
        == "identity"


def test_an_upgrade_passes_its_handshake_headers_on_as_sent_with_devhostds_own_forwarded_headers():
    sent = [("Host", "app.localhost:7777"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("X-Forwarded-Host", "evil.example"), ("x-forwarded-proto", "https")]
    head = upgrade_request(BROWSER, dict(sent), Upstream.parse("http://127.0.0.1:3000/base")).decode("latin-1")
    assert head == ("GET /base/hmr?t=1 HTTP/1.1\r\nHost: app.localhost:7777\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nX-Forwarded-For: 10.9.9.9, 127.0.0.1\r\n"
                    "X-Forwarded-Host: app.localhost:7777\r\nX-Forwarded-Proto: http\r\n\r\n")
    assert status_code(b"HTTP/1.1 101 Switching Protocols\r\n\r\n") == 101
    assert status_code(b"HTTP/1.1 403\r\n\r\n") == 403
    assert status_code(b"SSH-2.0-OpenSSH\r\n\r\n") == 0 and status_code(b"HTTP/1.1 abc\r\n\r\n") == 0

"""Routed hostnames: the person's app proxied (with the panel in its HTML), its own WebSocket
tunnelled, a plain page with the panel where there is no app, /__devhost__/ always devhostd's."""
from __future__ import annotations

import gzip
import http.client
import json
import socket
import time

import gevent
import pytest
import websocket

from tests.upstream_app import proxied_stack, upstream  # noqa: F401 - fixtures
from web.proxy.injection import PANEL_SCRIPT



# What a browser sends when a person goes to a page (a link, the address bar, a reload).
NAVIGATION = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate",
              "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def fetch(daemon, path, host=None, method="GET", headers=None, body=None, navigate=True):
    """One request on a connection of its own; by default a page navigation, as a browser's."""
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        sent = {"Host": host or daemon.host(), **(NAVIGATION if navigate else {}), **(headers or {})}
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_html_gets_the_panel_script_once_and_is_sent_uncompressed(daemon):
    for path in ("/", "/gzip", "/deflate", "/chunked"):
        status, headers, body = fetch(daemon, path, headers={"Accept-Encoding": "gzip, deflate, br"})
        assert status == 200, path
        assert body.count(PANEL_SCRIPT) == 1, path
        assert body.index(PANEL_SCRIPT) == body.index(b"<head>") + len(b"<head>"), path
        assert "content-encoding" not in headers and "content-length" not in headers, (path, headers)
        assert headers["transfer-encoding"] == "chunked", path
        assert b"</html>" in body, path


def test_a_page_in_br_or_zstd_gets_the_panel_without_asking_the_dev_server_for_it_uncompressed(daemon, upstream):
    for path in ("/brotli", "/zstd"):
        status, headers, body = fetch(daemon, path, headers={"Accept-Encoding": "gzip, deflate, br, zstd"})
        assert status == 200 and body.count(PANEL_SCRIPT) == 1 and b"</html>" in body, path
        assert "content-encoding" not in headers, path
    asked = [r[2]["accept-encoding"] for r in upstream.requests if r[1] in ("/brotli", "/zstd")]
    assert asked == ["gzip, deflate, br, zstd"] * 2


def test_only_a_navigation_to_a_page_gets_the_panel(daemon, upstream):
    scripted = {"fetch()": {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Accept": "*/*"},
                "htmx": {"Sec-Fetch-Dest": "empty", "HX-Request": "true", "Accept": "text/html, */*"},
                "an iframe": {"Sec-Fetch-Dest": "iframe", "Accept": NAVIGATION["Accept"]},
                "an old XMLHttpRequest": {"X-Requested-With": "XMLHttpRequest", "Accept": "text/html"},
                "no preference": {"Accept": "*/*"}}
    for what, headers in scripted.items():
        status, got, body = fetch(daemon, "/", headers=headers, navigate=False)
        assert status == 200 and PANEL_SCRIPT not in body, what
        assert int(got["content-length"]) == len(body), what  # passed as it is, byte for byte
    # A browser that sends no Sec-Fetch-* headers: an Accept that prefers HTML is a navigation.
    status, _, body = fetch(daemon, "/", headers={"Accept": "text/html,*/*;q=0.8"}, navigate=False)
    assert PANEL_SCRIPT in body


def test_only_an_answer_with_a_page_gets_the_panel(daemon, upstream):
    for code in (301, 302, 307, 204, 304):
        status, _, body = fetch(daemon, f"/status/{code}")
        assert status == code and PANEL_SCRIPT not in body, code
    for path in ("/status/200/empty", "/status/500/empty", "/empty-chunked"):
        status, _, body = fetch(daemon, path)
        assert body == b"", path  # an empty answer stays empty: never the script tag alone
    for code in (404, 500):
        status, _, body = fetch(daemon, f"/status/{code}")
        assert status == code and body.count(PANEL_SCRIPT) == 1, code  # the dev server's error page


def test_a_page_given_the_panel_loses_the_upstreams_validator_and_varies_on_the_navigation(daemon, upstream):
    status, headers, body = fetch(daemon, "/validated")
    assert PANEL_SCRIPT in body and "etag" not in headers
    assert headers["vary"] == "Accept-Encoding, Sec-Fetch-Dest"
    status, headers, body = fetch(daemon, "/validated", navigate=False, headers={"Accept": "*/*"})
    assert PANEL_SCRIPT not in body and headers["etag"] == '"upstream-v1"'  # untouched: its own validator


def test_only_a_navigation_has_its_accept_encoding_narrowed(daemon, upstream):
    offered = "gzip, deflate, br, zstd, dcb"
    fetch(daemon, "/style.css", navigate=False, headers={"Accept-Encoding": offered})
    fetch(daemon, "/", headers={"Accept-Encoding": offered})
    [css] = [r[2] for r in upstream.requests if r[1] == "/style.css"]
    [page] = [r[2] for r in upstream.requests if r[1] == "/"]
    assert css["accept-encoding"] == offered
    assert page["accept-encoding"] == "gzip, deflate, br, zstd"


def test_other_responses_pass_through_unchanged_with_their_headers(daemon, upstream):
    status, headers, body = fetch(daemon, "/style.css")
    assert status == 200 and headers["content-type"] == "text/css"
    assert int(headers["content-length"]) == len(body) and b"#box" in body and PANEL_SCRIPT not in body
    status, headers, body = fetch(daemon, "/echo?q=%20x", method="POST", body=b"payload", navigate=False,
                                  headers={"Content-Type": "text/plain", "Connection": "keep-alive, X-Private",
                                           "X-Private": "hop", "X-Custom": "kept", "Accept-Encoding": "br, gzip"})
    echoed = json.loads(body)
    assert (echoed["method"], echoed["query"], echoed["body"]) == ("POST", "q=%20x", "payload")
    sent = echoed["headers"]
    assert sent["host"] == daemon.host()  # the routed hostname, as the browser sent it
    assert sent["x-custom"] == "kept" and "x-private" not in sent  # named in Connection: hop-by-hop
    assert sent["accept-encoding"] == "br, gzip"  # not a page a person goes to: nothing to undo
    assert sent["x-forwarded-host"] == daemon.host() and sent["x-forwarded-proto"] == "http"
    assert headers["x-upstream"] == "yes" and headers["set-cookie"] == "session=abc; Path=/"


def test_a_chunked_request_body_is_streamed_to_the_upstream(daemon):
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    connection.request("PUT", "/echo", body=iter([b"one ", b"two"]), encode_chunked=True,
                       headers={"Host": daemon.host(), "Transfer-Encoding": "chunked"})
    echoed = json.loads(connection.getresponse().read())
    connection.close()
    assert echoed["body"] == "one two"


def test_redirects_to_the_upstreams_own_address_point_back_at_the_routed_hostname(daemon):
    status, headers, _ = fetch(daemon, "/redirect")
    assert status == 302 and headers["location"] == f"http://{daemon.host()}/echo?from=redirect"


def test_an_encoding_devhostd_cannot_undo_passes_through_without_the_panel(daemon):
    status, headers, body = fetch(daemon, "/compress")
    assert status == 200 and headers["content-encoding"] == "compress" and PANEL_SCRIPT not in body


def test_server_sent_events_stream_through(daemon):
    status, headers, body = fetch(daemon, "/events")
    assert status == 200 and headers["content-type"] == "text/event-stream" and body == b"data: one\n\ndata: two\n\n"


def test_a_stopped_dev_server_gets_a_502_page_that_still_carries_the_panel(daemon, upstream):
    upstream.stop()
    status, headers, body = fetch(daemon, "/")
    assert status == 502 and headers["content-type"].startswith("text/html")
    assert PANEL_SCRIPT in body and b"could not get an answer from the upstream" in body


def test_devhost_paths_stay_devhostds_on_a_proxied_hostname(daemon, upstream):
    status, headers, body = fetch(daemon, "/__devhost__/config.json")
    assert status == 200 and json.loads(body)["name"] == "teststack"
    assert not any(path.startswith("/__devhost__") for _, path, _ in upstream.requests)
    status, headers, body = fetch(daemon, "/__devhost__/static/chat/panel.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript") and b"Panel" in body
    assert headers["cache-control"] == "no-cache" and headers["x-content-type-options"] == "nosniff"
    assert fetch(daemon, "/__devhost__/static/chat/../../app.py")[0] == 404
    assert fetch(daemon, "/__devhost__/static/chat/nothing.js")[0] == 404


def test_a_service_without_upstream_serves_a_plain_page_with_the_panel(daemon, stack):
    status, headers, body = fetch(daemon, "/", host=daemon.host("other.localhost"))
    assert status == 200 and PANEL_SCRIPT in body
    # It says exactly what to add, and where.
    assert b'upstream = &quot;http://127.0.0.1:3000&quot;' in body and b"[services.other]" in body
    assert str(stack / "devhost.toml").encode() in body
    assert fetch(daemon, "/favicon.ico", host=daemon.host("other.localhost"))[0] == 404
    assert fetch(daemon, "/", host=daemon.host("other.localhost"), method="POST")[0] == 405
    # The control origin is no routed page: no panel there.
    status, _, body = fetch(daemon, "/", host=daemon.control_origin.split("//")[1])
    assert status == 200 and PANEL_SCRIPT not in body


def test_unrouted_hosts_are_refused_before_anything_reaches_the_upstream(daemon, upstream):
    status, _, body = fetch(daemon, "/echo", host=f"evil.example:{daemon.port}")
    assert status == 403 and b"not served here" in body
    assert upstream.requests == []


def _ws(daemon, path="/hmr", host=None, origin=None):
    host = host or daemon.host()
    return websocket.create_connection(f"ws://127.0.0.1:{daemon.port}{path}", host=host,
                                       origin=origin or f"http://{host}", timeout=10)


def test_the_apps_own_websocket_is_tunnelled_to_the_upstream(daemon, upstream):
    ws = _ws(daemon)
    assert ws.recv() == "hello"
    ws.send("ping:42")
    assert ws.recv() == "pong:42"
    big = "ping:" + "x" * 200_000  # several reads on each side
    ws.send(big)
    assert ws.recv() == "pong:" + "x" * 200_000
    ws.close()
    [(_, _, headers)] = [r for r in upstream.requests if r[1] == "/hmr"]
    assert headers["host"] == daemon.host() and headers["upgrade"].lower() == "websocket"


def reloads(daemon, method="GET", body=None, path="/__devhost__/reloads"):
    status, value = daemon.request(method, path, body, host=daemon.host())
    assert status == 200, (status, value)
    return value


def test_held_reloads_reach_the_page_only_when_applied_and_in_order(daemon, upstream):
    ws = _ws(daemon)
    assert ws.recv() == "hello"
    assert reloads(daemon, "PUT", {"held": True})["held"] is True
    for n in (1, 2, 3):
        ws.send(f"ping:{n}")  # the dev server answers each: held, not sent on
    ws.settimeout(1)
    with pytest.raises(websocket.WebSocketTimeoutException):
        ws.recv()
    wait_for = time.monotonic() + 5
    while reloads(daemon)["updates"] < 3 and time.monotonic() < wait_for:
        time.sleep(0.05)
    assert reloads(daemon)["updates"] == 3
    assert reloads(daemon, "POST", path="/__devhost__/reloads/apply") == {"held": True, "updates": 0, "bytes": 0,
                                                                         "ended": None}
    ws.settimeout(10)
    assert [ws.recv() for _ in range(3)] == ["pong:1", "pong:2", "pong:3"]
    ws.send("ping:4")
    ws.settimeout(1)
    with pytest.raises(websocket.WebSocketTimeoutException):
        ws.recv()
    reloads(daemon, "PUT", {"held": False})  # turning the hold off sends what waited
    ws.settimeout(10)
    assert ws.recv() == "pong:4"
    ws.send("ping:5")
    assert ws.recv() == "pong:5"  # and nothing is held any more
    ws.close()


def test_reloads_are_held_per_routed_page_and_asked_for_with_its_origin(daemon, upstream):
    status, value = daemon.request("PUT", "/__devhost__/reloads", {"held": True}, host=daemon.host(),
                                   origin="http://evil.localhost")
    assert status == 403
    control = daemon.control_origin.split("//")[1]
    status, value = daemon.request("GET", "/__devhost__/reloads", host=control)
    assert status == 404 and "routed page" in value["error"]
    status, value = daemon.request("PUT", "/__devhost__/reloads", {"held": "yes"}, host=daemon.host())
    assert status == 400 and "held" in value["error"]


def test_upgrades_outside_devhost_are_refused_for_foreign_hosts_and_hosts_without_an_app(daemon, upstream):
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        _ws(daemon, host=f"evil.example:{daemon.port}")
    assert refused.value.status_code == 403
    with pytest.raises(websocket.WebSocketBadStatusException) as missing:
        _ws(daemon, host=daemon.host("other.localhost"))
    assert missing.value.status_code == 404
    upstream.stop()
    with pytest.raises(websocket.WebSocketBadStatusException) as down:
        _ws(daemon)
    assert down.value.status_code == 502
    assert [r for r in upstream.requests if r[1] == "/hmr"] == []


def test_a_gzipped_page_that_is_cut_short_ends_the_response_without_a_500(daemon, upstream):
    # A raw upstream that promises gzip and hangs up mid-body: the browser gets what there was.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def serve():
        conn, _ = listener.accept()
        conn.recv(65536)
        body = gzip.compress(b"<!doctype html><head></head><body>" + bytes(range(256)) * 40)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[: len(body) // 2])
        conn.close()
    server = gevent.spawn(serve)
    path = daemon.stderr_path.parent / "devhost.toml"
    path.write_text(path.read_text().replace(upstream.url, f"http://127.0.0.1:{port}"))
    try:
        status, _, body = fetch(daemon, "/")
    except http.client.IncompleteRead as cut:
        status, body = 200, cut.partial
    assert status == 200 and body.startswith(b"<!doctype html><head>" + PANEL_SCRIPT)
    server.join(timeout=5)
    listener.close()


# ---- raw sockets on both sides: exactly the bytes a defect needs -------------------------------

def raw_exchange(daemon, payload: bytes, wait: float = 5.0, half_close: bool = False) -> bytes:
    """Sends ``payload`` to devhostd and returns all it answers until it closes or ``wait`` passes."""
    client = socket.create_connection(("127.0.0.1", daemon.port), timeout=wait)
    client.sendall(payload)
    if half_close:
        client.shutdown(socket.SHUT_WR)
    out = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            out += data
    except socket.timeout:
        pass
    finally:
        client.close()
    return out


class RawUpstream:
    """An upstream that answers every connection with ``reply(request_bytes) -> bytes`` (None: stall)."""

    def __init__(self, reply, close: bool = True):
        self.reply, self.close_after = reply, close
        self.received: list[bytes] = []
        self.hangups: list[bytes] = []  # requests whose connection devhostd closed (close=False)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.server = gevent.spawn(self._serve)

    def _serve(self):
        while True:
            conn, _ = self.listener.accept()
            gevent.spawn(self._one, conn)

    def _one(self, conn):
        request = b""
        conn.settimeout(10)
        try:
            while b"\r\n\r\n" not in request:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            gevent.sleep(0.2)  # whatever else the proxy sends along
            conn.setblocking(False)
            try:
                request += conn.recv(65536)
            except OSError:
                pass
            conn.setblocking(True)
            self.received.append(request)
            answer = self.reply(request)
            if answer is None:
                gevent.sleep(30)
                return
            conn.sendall(answer)
            if not self.close_after:  # hold the connection until devhostd lets go of it
                conn.settimeout(30)
                while conn.recv(65536):
                    pass
                self.hangups.append(request)
        except OSError:
            return
        finally:
            conn.close()

    def stop(self):
        self.server.kill()
        self.listener.close()


@pytest.fixture
def raw_upstream(daemon, upstream):
    """Points the manifest's upstream at a RawUpstream: ``raw_upstream(reply)``; a second call
    gives the same upstream a new reply."""
    made = []

    def make(reply, close=True):
        if made:
            made[0].reply, made[0].close_after = reply, close
            return made[0]
        raw = RawUpstream(reply, close)
        made.append(raw)
        path = daemon.stderr_path.parent / "devhost.toml"
        path.write_text(path.read_text().replace(upstream.url, raw.url))
        return raw
    yield make
    for raw in made:
        raw.stop()


def test_connection_upgrade_on_a_plain_request_cannot_smuggle_a_second_request(daemon, upstream):
    host = daemon.host().encode()
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n"
    out = raw_exchange(daemon, b"POST /echo HTTP/1.1\r\nHost: " + host + b"\r\nConnection: upgrade\r\n"
                       b"Content-Length: 5\r\n\r\nhello" + smuggled, half_close=True)
    assert b'"body": "hello"' in out or b'"body":"hello"' in out, out
    assert not [r for r in upstream.requests if r[1] == "/smuggled"]


def test_a_transfer_encoding_other_than_chunked_is_refused(daemon, upstream):
    host = daemon.host().encode()
    out = raw_exchange(daemon, b"POST /echo HTTP/1.1\r\nHost: " + host + b"\r\nTransfer-Encoding: gzip, chunked\r\n"
                       b"Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 400"), out
    assert not [r for r in upstream.requests if r[1] == "/echo"]


def test_answers_that_end_with_the_connection_are_passed_on(daemon, raw_upstream):
    raw_upstream(lambda request: b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-delimited body")
    status, _, body = fetch(daemon, "/plain")
    assert (status, body) == (200, b"close-delimited body")


def test_a_content_length_that_does_not_frame_the_body_is_not_passed_on(daemon, raw_upstream):
    raw_upstream(lambda request: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    status, headers, body = fetch(daemon, "/te")
    assert (status, body) == (200, b"hello") and "content-length" not in headers
    raw_upstream(lambda request: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5, 7\r\n"
                                 b"Connection: close\r\n\r\nhello")
    status, headers, body = fetch(daemon, "/two-lengths")
    assert (status, body) == (200, b"hello") and "content-length" not in headers


def test_bodiless_statuses_with_a_length_and_interim_answers_are_passed_on_right(daemon, raw_upstream):
    raw_upstream(lambda request: b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 10\r\n\r\n")
    status, headers, body = fetch(daemon, "/cached")
    assert (status, body, headers["etag"]) == (304, b"", '"x"')
    raw_upstream(lambda request: b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n")
    assert fetch(daemon, "/empty")[:3:2] == (204, b"")
    raw_upstream(lambda request: b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                                 b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nfinal")
    status, headers, body = fetch(daemon, "/hints")
    assert (status, body) == (200, b"final")


def test_folded_and_bare_cr_header_values_are_passed_on_as_one_line(daemon, raw_upstream):
    raw_upstream(lambda request: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Folded: one\r\n two\r\n"
                                 b"X-Cr: a\rb\r\nContent-Length: 2\r\n\r\nok")
    status, headers, body = fetch(daemon, "/folded")
    assert (status, body) == (200, b"ok")
    assert headers["x-folded"] == "one two" and headers["x-cr"] in ("a", "a b")


def test_head_answers_carry_no_body_and_are_never_chunked(daemon, upstream):
    def head(host, path="/"):
        out = raw_exchange(daemon, b"HEAD " + path.encode() + b" HTTP/1.1\r\nHost: " + host.encode()
                           + b"\r\nConnection: close\r\n\r\n")
        head_part, _, rest = out.partition(b"\r\n\r\n")
        return head_part.lower(), rest
    proxied, rest = head(daemon.host())
    assert proxied.startswith(b"http/1.1 200") and rest == b"", (proxied, rest)
    assert b"transfer-encoding" not in proxied and b"content-length: " in proxied
    plain, rest = head(daemon.host("other.localhost"))
    assert plain.startswith(b"http/1.1 200") and rest == b""
    upstream.stop()
    failed, rest = head(daemon.host())
    assert failed.startswith(b"http/1.1 502") and rest == b""


def test_a_refused_upgrade_is_relayed_and_ends_the_connection(daemon, raw_upstream):
    raw = raw_upstream(lambda request: b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                                       b"Content-Length: 4\r\n\r\nnope", close=False)
    host = daemon.host().encode()
    started = time.monotonic()
    out = raw_exchange(daemon, b"GET /hmr HTTP/1.1\r\nHost: " + host + b"\r\nUpgrade: websocket\r\n"
                       b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       b"Sec-WebSocket-Version: 13\r\nOrigin: http://" + host + b"\r\n\r\n", wait=8)
    assert out.startswith(b"HTTP/1.1 403 Forbidden") and out.endswith(b"\r\n\r\nnope"), out
    assert time.monotonic() - started < 5  # closed after the answer, not left open to the upstream
    assert len(raw.received) == 1


def test_the_websocket_tunnel_sets_its_own_forwarded_headers(daemon, upstream):
    host = daemon.host()
    ws = websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/hmr", host=host, origin=f"http://{host}",
                                     timeout=10, header=["X-Forwarded-For: 10.9.9.9", "X-Forwarded-Host: evil.example",
                                                         "X-Forwarded-Proto: https"])
    assert ws.recv() == "hello"
    ws.close()
    [(_, _, headers)] = [r for r in upstream.requests if r[1] == "/hmr"]
    assert headers["x-forwarded-for"] == "10.9.9.9, 127.0.0.1"
    assert headers["x-forwarded-host"] == host and headers["x-forwarded-proto"] == "http"


def test_an_answer_cut_short_never_looks_complete(daemon, raw_upstream):
    host = daemon.host().encode()

    def get(path):
        started = time.monotonic()
        out = raw_exchange(daemon, b"GET " + path + b" HTTP/1.1\r\nHost: " + host
                           + b"\r\nSec-Fetch-Dest: document\r\n\r\n", wait=8)
        return out, time.monotonic() - started
    # Passed through with its length: the connection closes short of it.
    raw = raw_upstream(lambda request: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n"
                                       b"\r\nshort")
    out, took = get(b"/plain")
    assert out.startswith(b"HTTP/1.1 200") and b"content-length: 100" in out.lower() and out.endswith(b"short")
    assert took < 5  # cut, not left hanging as if more were coming
    # HTML given the panel (sent chunked): no last chunk.
    raw.reply = lambda request: (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n"
                                 b"<head></head>")
    out, took = get(b"/page")
    assert PANEL_SCRIPT in out and not out.endswith(b"0\r\n\r\n") and took < 5, out
    # A gzip stream that stops before its end, though its Content-Length is met.
    cut = gzip.compress(b"<!doctype html><head></head><body>" + bytes(range(256)) * 40)[:-30]
    raw.reply = lambda request: (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(cut) + cut)
    out, took = get(b"/gzip")
    assert PANEL_SCRIPT in out and not out.endswith(b"0\r\n\r\n") and took < 5, out[-100:]
    # A chunked body cut mid-way.
    raw.reply = lambda request: (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"d\r\n<head></head>\r\n20\r\n<body>")
    out, took = get(b"/chunked")
    assert PANEL_SCRIPT in out and not out.endswith(b"0\r\n\r\n") and took < 5, out[-100:]


def test_a_stalled_answer_is_let_go_of_when_the_browser_leaves(daemon, raw_upstream):
    raw = raw_upstream(lambda request: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n"
                                       b"\r\npartial", close=False)
    client = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
    client.sendall(b"GET /stalled HTTP/1.1\r\nHost: " + daemon.host().encode() + b"\r\n\r\n")
    out = b""
    while not out.endswith(b"partial"):
        out += client.recv(65536)
    client.close()
    deadline = time.monotonic() + 10  # CLIENT_GONE_IDLE without a byte from the upstream, then it is let go
    while not raw.hangups and time.monotonic() < deadline:
        gevent.sleep(0.1)
    assert raw.hangups, "devhostd still holds the upstream connection of a browser that left"


def test_a_range_of_a_page_is_passed_on_without_the_panel(daemon, raw_upstream):
    raw_upstream(lambda request: b"HTTP/1.1 206 Partial Content\r\nContent-Type: text/html\r\n"
                                 b"Content-Range: bytes 0-5/100\r\nContent-Length: 6\r\n\r\n<head>")
    status, headers, body = fetch(daemon, "/", headers={"Range": "bytes=0-5"})
    assert (status, body, headers["content-length"]) == (206, b"<head>", "6")


def test_an_absolute_form_request_line_is_routed_by_its_path(daemon, upstream):
    host = daemon.host().encode()
    out = raw_exchange(daemon, b"GET http://" + host + b"/__devhost__/config.json HTTP/1.1\r\nHost: " + host
                       + b"\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200") and b'"teststack"' in out, out[:300]
    assert not any(path.startswith("/__devhost__") or "://" in path for _, path, _ in upstream.requests)


def test_a_location_on_the_upstream_is_recognised_however_it_is_spelled(daemon, raw_upstream):
    raw = raw_upstream(lambda request: b"")
    port = raw.url.rsplit(":", 1)[1]
    raw.reply = lambda request: (b"HTTP/1.1 302 Found\r\nLocation: HTTP://127.0.0.1:" + port.encode()
                                 + b"/x?y=1\r\nContent-Length: 0\r\n\r\n")
    status, headers, _ = fetch(daemon, "/go")
    assert status == 302 and headers["location"] == f"http://{daemon.host()}/x?y=1"


def test_requests_after_a_proxied_answer_on_one_connection_are_read(daemon, upstream):
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        for path in ("/", "/style.css", "/chunked", "/echo") * 5:
            connection.request("GET", path, headers={"Host": daemon.host()})
            response = connection.getresponse()
            assert response.status == 200, path
            response.read()
    finally:
        connection.close()

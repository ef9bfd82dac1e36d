"""Hardened edges, each with the single request that used to break it: a clear 4xx where the
client is at fault, never a 500 or a false 502, no `bug:` line a client can forge, framing the
upstream could read differently refused, WebSocket protocol errors closed as such, and
cross-site requests refused. (The daemon fixture fails a test whose daemon logged `bug:`.)"""
from __future__ import annotations

import json
import os
import re
import socket
import struct
import time

import pytest

from tests.integration.test_routed_pages import raw_exchange
from tests.upstream_app import proxied_stack, upstream  # noqa: F401 - fixtures



def status_of(answer: bytes) -> int:
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    assert match, answer[:200]
    return int(match.group(1))


def request(daemon, method: str, path: str, *, host: str | None = None, headers=(), body: bytes = b"",
            length: int | None = None) -> bytes:
    host = host or daemon.host()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Origin: http://{host}", "Connection: close", *headers]
    if body or length is not None:
        lines.append(f"Content-Length: {length if length is not None else len(body)}")
    return raw_exchange(daemon, ("\r\n".join(lines) + "\r\n\r\n").encode() + body, wait=8, half_close=True)


def test_a_path_with_a_null_byte_is_a_404(daemon):
    answer = request(daemon, "GET", "/__devhost__/static/chat/%00")
    assert status_of(answer) == 404 and b"nothing is served" in answer


@pytest.mark.parametrize("method,path", [("POST", "/__devhost__/chat/sessions"), ("PUT", "/__devhost__/chat/panel"),
                                         ("POST", "/__devhost__/core")])
def test_a_body_shorter_than_its_length_is_a_400_that_says_so(daemon, method, path):
    host = daemon.host() if path != "/__devhost__/core" else daemon.control_origin.split("//")[1]
    answer = request(daemon, method, path, host=host, headers=["Content-Type: application/json"],
                     body=b'{"harness":', length=500)
    assert status_of(answer) == 400, answer
    assert b"ended before its Content-Length" in answer


def test_a_proxied_request_whose_body_ends_early_is_a_400_not_a_502(daemon):
    answer = request(daemon, "POST", "/echo", body=b"short", length=100)
    assert status_of(answer) == 400 and b"ended before its Content-Length" in answer


@pytest.mark.parametrize("headers", [
    ["Content-Length: 5", "Content-Length: 6"],
    ["Transfer-Encoding: chunked", "Content-Length: 5"],
    ["X-Folded: one", " two"],
])
def test_framing_the_upstream_could_read_differently_is_refused(daemon, headers):
    host = daemon.host()
    raw = ("\r\n".join(["POST /echo HTTP/1.1", f"Host: {host}", *headers]) + "\r\n\r\nhello").encode()
    answer = raw_exchange(daemon, raw, wait=8, half_close=True)
    assert status_of(answer) == 400, answer


def test_malformed_requests_are_400s_and_never_a_bug_line(daemon):
    for raw in (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(120)) + b"\r\n"):
        answer = raw_exchange(daemon, raw, wait=8, half_close=True)
        assert status_of(answer) in (400, 431, 505), answer
        assert b"Traceback" not in answer
    time.sleep(0.3)
    assert " bug: " not in daemon.log()


def test_a_cross_site_request_is_refused_gets_included(daemon):
    for method, path in (("GET", "/__devhost__/chat/harnesses?pageURL=x&chatTarget=project"),
                         ("GET", "/__devhost__/config.json")):
        answer = request(daemon, method, path, headers=["Sec-Fetch-Site: cross-site"])
        assert status_of(answer) == 403 and b"cross-site" in answer, answer
    answer = request(daemon, "GET", "/__devhost__/config.json", headers=["Sec-Fetch-Site: same-origin"])
    assert status_of(answer) == 200


def _upgrade(daemon, path: str, host: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nUpgrade: websocket\r\n"
                  f"Authorization: Bearer {daemon.core_token}\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _close_code(sock: socket.socket) -> int | None:
    """Reads frames until a close frame; its code."""
    buffer = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
        while len(buffer) >= 2:
            length, head = buffer[1] & 0x7F, 2
            if length == 126:
                length, head = struct.unpack("!H", buffer[2:4])[0], 4
            elif length == 127:
                length, head = struct.unpack("!Q", buffer[2:10])[0], 10
            if len(buffer) < head + length:
                break
            opcode, payload = buffer[0] & 0x0F, buffer[head:head + length]
            buffer = buffer[head + length:]
            if opcode == 8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
    return None


def test_websocket_protocol_errors_close_with_1002(daemon):
    control = daemon.control_origin.split("//")[1]
    unmasked = _upgrade(daemon, "/__devhost__/ws/core", control)
    payload = json.dumps({"id": "1", "type": "chat.list"}).encode()
    unmasked.sendall(bytes([0x81, len(payload)]) + payload)  # a client frame without a mask
    assert _close_code(unmasked) == 1002
    bad_close = _upgrade(daemon, "/__devhost__/ws/core", control)
    mask = b"\x00\x00\x00\x00"
    bad_close.sendall(bytes([0x88, 0x82]) + mask + struct.pack("!H", 5000))  # close code 5000 is invalid
    assert _close_code(bad_close) == 1002


def test_an_oversized_frame_on_the_core_socket_is_closed_with_1009_and_an_error(daemon):
    control = daemon.control_origin.split("//")[1]
    sock = _upgrade(daemon, "/__devhost__/ws/core", control)
    payload = b"x" * (17 * 1024 * 1024)
    sock.sendall(bytes([0x81, 0xFF]) + struct.pack("!Q", len(payload)) + b"\x00\x00\x00\x00" + payload)
    assert _close_code(sock) == 1009


def test_chats_without_a_cli_hold_no_file_so_hundreds_fit_under_a_low_fd_limit(daemon, stack):
    import resource

    from devhostd.core_client import CoreConnection
    resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (256, 256))
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        for n in range(300):
            core.chats.create(f"many-{n}", provider="claude", cwd=str(stack / "project"))
        assert len(core.chats.list()) == 300
    fds = len(os.listdir(f"/proc/{daemon.proc.pid}/fd"))
    assert fds < 100, fds


@pytest.fixture
def daemon_env(daemon_env, request):
    # A test may ask for a monitor that reports any hold of the hub over 10 ms.
    strict = getattr(request, "param", None) == "strict-monitor"
    return {**daemon_env, "GEVENT_MAX_BLOCKING_TIME": "0.01"} if strict else daemon_env


def _send_big(daemon):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send(json.dumps({"type": "send", "commandId": "c-big", "text": "x" * (15 * 1024 * 1024)}))
    return sock


def test_a_15_mib_send_does_not_hold_the_hub(daemon, mock):
    sock = _send_big(daemon)
    sock.result_for("c-big")  # refused (over 8 MiB) or taken: either way read, unmasked and parsed
    time.sleep(1)
    assert "the hub was blocked" not in daemon.log()


@pytest.mark.parametrize("daemon_env", ["strict-monitor"], indirect=True)
def test_a_blocked_hub_is_reported_by_the_monitor(daemon, mock):
    sock = _send_big(daemon)  # parsing 15 MiB of JSON holds the hub well over 10 ms
    sock.result_for("c-big")
    deadline = time.monotonic() + 10
    while "the hub was blocked" not in daemon.log() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "warning: the hub was blocked for" in daemon.log()
    assert "Request context not initialized" not in daemon.log()  # the report never dies on bottle's locals
    # Idle afterwards, the monitor goes on looking every 10 ms; it reports no block that is not
    # one (gevent's own monitor thread, which never switches greenlets, once reported itself forever).
    time.sleep(3)
    reports = [line for line in daemon.log().splitlines() if "the hub was blocked" in line]
    assert not [line for line in reports if "_monitor.py" in line], reports
    assert len(reports) < 10, reports  # each block once, however many times the monitor saw it


def test_a_half_sent_request_is_let_go_after_the_header_timeout(daemon):
    from web.websocket import HEADER_TIMEOUT
    partial = socket.create_connection(("127.0.0.1", daemon.port), timeout=HEADER_TIMEOUT + 10)
    partial.sendall(b"GET /__devhost__/config.json HTTP/1.1\r\nHost: " + daemon.host().encode() + b"\r\nX-Half: ")
    started = time.monotonic()
    answer = b""
    while True:
        data = partial.recv(65536)
        if not data:
            break
        answer += data
    assert HEADER_TIMEOUT - 1 <= time.monotonic() - started <= HEADER_TIMEOUT + 5
    assert status_of(answer) == 408
    partial.close()


def test_out_of_file_descriptors_a_new_session_is_a_503_that_says_what_to_do(daemon, mock):
    import resource
    soft, hard = resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE)
    used = len(os.listdir(f"/proc/{daemon.proc.pid}/fd"))
    resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (used + 2, hard))
    try:
        status, answer = daemon.request("POST", "/__devhost__/chat/sessions",
                                        {"harness": "claude-code", "pageURL": daemon.page(), "target": "project"},
                                        host=daemon.host())
    finally:
        resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (soft, hard))
    assert status == 503 and "file descriptors" in answer["error"], (status, answer)
    status, _ = daemon.request("POST", "/__devhost__/chat/sessions",
                               {"harness": "claude-code", "pageURL": daemon.page(), "target": "project"},
                               host=daemon.host())
    assert status == 201  # with descriptors again, sessions start again


SLOW_HOLDER = """
import socket, sys, time
port, host, count, seconds = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3]), float(sys.argv[4])
def slow():
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /__devhost__/config.json HTTP/1.1\\r\\nHost: " + host + b"\\r\\n")  # never ends
    sock.setblocking(False)
    return sock
held = [slow() for _ in range(count)]
print("holding", flush=True)
renewed, deadline = 0, time.monotonic() + seconds
while time.monotonic() < deadline:
    for n, sock in enumerate(held):
        try:
            gone = sock.recv(1) == b""
        except BlockingIOError:
            continue
        except OSError:
            gone = True
        if gone:  # pushed out: open another at once, as a process that wants to hold the door would
            sock.close()
            held[n] = slow()
            renewed += 1
    time.sleep(0.01)
print("renewed", renewed, flush=True)
"""


def test_one_process_renewing_slow_connections_cannot_keep_another_from_being_served(daemon):
    import subprocess
    import sys

    from web.connections import WAITING_LIMIT
    holder = subprocess.Popen([sys.executable, "-c", SLOW_HOLDER, str(daemon.port), daemon.host(),
                               str(WAITING_LIMIT + 60), "8"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        served = [status_of(request(daemon, "GET", "/__devhost__/config.json")) for _ in range(80)]
        out, _ = holder.communicate(timeout=30)
    finally:
        holder.kill()
    assert served == [200] * 80  # every one of them, while the other process kept the pool full
    assert int(out.split()[-1]) >= 80  # it was pushed out (and came back) at least once per request

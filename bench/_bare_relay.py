"""The baseline the benchmarks compare devhostd with: a pipe relayed to WebSockets, no actors.

    python3 bench/_bare_relay.py CLIENTS [batched|per-frame]   (started by bench/_harness.py's bare_relay())

Prints its port, accepts CLIENTS WebSocket upgrades on 127.0.0.1 (no checks), sends each a
small snapshot, starts bench/fake_claude.py (configured by the same FAKE_CLAUDE_* variables)
on a pipe and, once the last client to connect sends any frame, writes one user message to
the CLI.

One greenlet then relays: it reads what the pipe has (up to 64 KiB, as devhostd's pump does),
wraps each complete line in devhostd's envelope ``{"type":"event","sequence":N,"payload":
<line>}`` as a WebSocket text frame of its own, and writes the frames of that read to every
socket in turn with one sendall each; TCP_NODELAY is on. That is devhostd's I/O pattern (one
write per socket per batch, Nagle off) with everything else taken out: no JSON decoding, no
history, no queues, no actors, no per-socket writer greenlets. It runs until killed.

``per-frame`` is the plain relay anyone would write first, and the baseline the goals were set
against: it reads the pipe a line at a time and writes each frame to each socket with a
sendall of its own (TCP_NODELAY on, so no write waits for an ACK).
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import base64  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import uuid  # noqa: E402

import gevent  # noqa: E402

from _harness import FAKE_CLAUDE, HOST, die_with_parent  # noqa: E402

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SNAPSHOT = b'{"type":"snapshot","session":{},"pendingRequestIds":[],"events":[]}'
READ_BYTES = 64 * 1024


def text_frame(payload: bytes) -> bytes:
    length = len(payload)
    if length < 126:
        return struct.pack("!BB", 0x81, length) + payload
    if length < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, length) + payload
    return struct.pack("!BBQ", 0x81, 127, length) + payload


def accept_websocket(listener: socket.socket) -> socket.socket:
    sock, _ = listener.accept()
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("a client left during the handshake")
        request += chunk
    key = next(line.split(b":", 1)[1].strip() for line in request.split(b"\r\n")
               if line.lower().startswith(b"sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest())
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n" + text_frame(SNAPSHOT))
    return sock


def relay(stdout, sockets: list[socket.socket]) -> None:
    sequence = 0
    partial = b""
    while True:
        data = stdout.read1(READ_BYTES)
        if not data:
            return
        *lines, partial = (partial + data).split(b"\n")  # a line cut by the read waits for the next
        frames = []
        for line in lines:
            raw = line.strip()
            if raw:
                sequence += 1
                frames.append(text_frame(b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw)))
        if frames:
            batch = b"".join(frames)
            for sock in sockets:
                sock.sendall(batch)


def relay_per_frame(stdout, sockets: list[socket.socket]) -> None:
    sequence = 0
    for line in stdout:
        raw = line.strip()
        if not raw:
            continue
        sequence += 1
        frame = text_frame(b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw))
        for sock in sockets:
            sock.sendall(frame)


def main(clients: int, mode: str = "batched") -> int:
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(clients)
    # A SIGTERM (the benchmark stopping us) ends main() through its finally: the CLI goes too.
    gevent.signal_handler(signal.SIGTERM, gevent.kill, gevent.getcurrent(), SystemExit)
    print(listener.getsockname()[1], flush=True)
    cli = subprocess.Popen([sys.executable, str(FAKE_CLAUDE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           preexec_fn=die_with_parent)
    try:
        sockets = [accept_websocket(listener) for _ in range(clients)]
        sockets[-1].recv(65536)  # the trigger: the benchmark's send command (its content is not needed)
        message = {"type": "user", "message": {"role": "user", "content": "go"}, "uuid": str(uuid.uuid4())}
        cli.stdin.write(json.dumps(message).encode() + b"\n")
        cli.stdin.flush()
        (relay_per_frame if mode == "per-frame" else relay)(cli.stdout, sockets)
        gevent.sleep(3600)  # the CLI ended: keep the sockets open until the benchmark stops us
    finally:
        cli.kill()
        cli.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), *sys.argv[2:3]))

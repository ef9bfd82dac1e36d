"""What bench/relay.py and bench/latency.py share: starting and stopping the servers under test
(a real devhostd, or the bare relay of bench/_bare_relay.py), and raw-socket WebSocket sink
clients that count and check every frame.

The sink clients do the WebSocket handshake themselves and then parse frame headers in bulk
from large recv() buffers: a WebSocket library costs tens of microseconds a frame and would
measure itself rather than the server. Every process started here dies with this one
(PR_SET_PDEATHSIG), and is ended by the context managers even on Ctrl-C.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import base64  # noqa: E402
import contextlib  # noqa: E402
import ctypes  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from urllib.parse import urlencode  # noqa: E402

import gevent  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
FAKE_CLAUDE = BENCH / "fake_claude.py"
BARE_RELAY = BENCH / "_bare_relay.py"
HOST = "127.0.0.1"
ROUTED = "app.localhost"
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; Python 3.11 does not name it
RECV_BYTES = 4 << 20
NAP_BELOW = 64 << 10  # a throughput sink whose recv got less than this waits NAP_SECONDS to read more
NAP_SECONDS = 0.001

sys.path.insert(0, str(BENCH))
from fake_claude import frames_per_turn  # noqa: E402,F401  (re-exported for the benchmarks)


def stop_on_sigterm() -> None:
    """A SIGTERM ends the benchmark like a Ctrl-C: through the context managers, which stop
    every server they started (without this, only PR_SET_PDEATHSIG would end them)."""
    gevent.signal_handler(signal.SIGTERM, gevent.kill, gevent.getcurrent(), KeyboardInterrupt)


# ---- processes -------------------------------------------------------------------------------

def die_with_parent() -> None:
    """In a child before exec: if the benchmark is killed outright, the child gets SIGKILL."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def fake_env(frames: int, rate: float = 0) -> dict:
    return {**os.environ, "FAKE_CLAUDE_FRAMES": str(frames), "FAKE_CLAUDE_RATE": str(rate)}


def start(argv: list, env: dict, log_path: Path) -> subprocess.Popen:
    """A server process in a session of its own (a Ctrl-C reaches only this benchmark, which
    then stops the server in order); its first stdout line says where it listens."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=log, start_new_session=True, preexec_fn=die_with_parent)


def first_line(proc: subprocess.Popen, log_path: Path, what: str) -> str:
    try:
        with gevent.Timeout(30):
            line = proc.stdout.readline().decode().strip()
    except gevent.Timeout:
        line = ""
    if not line:
        raise RuntimeError(f"{what} did not start: {log_path.read_text(errors='replace')}")
    return line


def machine_line() -> str:
    """Other work on the machine shows in every figure, the tails most: say how busy it was."""
    load = os.getloadavg()[0]
    return f"(load average {load:.1f} on {os.cpu_count()} CPUs when this run started)"


def stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM (devhostd then closes its sessions and ends their CLIs), SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout:
        proc.stdout.close()


@contextlib.contextmanager
def devhostd(frames: int, rate: float = 0):
    """A real devhostd whose only routed service runs bench/fake_claude.py as Claude Code."""
    with tempfile.TemporaryDirectory(prefix="devhost-bench-") as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        manifest = root / "devhost.toml"
        manifest.write_text(
            'name = "bench"\n'
            f'[services.app]\nhost = "{ROUTED}"\nroot = "project"\n'
            '[devtools.chat]\nprompt = ""\n'  # nothing appended to the benchmark's message
            f'[devtools.chat.claude-code]\ncommand = {json.dumps([sys.executable, str(FAKE_CLAUDE)])}\n')
        log = root / "devhostd.log"
        proc = start([sys.executable, str(REPO / "bin" / "devhostd"), "--host", HOST, "--port", "0",
                      "--config", str(manifest), "--state-dir", str(root / "state")], fake_env(frames, rate), log)
        try:
            line = first_line(proc, log, "devhostd")
            if not line.startswith("devhostd: control origin "):
                raise RuntimeError(f"unexpected first line {line!r}")
            yield Daemon(int(line.rsplit(":", 1)[1]), log)
        except DeliveryError as exc:
            raise DeliveryError(f"{exc}\ndevhostd's log ends:\n{log_tail(log)}") from None
        finally:
            stop(proc)


@contextlib.contextmanager
def bare_relay(clients: int, frames: int, rate: float = 0, mode: str = "batched"):
    """The baseline: bench/_bare_relay.py, pipe to sockets with no actors; yields its port.
    ``mode``: batched (one write per pipe read) or per-frame (one write per frame)."""
    with tempfile.TemporaryDirectory(prefix="devhost-bench-") as tmp:
        log = Path(tmp) / "bare.log"
        proc = start([sys.executable, str(BARE_RELAY), str(clients), mode], fake_env(frames, rate), log)
        try:
            yield int(first_line(proc, log, "the bare relay"))
        finally:
            stop(proc)


def log_tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class Daemon:
    def __init__(self, port: int, log: Path):
        self.port = port
        self.log = log
        self.host = f"{ROUTED}:{port}"  # the routed hostname, as a browser on the page sends it
        self.origin = f"http://{self.host}"
        self.query = urlencode({"pageURL": f"{self.origin}/", "chatTarget": "project"})

    def request(self, method: str, path: str, body=None):
        connection = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            connection.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                               headers={"Host": self.host, "Origin": self.origin,
                                        "Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def create_session(self) -> str:
        status, record = self.request("POST", "/__devhost__/chat/sessions",
                                      {"harness": "claude-code", "pageURL": f"{self.origin}/", "target": "project"})
        if status != 201:
            raise RuntimeError(f"creating a session: {status} {record}")
        return record["id"]

    def wait_idle(self, session_id: str, timeout: float = 20) -> None:
        """Until the CLI answered initialize (the session leaves "starting")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, value = self.request("GET", f"/__devhost__/chat/sessions?{self.query}")
            if any(s["id"] == session_id and s["status"] == "idle" for s in value["sessions"]):
                return
            gevent.sleep(0.05)
        raise RuntimeError(f"session {session_id} did not become idle; devhostd's log ends:\n{log_tail(self.log)}")

    def chat_path(self, session_id: str) -> str:
        return f"/__devhost__/ws/chat?sessionId={session_id}&{self.query}"


# ---- the WebSocket client side -------------------------------------------------------------------

def open_websocket(port: int, host: str, path: str, origin: str | None) -> tuple[socket.socket, bytes]:
    """Connects and upgrades; returns the socket and whatever arrived after the 101's headers."""
    sock = socket.create_connection((HOST, port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if origin:
        lines.append(f"Origin: {origin}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError(f"the server closed the connection during the handshake: {head!r}")
        head += chunk
    head, rest = head.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"upgrade refused: {head.decode(errors='replace')} {rest[:300]!r}")
    sock.settimeout(None)
    return sock, rest


def client_frame(text: str) -> bytes:
    """One masked text frame, as a client must send it."""
    payload = text.encode()
    mask = os.urandom(4)
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x81, 0x80 | length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x81, 0x80 | 126, length)
    else:
        head = struct.pack("!BBQ", 0x81, 0x80 | 127, length)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


def send_message(sock: socket.socket, text: str = "go") -> None:
    sock.sendall(client_frame(json.dumps({"type": "send", "commandId": str(uuid.uuid4()), "text": text})))


class DeliveryError(Exception):
    """The events did not all arrive, in order, on every socket."""


EVENT_PREFIX = b'{"type":"event","sequence":'
NEXT_EVENT = EVENT_PREFIX + b"%d,"
STAMP = b'"fake_sent_ns":'


class FrameReader:
    """Counts the event frames of one socket and checks they arrive complete and in order.

    ``feed`` parses every whole frame in a buffer and returns how many bytes it used; the caller
    keeps the rest for the next recv. Server frames are unmasked. A fragmented message (the
    snapshot) is collected and parsed whole; events then continue after its last sequence.
    With ``stamps`` set, each event carrying the fake CLI's ``fake_sent_ns`` is kept as
    (sequence, sent_ns, received_ns).
    """

    def __init__(self, last_sequence: int, stamps: bool = False):
        self.last_sequence = last_sequence
        self.next_sequence = 1
        self.close_code = None
        self.stamps: list[tuple[int, int, int]] | None = [] if stamps else None
        self._fragments: bytearray | None = None

    @property
    def done(self) -> bool:
        return self.next_sequence > self.last_sequence

    def feed(self, buf: bytearray, end: int, received_ns: int = 0) -> int:
        # The hot path of every benchmark here, at ~1M frames/s: locals only, no call per event.
        pos = 0
        expected = self.next_sequence
        startswith = buf.startswith
        stamps = self.stamps is not None
        try:
            while end - pos >= 2:
                b0, length = buf[pos], buf[pos + 1] & 0x7F
                if length < 126:
                    start = pos + 2
                elif length == 126:
                    if end - pos < 4:
                        break
                    length, start = (buf[pos + 2] << 8) | buf[pos + 3], pos + 4
                else:
                    if end - pos < 10:
                        break
                    length, start = int.from_bytes(buf[pos + 2:pos + 10], "big"), pos + 10
                stop = start + length
                if stop > end:
                    break
                if b0 == 0x81 and startswith(NEXT_EVENT % expected, start):  # a whole message: the next event
                    if stamps:
                        self._stamp(buf, start, stop, expected, received_ns)
                    expected += 1
                else:
                    self.next_sequence = expected
                    self._other(buf, b0, start, stop)
                    expected = self.next_sequence
                pos = stop
        finally:
            self.next_sequence = expected
        return pos

    def _stamp(self, buf, start: int, stop: int, sequence: int, received_ns: int) -> None:
        at = buf.rfind(STAMP, start, stop)
        if at >= 0:
            at += len(STAMP)
            self.stamps.append((sequence, int(buf[at:buf.find(b"}", at, stop)]), received_ns))

    def _other(self, buf, b0: int, start: int, stop: int) -> None:
        """Any frame but a whole event: another message, a fragment, a close, a ping."""
        opcode = b0 & 0x0F
        if opcode == 1 and b0 & 0x80:
            if buf.startswith(EVENT_PREFIX, start):
                raise DeliveryError(f"expected event {self.next_sequence}, got {bytes(buf[start:start + 60])!r}")
            if buf.startswith(b'{"type":"snapshot"', start):
                self._snapshot(bytes(buf[start:stop]))
        elif opcode in (0, 1):
            self._fragment(buf, start, stop, b0 & 0x80)
        elif opcode == 8:
            self.close_code = int.from_bytes(buf[start:start + 2], "big") if stop - start >= 2 else 1005
            raise DeliveryError(f"the server closed the socket ({self.close_code}: "
                                f"{bytes(buf[start + 2:stop]).decode(errors='replace')}) "
                                f"before event {self.next_sequence}")

    def _fragment(self, buf, start: int, stop: int, fin: int) -> None:
        if self._fragments is None:
            self._fragments = bytearray()
        self._fragments += buf[start:stop]
        if fin:
            message, self._fragments = bytes(self._fragments), None
            if message.startswith(b'{"type":"snapshot"'):
                self._snapshot(message)

    def _snapshot(self, message: bytes) -> None:
        """Events already retained come inside the snapshot; live ones continue after them."""
        for event in json.loads(message)["events"]:
            if event["sequence"] != self.next_sequence:
                raise DeliveryError(f"snapshot: expected event {self.next_sequence}, got {event['sequence']}")
            self.next_sequence += 1


class Sink:
    """One raw-socket client: reads until every event up to ``last_sequence`` has arrived.

    With ``kernel_stamps`` the socket asks for SO_TIMESTAMPNS: each recvmsg then says when the
    kernel queued the data on this socket (CLOCK_REALTIME), so a received time does not depend
    on when this process got round to reading it. The time this process read it is kept too.
    """

    def __init__(self, sock: socket.socket, leftover: bytes, last_sequence: int, kernel_stamps: bool = False):
        self.sock = sock
        self.nap = not kernel_stamps  # a latency sink reads at once; a throughput sink reads in bulk
        self.reader = FrameReader(last_sequence, stamps=kernel_stamps)
        self.kernel_stamps = kernel_stamps
        self.finished_at = None  # time.perf_counter() when the last event arrived
        self.wakeups: list[int] = []  # with kernel stamps: read time minus kernel time, per recv
        self._buf = bytearray(RECV_BYTES)
        self._buf[:len(leftover)] = leftover
        self._have = len(leftover)
        if kernel_stamps:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)

    def run(self) -> None:
        self._parse(time.time_ns())
        view = memoryview(self._buf)
        while not self.reader.done:
            if self._have == len(self._buf):  # one frame larger than the buffer: grow it
                view.release()
                self._buf.extend(bytes(len(self._buf)))
                view = memoryview(self._buf)
            before = self._have
            received_ns = self._recv(view)
            small = self._have - before < NAP_BELOW
            self._parse(received_ns)
            if self.nap and small and not self.reader.done:
                # Keeping up with a small recv per frame would cost this process more than the
                # server; a nap lets frames gather in the socket buffer (megabytes on loopback).
                gevent.sleep(NAP_SECONDS)
        self.finished_at = time.perf_counter()

    def _recv(self, view: memoryview) -> int:
        if not self.kernel_stamps:
            count = self.sock.recv_into(view[self._have:])
            received_ns = 0
        else:
            count, ancillary, _, _ = self.sock.recvmsg_into([view[self._have:]], socket.CMSG_SPACE(16))
            read_ns = time.time_ns()
            received_ns = read_ns
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                    seconds, nanoseconds = struct.unpack("qq", data[:16])
                    received_ns = seconds * 1_000_000_000 + nanoseconds
                    self.wakeups.append(read_ns - received_ns)
        if not count:
            raise DeliveryError(f"the server closed the connection before event {self.reader.next_sequence}")
        self._have += count
        return received_ns

    def _parse(self, received_ns: int) -> None:
        used = self.reader.feed(self._buf, self._have, received_ns)
        rest = self._have - used
        if used and rest:
            self._buf[:rest] = self._buf[used:self._have]  # same length: no resize under the view
        self._have = rest

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def connect_sinks(count: int, port: int, host: str, path: str, origin: str | None, last_sequence: int,
                  kernel_stamps: bool = False) -> list[Sink]:
    sinks = []
    try:
        for _ in range(count):
            sock, leftover = open_websocket(port, host, path, origin)
            sinks.append(Sink(sock, leftover, last_sequence, kernel_stamps))
    except BaseException:
        for sink in sinks:
            sink.close()
        raise
    return sinks


def run_sinks(sinks: list[Sink], trigger, timeout: float) -> float:
    """Starts a greenlet per sink, calls ``trigger()`` (which sends the message), and returns the
    seconds from just before the trigger until the last sink has its last event."""
    greenlets = [gevent.spawn(sink.run) for sink in sinks]
    gevent.sleep(0)  # every sink is reading before the turn starts
    started = time.perf_counter()
    trigger()
    try:
        done = gevent.joinall(greenlets, timeout=timeout, raise_error=True)
        if len(done) != len(greenlets):
            counts = [sink.reader.next_sequence - 1 for sink in sinks]
            raise DeliveryError(f"timed out after {timeout:.0f}s; events received per socket: {counts}")
    finally:
        gevent.killall(greenlets)
    return max(sink.finished_at for sink in sinks) - started

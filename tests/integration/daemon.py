"""A real devhostd process for tests, and small HTTP / WebSocket clients that speak to it.

The daemon runs from this checkout (``bin/devhostd``) with an isolated HOME and the real CLIs
first on PATH; the page's hostname is sent in the Host header (``app.localhost:PORT``), as a
browser on a routed hostname would.
"""
from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import gevent
import websocket

REPO = Path(__file__).resolve().parents[2]
DEVHOSTD = REPO / "bin" / "devhostd"


def write_manifest(root: Path, prompt: str | None = None) -> Path:
    """A stack with two routed services: app.localhost -> project/, other.localhost -> other/."""
    (root / "project").mkdir(exist_ok=True)
    (root / "other").mkdir(exist_ok=True)
    text = ('name = "teststack"\n'
            '[services.app]\nhost = "app.localhost"\nroot = "project"\n'
            '[services.other]\nhost = "other.localhost"\nroot = "other"\n')
    if prompt is not None:
        text += f"[devtools.chat]\nprompt = {json.dumps(prompt)}\n"
    path = root / "devhost.toml"
    path.write_text(text)
    return path


class Daemon:
    def __init__(self, env: dict, cwd: Path, config: Path | None, state_dir: Path, code_dir: Path = REPO,
                 port: int = 0):
        """``port``: 0 for a free one; a restarted daemon's earlier port keeps its pages' origins."""
        argv = [sys.executable, str(code_dir / "bin" / "devhostd"), "--port", str(port), "--state-dir", str(state_dir)]
        if config is not None:
            argv += ["--config", str(config)]
        self.state_dir = state_dir
        self.stderr_path = state_dir.parent / f"devhostd-{uuid.uuid4().hex[:6]}.log"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=self._stderr)
        line = b""
        with gevent.Timeout(20, RuntimeError(f"devhostd did not start; log: {self.log()}")):
            line = self.proc.stdout.readline()
        text = line.decode().strip()
        if not text.startswith("devhostd: control origin "):
            raise RuntimeError(f"unexpected first line {text!r}; log: {self.log()}")
        self.control_origin = text.rsplit(" ", 1)[1]
        self.port = int(self.control_origin.rsplit(":", 1)[1])

    @property
    def core_token(self) -> str:
        """The chat core's secret, as the person's own programs read it (storage/core_token.py)."""
        return (self.state_dir / "core-token").read_text().strip()

    def log(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def host(self, hostname: str = "app.localhost") -> str:
        return f"{hostname}:{self.port}"

    def page(self, hostname: str = "app.localhost") -> str:
        return f"http://{hostname}:{self.port}/"

    # ---- HTTP --------------------------------------------------------------------------------

    def request(self, method: str, path: str, body=None, *, host: str | None = None, origin: str | None = "same",
                raw: bytes | None = None, token: str | None = "core"):
        """``token``: the bearer sent to the chat core (``"core"``: its secret; None: none)."""
        host = host or self.host()
        headers = {"Host": host}
        if token is not None and path.startswith("/__devhost__/core"):
            headers["Authorization"] = f"Bearer {self.core_token if token == 'core' else token}"
        if origin == "same":
            origin = f"http://{host}"
        if origin is not None:
            headers["Origin"] = origin
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        try:
            value = json.loads(payload) if payload else None
        except ValueError:
            value = payload.decode(errors="replace")
        return response.status, value

    def query(self, hostname: str = "app.localhost", target: str = "project") -> str:
        from urllib.parse import urlencode
        return urlencode({"pageURL": self.page(hostname), "chatTarget": target})

    def create_session(self, hostname: str = "app.localhost", **fields) -> dict:
        body = {"harness": "claude-code", "pageURL": self.page(hostname), "target": "project", **fields}
        status, record = self.request("POST", "/__devhost__/chat/sessions", body, host=self.host(hostname))
        assert status == 201, (status, record)
        return record

    def sessions(self, hostname: str = "app.localhost") -> list[dict]:
        status, value = self.request("GET", f"/__devhost__/chat/sessions?{self.query(hostname)}",
                                     host=self.host(hostname))
        assert status == 200, (status, value)
        return value["sessions"]

    def close_session(self, session_id: str, hostname: str = "app.localhost"):
        return self.request("POST", f"/__devhost__/chat/sessions/{session_id}/close?{self.query(hostname)}",
                            host=self.host(hostname))

    # ---- WebSocket ---------------------------------------------------------------------------

    def connect(self, session_id: str, hostname: str = "app.localhost", origin: str | None = "same",
                path: str = "chat", extra: str = "") -> "ChatSocket":
        host = self.host(hostname)
        url = f"ws://127.0.0.1:{self.port}/__devhost__/ws/{path}?sessionId={session_id}&{self.query(hostname)}{extra}"
        options = {"host": host, "timeout": 30}
        if origin == "same":
            options["origin"] = f"http://{host}"
        elif origin is not None:
            options["origin"] = origin
        else:
            options["suppress_origin"] = True
        socket = websocket.create_connection(url, **options)
        return ThreadSocket(socket) if path == "thread" else ChatSocket(socket)

    def connect_thread(self, session_id: str, hostname: str = "app.localhost", since: int | None = None,
                       origin: str | None = "same") -> "ThreadSocket":
        """The panel's socket: the conversation's items (a snapshot, or what came after ``since``)."""
        extra = f"&since={since}" if since is not None else ""
        return self.connect(session_id, hostname, origin, path="thread", extra=extra)

    # ---- stopping ----------------------------------------------------------------------------

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr.close()
        return code


class ChatSocket:
    """A page's chat socket: every frame it received is kept, in order."""

    def __init__(self, ws: websocket.WebSocket):
        self.ws = ws
        self.frames: list[dict] = []
        self.close_code = None
        self.snapshot = self.next()
        assert self.snapshot["type"] == "snapshot", self.snapshot

    def send(self, value) -> None:
        self.ws.send(value if isinstance(value, str) else json.dumps(value))

    def send_message(self, text: str, command_id: str | None = None, **fields) -> str:
        command_id = command_id or str(uuid.uuid4())
        self.send({"type": "send", "commandId": command_id, "text": text, **fields})
        return command_id

    def next(self, timeout: float = 60) -> dict:
        self.ws.settimeout(timeout)
        opcode, data = self.ws.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.close_code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
            raise ConnectionClosed(self.close_code)
        frame = json.loads(data)
        self.frames.append(frame)
        return frame

    def wait_for(self, predicate, timeout: float = 60, what: str = "a frame") -> dict:
        for frame in self.frames:
            if predicate(frame):
                return frame
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; got {[_short(f) for f in self.frames[-15:]]}")
            frame = self.next(timeout=remaining)
            if predicate(frame):
                return frame

    def result_for(self, command_id: str, timeout: float = 60) -> dict:
        return self.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id, timeout,
                             f"command_result {command_id}")

    def wait_event(self, predicate, timeout: float = 60, what: str = "an event") -> dict:
        return self.wait_for(lambda f: f["type"] == "event" and predicate(f["payload"]), timeout, what)["payload"]

    def wait_status(self, status: str, timeout: float = 60) -> dict:
        return self.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == status, timeout,
                             f"status {status}")

    def wait_closed(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self.next(timeout=max(0.1, deadline - time.monotonic()))
        except ConnectionClosed as closed:
            return closed.code
        raise AssertionError("the socket did not close")

    def events(self) -> list[dict]:
        return [f["payload"] for f in self.frames if f["type"] == "event"]

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass


class ThreadSocket(ChatSocket):
    """The panel's thread socket: it starts with a snapshot of items, or ``resumed``."""

    FIRST = ("snapshot", "resumed")

    def __init__(self, ws: websocket.WebSocket):
        self.ws = ws
        self.frames: list[dict] = []
        self.close_code = None
        self.snapshot = self.next()
        assert self.snapshot["type"] in self.FIRST, self.snapshot

    def wait_item(self, predicate, timeout: float = 60, what: str = "an item") -> dict:
        """The first ``item`` event whose item matches (already received ones count)."""
        return self.wait_for(lambda f: f["type"] == "event" and f["event"]["type"] == "item"
                             and predicate(f["event"]["item"]), timeout, what)["event"]["item"]

    def items(self) -> dict[str, dict]:
        """Every item as this socket knows it: the snapshot's, then each event applied."""
        found = {item["id"]: dict(item) for item in self.snapshot.get("items", [])}
        for f in self.frames:
            if f["type"] != "event":
                continue
            event = f["event"]
            if event["type"] == "item":
                found[event["item"]["id"]] = dict(event["item"])
            elif event["type"] == "delta" and event["itemId"] in found:
                found[event["itemId"]]["text"] = found[event["itemId"]].get("text", "") + event["text"]
            elif event["type"] == "reset":
                found = {}
        return found


class ConnectionClosed(Exception):
    def __init__(self, code):
        super().__init__(f"socket closed with {code}")
        self.code = code


def _short(frame: dict) -> str:
    if frame.get("type") == "event" and "event" in frame:
        event = frame["event"]
        return f"event:{event['type']}/{event.get('item', {}).get('kind', '')}"
    if frame.get("type") == "event":
        payload = frame["payload"]
        return f"event:{payload.get('type')}/{payload.get('subtype') or payload.get('state') or ''}"
    if frame.get("type") == "state":
        return f"state:{frame['session']['status']}"
    return json.dumps(frame)[:160]


def wait_until(predicate, timeout: float = 30, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (the tests' own unique strings)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and int(name) != os.getpid():
            found.append(int(name))
    return found


def processes_with_env(entry: str) -> list[int]:
    """Pids whose environment holds ``entry`` (e.g. ``HOME=/tmp/...``): what a daemon started."""
    needle = b"\0" + entry.encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = b"\0" + handle.read()
        except OSError:
            continue
        if needle in environ:
            found.append(int(name))
    return found


def tagged_processes(session_id: str) -> list[int]:
    """Pids carrying the process tag devhostd gives a session's CLI (and its descendants)."""
    from actors.proctree import TAG_ENV
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                entries = handle.read().split(b"\0")
        except OSError:
            continue
        for entry in entries:
            if entry.startswith(TAG_ENV.encode() + b"=") and f".{session_id}.".encode() in entry:
                found.append(int(name))
    return found

"""Opening a long conversation in the panel: the first frame of a thread-socket attach of a chat
of N items (default 10,000), against reading the same bytes from a file, and the hub's blocks.

    python3 bench/attach.py [items]

A real devhostd runs bench/fake_claude.py as Claude Code for one real turn, is stopped, and its
chat's record (storage/chat_store.py) gets N items of before put ahead of that turn (turns of
a question, a tool call, an answer); a second devhostd reads it back, with gevent's monitor
reporting every greenlet that holds the hub past 20 ms (GEVENT_MAX_BLOCKING_TIME=0.02).

Measured (the fastest of ROUNDS, after the cold attach that loads the chat from disk):
- paged: ``historyLimit=100`` (what the panel asks): from the connect until the snapshot frame
  is whole, against reading that frame's bytes from a file (open + read: the goal is 1.2x or
  less; a connection's own round trips are most of it), and against reading and parsing the
  chat's record file (what showing the chat off the disk would cost);
- whole: no ``historyLimit`` (a client that does not page): the snapshot of every item, the
  same two baselines;
- since: a reconnect that missed nothing (``since`` = the chat's seq): until ``resumed``;
- the rest paged: every older page asked with ``history`` until the cursor runs out;
and how many blocking reports the monitor printed during each (the goal: none).
"""
from __future__ import annotations

# _harness first: gevent patches the process before anything else is imported.
from _harness import (FAKE_CLAUDE, HOST, ROUTED, REPO, Daemon, client_frame, fake_env, first_line,
                      log_tail, machine_line, open_websocket, send_message, start, stop, stop_on_sigterm)

import json
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path


ROUNDS = 5
PAGE = 100
BLOCKED = "the hub was blocked for"  # web/hub_monitor.py's line in the daemon's log, one a block


class Frames:
    """Server frames of one WebSocket (unmasked, unfragmented: what devhostd sends)."""

    def __init__(self, sock: socket.socket, rest: bytes):
        self.sock, self.buffer = sock, bytearray(rest)

    def _fill(self, size: int) -> None:
        while len(self.buffer) < size:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the socket closed")
            self.buffer += chunk

    def next(self) -> bytes:
        self._fill(2)
        length, at = self.buffer[1] & 0x7F, 2
        if length == 126:
            self._fill(4)
            length, at = struct.unpack_from("!H", self.buffer, 2)[0], 4
        elif length == 127:
            self._fill(10)
            length, at = struct.unpack_from("!Q", self.buffer, 2)[0], 10
        self._fill(at + length)
        payload = bytes(self.buffer[at:at + length])
        del self.buffer[:at + length]
        return payload


class Probe:
    """The hub seen from outside, while a phase runs (bench/_probe.py, in a process of its own):
    its slowest answer bounds how long the hub was held. gevent's monitor cannot see a block
    inside one long C call (a json.dumps holds the GIL, so its thread does not run to look):
    this does."""

    def __init__(self, daemon: Daemon):
        self.daemon, self.slowest, self._process = daemon, 0.0, None

    def __enter__(self):
        self._process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_probe.py")), HOST,
                                          str(self.daemon.port), self.daemon.host],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._process.stdout.readline()  # "ready"
        return self

    def __exit__(self, *exc):
        out, _ = self._process.communicate("", timeout=30)
        self.slowest = float(out.strip() or 0)


def old_items(count: int) -> list[dict]:
    items, n = [], 0
    while len(items) < count:
        turn = f"turn-old-{n}"
        items += [{"id": turn, "kind": "turn", "state": "done", "origin": "user", "createdAt": 1_700_000_000_000 + n},
                  {"id": f"user-old-{n}", "kind": "user", "turnId": turn, "text": f"Question {n}: what does it do?"},
                  {"id": f"tool-old-{n}", "kind": "tool", "turnId": turn, "name": "Read", "toolUseId": f"toolu_{n}",
                   "input": {"file_path": f"/tmp/project/src/module_{n}.py"}, "state": "done",
                   "output": "def f():\n    return 1\n" * 8},
                  {"id": f"assistant-old-{n}", "kind": "assistant", "turnId": turn, "streaming": False,
                   "text": f"Answer {n}. " + "It reads the module and returns one, as the file says. " * 8}]
        n += 1
    return items[:count]


def running(root: Path, manifest: Path, env: dict, log: Path):
    proc = start([sys.executable, str(REPO / "bin" / "devhostd"), "--host", HOST, "--port", "0",
                  "--config", str(manifest), "--state-dir", str(root / "state")], env, log)
    line = first_line(proc, log, "devhostd")
    return proc, Daemon(int(line.rsplit(":", 1)[1]), log)


def thread_path(daemon: Daemon, session: str, extra: str = "") -> str:
    return f"/__devhost__/ws/thread?sessionId={session}&{daemon.query}{extra}"


def one_turn(daemon: Daemon) -> None:
    session = daemon.create_session()
    daemon.wait_idle(session)
    sock, rest = open_websocket(daemon.port, daemon.host, thread_path(daemon, session), daemon.origin)
    frames = Frames(sock, rest)
    frames.next()  # the snapshot
    send_message(sock, "the newest question")
    deadline = time.monotonic() + 30
    while b'"kind":"changes"' not in frames.next():  # a turn's last item
        if time.monotonic() > deadline:
            raise RuntimeError(f"the turn did not end; devhostd's log ends:\n{log_tail(daemon.log)}")
    sock.close()


def first_frame(daemon: Daemon, session: str, extra: str) -> tuple[float, bytes, Frames]:
    start_at = time.perf_counter()
    sock, rest = open_websocket(daemon.port, daemon.host, thread_path(daemon, session, extra), daemon.origin)
    frames = Frames(sock, rest)
    payload = frames.next()
    return time.perf_counter() - start_at, payload, frames


def file_read(path: Path, parse: bool = False) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start_at = time.perf_counter()
        with open(path, "rb") as handle:
            data = handle.read()
        if parse:
            json.loads(data)
        best = min(best, time.perf_counter() - start_at)
    return best


def blocks(log: Path) -> int:
    """The blocks logged so far: the hub writes a block's line once it runs again, so a moment
    is given for the last one to land."""
    time.sleep(0.3)
    return log.read_text(errors="replace").count(BLOCKED)


def main(count: int) -> None:
    stop_on_sigterm()
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="devhost-bench-") as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        manifest = root / "devhost.toml"
        manifest.write_text(
            'name = "bench"\n'
            f'[services.app]\nhost = "{ROUTED}"\nroot = "project"\n'
            '[devtools.chat]\nprompt = ""\n'
            f'[devtools.chat.claude-code]\ncommand = {json.dumps([sys.executable, str(FAKE_CLAUDE)])}\n')
        proc, daemon = running(root, manifest, fake_env(20), root / "first.log")
        try:
            one_turn(daemon)
        finally:
            stop(proc)
        [record_path] = (root / "state" / "core" / "chats").glob("c-*.json")
        record = json.loads(record_path.read_text())
        record["items"] = old_items(count) + record["items"]
        record_path.write_text(json.dumps(record, separators=(",", ":")))
        print(f"items: {len(record['items'])}, record {record_path.stat().st_size / 1e6:.1f} MB")

        env = {**fake_env(20), "GEVENT_MONITOR_THREAD_ENABLE": "true", "GEVENT_MAX_BLOCKING_TIME": "0.02"}
        log = root / "second.log"
        proc, daemon = running(root, manifest, env, log)
        try:
            _, value = daemon.request("GET", f"/__devhost__/chat/sessions?{daemon.query}")
            [session] = [s["id"] for s in value["sessions"]]
            results = {"start": (0, blocks(log))}
            before = results["start"][1]
            probe = Probe(daemon)
            with probe:
                cold, _, frames = first_frame(daemon, session, f"&historyLimit={PAGE}")
                frames.sock.close()
            results["cold"] = (cold, blocks(log) - before, probe.slowest)
            for name, extra in (("paged", f"&historyLimit={PAGE}"), ("whole", "")):
                before, best, payload = blocks(log), float("inf"), b""
                with probe:
                    for _ in range(ROUNDS):
                        seconds, payload, frames = first_frame(daemon, session, extra)
                        frames.sock.close()
                        best = min(best, seconds)
                path = root / f"{name}.frame"
                path.write_bytes(payload)
                results[name] = (best, blocks(log) - before, probe.slowest, payload)
            seq = json.loads(results["paged"][3])["seq"]
            before, best = blocks(log), float("inf")
            with probe:
                for _ in range(ROUNDS):
                    seconds, payload, frames = first_frame(daemon, session, f"&since={seq}&historyLimit={PAGE}")
                    frames.sock.close()
                    assert json.loads(payload)["type"] == "resumed", payload[:200]
                    best = min(best, seconds)
            results["since"] = (best, blocks(log) - before, probe.slowest)

            before = blocks(log)
            probe.__enter__()
            start_at = time.perf_counter()
            _, payload, frames = first_frame(daemon, session, f"&historyLimit={PAGE}")
            cursor, pages, items = json.loads(payload)["history"]["cursor"], 0, len(json.loads(payload)["items"])
            while cursor is not None:
                frames.sock.sendall(client_frame(json.dumps({"type": "history", "cursor": cursor, "limit": PAGE})))
                answer = json.loads(frames.next())
                while answer.get("type") != "history":
                    answer = json.loads(frames.next())
                cursor, pages, items = answer["history"]["cursor"], pages + 1, items + len(answer["items"])
            frames.sock.close()
            rest = time.perf_counter() - start_at
            probe.__exit__()
            results["rest"] = (rest, blocks(log) - before, probe.slowest)
        finally:
            stop(proc)

        record_read = file_read(record_path, parse=True)
        print(f"reading the chat's record file (read + parse): {record_read * 1e3:.2f} ms")
        print(f"hub blocks over 20 ms while the daemon started (reading every chat's info): {results['start'][1]}")
        def hub(name):
            return f"hub blocks over 20 ms: {results[name][1]}, slowest probe {results[name][2] * 1e3:.1f} ms"
        print(f"cold attach (the first one), paged: {results['cold'][0] * 1e3:.1f} ms; {hub('cold')}")
        for name in ("paged", "whole"):
            seconds, payload = results[name][0], results[name][3]
            same = file_read(root / f"{name}.frame")
            print(f"{name}: first frame ({len(payload) / 1e3:.0f} kB) in {seconds * 1e3:.2f} ms; "
                  f"/ reading its bytes from a file {seconds / same:.1f}x; "
                  f"/ reading the record file {seconds / record_read:.2f}x; {hub(name)}")
        print(f"since (missed nothing): resumed in {results['since'][0] * 1e3:.2f} ms; {hub('since')}")
        print(f"the rest paged: {pages} pages, {items} items in {results['rest'][0] * 1e3:.0f} ms; {hub('rest')}")
        if blocks(log):
            print("blocks:\n" + "\n".join(line[:400] for line in log.read_text(errors="replace").splitlines()
                                           if BLOCKED in line))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)

"""Agents laid out as the reference records them, for the scanner's tests and benchmark.

- ``Agents`` starts processes and ends every one of them (``stop_all``, called by fixtures in
  a ``finally``): fake agents are copies of /bin/sleep named like the harness (``pi``,
  ``opencode``, ``claude``, ``codex``), so /proc shows exactly the comm a real one has.
- ``ClaudeRun`` is the real ``claude`` CLI in stream-json mode against the tests' mock model.
- The writers put sessions where each harness keeps them, in the formats of the trimmed real
  transcripts in tests/fixtures/transcripts/.
"""
from __future__ import annotations

import json
import shutil
import sqlite3
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import gevent
from gevent import subprocess

from actors import proctree
from actors.agents.claude import slug
from actors.agents.pi import folder_name
from tests.peers import CLAUDE, claude_env

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
TAG_NAME = "DEVHOST_TEST_AGENT"  # not devhost's own tag: these agents are nobody's chat sessions


def iso(ms: int | None = None) -> str:
    ms = int(time.time() * 1000) if ms is None else ms
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def start_ticks(pid: int) -> int:
    return proctree.read_stat(pid).start_time


class Agents:
    """Processes a test starts; ``stop_all`` ends every one and everything they started."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.bin = self.root / "fake-bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.procs: list[tuple[object, tuple[str, str]]] = []

    def executable(self, name: str, source: str = "/bin/sleep") -> Path:
        path = self.bin / name
        if not path.exists():
            shutil.copy(source, path)
            path.chmod(0o755)
        return path

    def start(self, argv, cwd, env, **options):
        tag = (TAG_NAME, uuid.uuid4().hex)
        env = {**env, tag[0]: tag[1]}
        proc = subprocess.Popen([str(a) for a in argv], cwd=str(cwd), env=env, start_new_session=True, **options)
        self.procs.append((proc, tag))
        return proc

    def fake(self, name: str, cwd, home, extra_env=None, **options):
        """A process that looks like harness ``name`` in /proc, idling in ``cwd``."""
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin", **(extra_env or {})}
        proc = self.start([self.executable(name), "3600"], cwd, env, **options)
        wait_for_comm(proc.pid, name)
        return proc

    def stop(self, proc) -> None:
        for index, (known, tag) in enumerate(self.procs):
            if known is proc:
                self.procs.pop(index)
                _end(proc, tag)
                return

    def stop_all(self) -> None:
        while self.procs:
            proc, tag = self.procs.pop()
            try:
                _end(proc, tag)
            except Exception:  # noqa: BLE001 - keep ending the others
                pass


def _end(proc, tag) -> None:
    # A fake has no stdin to close: straight to SIGTERM. A real CLI gets its stdin closed first.
    grace = 0.5 if proc.stdin is not None else 0.0
    proctree.terminate(proc, tag, stdin_grace=grace, term_grace=2, kill_grace=2)


def wait_for_comm(pid: int, name: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = proctree.read_stat(pid)
        if st is not None and st.comm == name:
            return
        gevent.sleep(0.02)
    raise AssertionError(f"process {pid} never showed up as {name!r}")


# --------------------------------------------------------------------------- pi

def pi_session_path(home: Path, cwd: Path, began_ms: int | None = None, session_id: str | None = None) -> Path:
    began_ms = began_ms or int(time.time() * 1000)
    session_id = session_id or str(uuid.uuid4())
    folder = Path(home) / ".pi" / "agent" / "sessions" / folder_name(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{iso(began_ms).replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def pi_header(cwd: Path, began_ms: int | None = None, session_id: str | None = None) -> dict:
    return {"type": "session", "version": 3, "id": session_id or str(uuid.uuid4()), "timestamp": iso(began_ms),
            "cwd": str(cwd)}


def pi_message(role: str, *, text: str | None = None, stop: str | None = None, tool: str | None = None,
               ms: int | None = None, **fields) -> dict:
    """One entry as pi writes it (see fixtures/transcripts/pi/)."""
    message: dict = {"role": role, "timestamp": ms or int(time.time() * 1000)}
    if role == "user":
        message["content"] = [{"type": "text", "text": text or ""}]
    elif role == "assistant":
        content = []
        if text is not None:
            content.append({"type": "text", "text": text})
        if tool:
            content.append({"type": "toolCall", "id": f"call_{uuid.uuid4().hex[:6]}", "name": tool,
                            "arguments": fields.pop("arguments", {})})
        message.update(content=content, api="openai-completions", provider="mock", model="mock-model",
                       stopReason=stop or ("toolUse" if tool else "stop"))
    elif role == "toolResult":
        message.update(toolCallId=fields.pop("call_id", "call_x"), toolName=tool or "bash",
                       content=[{"type": "text", "text": text or ""}], isError=fields.pop("is_error", False))
    message.update(fields)
    return {"type": "message", "id": uuid.uuid4().hex[:8], "parentId": None, "timestamp": iso(ms), "message": message}


def append_jsonl(path: Path, *records) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- claude

def claude_registry(home: Path, pid: int, session_id: str, cwd: Path, status: str = "idle", **fields) -> Path:
    """``~/.claude/sessions/<pid>.json`` as 2.1.328 writes it (fixtures/.../sessions-pid-json/)."""
    folder = Path(home) / ".claude" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    entry = {"pid": pid, "sessionId": session_id, "cwd": str(cwd), "startedAt": now,
             "procStart": str(start_ticks(pid)), "version": "2.1.328", "kind": "interactive", "entrypoint": "cli",
             "name": "derived-name", "nameSource": "derived", "status": status, "updatedAt": now,
             "statusUpdatedAt": now, **fields}
    path = folder / f"{pid}.json"
    path.write_text(json.dumps(entry))
    return path


def claude_transcript(home: Path, cwd: Path, session_id: str) -> Path:
    folder = Path(home) / ".claude" / "projects" / slug(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}.jsonl"


def claude_record(kind: str, *, text: str | None = None, tool: str | None = None, stop: str | None = None,
                  ms: int | None = None, session_id: str = "s", cwd: str = "/", **fields) -> dict:
    """A conversational record shaped like fixtures/transcripts/claude-code/."""
    base = {"parentUuid": None, "isSidechain": False, "type": kind, "uuid": str(uuid.uuid4()), "timestamp": iso(ms),
            "userType": "external", "entrypoint": "cli", "cwd": cwd, "sessionId": session_id, "version": "2.1.328"}
    if kind == "user":
        if tool:
            base["message"] = {"role": "user", "content": [{"tool_use_id": tool, "type": "tool_result",
                                                            "content": text or "", "is_error": False}]}
        else:
            base["message"] = {"role": "user", "content": text or ""}
    elif kind == "assistant":
        block = ({"type": "tool_use", "id": fields.pop("tool_id", "toolu_1"), "name": tool,
                  "input": fields.pop("input", {})} if tool else {"type": "text", "text": text or ""})
        base["message"] = {"model": "mock", "id": "msg_1", "type": "message", "role": "assistant",
                           "content": [block], "stop_reason": stop or ("tool_use" if tool else "end_turn")}
    base.update(fields)
    return base


class ClaudeRun:
    """The real claude CLI in stream-json mode (as devhost runs it), against ``mock``."""

    def __init__(self, agents: Agents, home: Path, cwd: Path, mock_url: str):
        self.env = claude_env(home, mock_url)
        argv = [CLAUDE, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                "--permission-prompt-tool", "stdio"]
        self.proc = agents.start(argv, cwd, self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        self.frames: list[dict] = []
        self._reader = gevent.spawn(self._read)

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.frames.append(json.loads(line))
            except ValueError:
                continue

    def send(self, text: str) -> None:
        frame = {"type": "user", "message": {"role": "user", "content": text}}
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, predicate, timeout: float = 60, what: str = "a frame") -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for frame in self.frames:
                if predicate(frame):
                    return frame
            gevent.sleep(0.05)
        raise AssertionError(f"claude never sent {what}; got {[f.get('type') for f in self.frames]}")

    def allow(self, request: dict) -> None:
        answer = {"type": "control_response", "response": {"subtype": "success", "request_id": request["request_id"],
                  "response": {"behavior": "allow", "updatedInput": request["request"]["input"]}}}
        self.proc.stdin.write(json.dumps(answer).encode() + b"\n")
        self.proc.stdin.flush()


# --------------------------------------------------------------------------- opencode

def opencode_db(home: Path) -> Path:
    """An OpenCode database with the real schema (fixtures/transcripts/opencode/schema.sql)."""
    path = Path(home) / ".local" / "share" / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript((FIXTURES / "opencode" / "schema.sql").read_text())
    connection.commit()
    connection.close()
    return path


def opencode_rows(name: str, directory: Path, shift_ms: int = 0) -> list[dict]:
    """The rows of a recorded session, moved to ``directory`` and ``shift_ms`` later."""
    rows = []
    for line in (FIXTURES / "opencode" / name).read_text().splitlines():
        row = json.loads(line)
        text = json.dumps(row).replace("/home/dev/tmp/exp/proj-d", str(directory))
        row = json.loads(text)
        for key in ("time_created", "time_updated"):
            if isinstance(row.get(key), int):
                row[key] += shift_ms
        rows.append(row)
    return rows


def opencode_insert(path: Path, rows: list[dict]) -> None:
    connection = sqlite3.connect(path)
    try:
        for row in rows:
            table = row["table"]
            fields = {k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in row.items() if k != "table"}
            if table == "event":
                connection.execute("INSERT OR IGNORE INTO event_sequence (aggregate_id, seq) VALUES (?, ?)",
                                   (fields["aggregate_id"], fields["seq"]))
            if table == "session":
                connection.execute("INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, "
                                   "sandboxes) VALUES (?, '/', 0, 0, '[]')", (fields["project_id"],))
            names = ", ".join(fields)
            marks = ", ".join("?" * len(fields))
            connection.execute(f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({marks})", list(fields.values()))
        connection.commit()
    finally:
        connection.close()

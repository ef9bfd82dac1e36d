"""pi (``@mariozechner/pi-coding-agent``): its session files, their entries as events, its state.

From its source and observed on 0.73.1 (tests/fixtures/transcripts/pi/ has samples):
- Sessions live in ``$PI_CODING_AGENT_SESSION_DIR`` or ``<agent dir>/sessions`` (agent dir =
  ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), one folder per working directory named
  ``--<cwd without its leading slash, / \\ : as ->--``; a file per session whose first line is
  the header ``{"type": "session", "version": 3, "id", "timestamp", "cwd"}``.
- Nothing is written until the first assistant message exists; entries are appended whole
  (no fd kept open); some operations rewrite the file.
- The process (comm ``pi``) has no fd or argument naming its file, so a process gets the file
  of its folder whose header began when it started (or, for a resumed session, the one
  written since it started); no file goes to two processes.
- A name is the last ``session_info.name``. pi has no approvals: it is never ``waiting``.
"""
from __future__ import annotations

import os
import re

from actors.agents import events as ev
from actors.agents.jsonl import Summary, read_first_line
from actors.agents.rows import Found, match_sessions

HARNESS = "pi"
_HEAD_ROLE = re.compile(rb'"role"\s*:\s*"(user|assistant|toolResult)"')
_IDLE_STOPS = frozenset({"stop", "length", "error", "aborted"})


def sessions_dir(env: dict, home: str) -> str:
    if env.get("PI_CODING_AGENT_SESSION_DIR"):
        return env["PI_CODING_AGENT_SESSION_DIR"]
    agent_dir = env.get("PI_CODING_AGENT_DIR") or os.path.join(env.get("HOME") or home, ".pi", "agent")
    return os.path.join(agent_dir, "sessions")


def folder_name(cwd: str) -> str:
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


class PiSummary(Summary):
    def __init__(self):
        super().__init__()
        self.last: tuple[str, str | None] | None = None

    def feed(self, record: dict) -> None:
        ms = ev.iso_ms(record.get("timestamp"))
        if ms is not None:
            self.last_ms = max(self.last_ms or 0, ms)
        kind = record.get("type")
        if kind == "session":
            self.last = self.last or ("fresh", None)
        elif kind == "session_info":
            if isinstance(record.get("name"), str) and record["name"].strip():
                self.name = record["name"].strip()
        elif kind == "message" and isinstance(record.get("message"), dict):
            message = record["message"]
            self.last = (message.get("role"), message.get("stopReason"))
            self.decisive = True

    def feed_long(self, head: bytes) -> None:
        role = _HEAD_ROLE.search(head)
        if role:
            self.last = (role.group(1).decode(), None)
            self.decisive = True


def state(summary: PiSummary | None) -> str:
    if summary is None or summary.last is None:
        return "unknown"
    role, stop = summary.last
    if role == "fresh":
        return "idle"
    if role == "assistant" and stop in _IDLE_STOPS:
        return "idle"
    return "working"


class PiParser:
    def events(self, record: dict) -> list[dict]:
        kind = record.get("type")
        ms = ev.iso_ms(record.get("timestamp"))
        if kind == "model_change":
            model = record.get("modelId")
            return [ev.event("model_change", ms, text=str(model))] if model else []
        if kind != "message" or not isinstance(record.get("message"), dict):
            return []
        message = record["message"]
        role = message.get("role")
        if role == "user":
            text = ev.text_of(message.get("content"))
            return [ev.event("turn_start", ms, role="user", text=text)] if text.strip() else []
        if role == "toolResult":
            return [ev.event("tool_result", ms, role="tool", tool_name=message.get("toolName"),
                             text=ev.text_of(message.get("content")), is_error=bool(message.get("isError")))]
        if role != "assistant":
            return []
        found = []
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        stop = message.get("stopReason")
        last_text = max((i for i, b in enumerate(blocks) if b.get("type") == "text"), default=-1)
        for index, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text":
                final = index == last_text and stop in ("stop", "length")
                found.append(ev.event("turn_end" if final else "agent_message", ms, role="assistant",
                                      text=block.get("text") or ""))
            elif kind == "thinking":
                found.append(ev.event("thinking", ms, role="assistant", text=block.get("thinking") or ""))
            elif kind == "toolCall":
                found.append(ev.event("tool_call", ms, role="assistant", tool_name=block.get("name"),
                                      text=ev.tool_summary(block.get("arguments"))))
        if stop in ("error", "aborted"):
            found.append(ev.event("error", ms, text=message.get("errorMessage") or stop, is_error=True))
        return found


# --------------------------------------------------------------------------- scanning

def find(agents, summaries, headers: dict, home_of, now_ms: int):
    """Rows for pi processes. ``headers`` caches session headers by (path, inode)."""
    found, errors = [], []
    groups: dict[tuple[str, str], list] = {}
    for agent in agents:
        row = Found(HARNESS, agent.pid, agent.start_time, agent.cwd, last_activity=agent.start_ms)
        found.append(row)
        folder = os.path.join(sessions_dir(agent.env, home_of(agent)), folder_name(agent.cwd))
        groups.setdefault((folder, agent.cwd), []).append((agent, row))
    for (folder, cwd), members in groups.items():
        try:
            sessions = [s for s in _sessions(folder, headers) if s[3] == cwd]
        except OSError as exc:
            errors.append(f"its sessions folder cannot be read ({exc.strerror or exc})")
            continue
        paths = match_sessions([(a.pid, a.start_ms) for a, _ in members], [(s[0], s[1], s[2]) for s in sessions])
        for agent, row in members:
            path = paths.get(agent.pid)
            if path is None:
                continue
            try:
                summary = summaries.get(path, PiSummary)
            except OSError as exc:
                errors.append(f"a session file cannot be read ({exc.strerror or exc})")
                continue
            row.transcript = path
            row.state = state(summary)
            row.session_id = headers.get(path, (0, {}))[1].get("id")
            if summary is not None:
                row.name = summary.name
                row.last_activity = max(row.last_activity, summary.last_ms or 0)
    return found, errors


def _sessions(folder: str, headers: dict) -> list[tuple]:
    """(path, header start ms, mtime ms, cwd) for each session file of a folder."""
    sessions = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return sessions
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        st = entry.stat()
        cached = headers.get(entry.path)
        if not cached or cached[0] != st.st_ino:
            header = read_first_line(entry.path) or {}
            cached = (st.st_ino, header if header.get("type") == "session" else {})
            headers[entry.path] = cached
        header = cached[1]
        if header:
            sessions.append((entry.path, ev.iso_ms(header.get("timestamp")) or 0, int(st.st_mtime * 1000),
                             header.get("cwd")))
    return sessions

"""The agents list: what one found agent becomes as a row, which rows a directory sees, the order.

A row is ``{key, harness, state, name?, subdirectory, lastActivity, isOwned}``: no transcript
path and no native session id (page scripts can read the list). ``key`` is a digest of the
process identity (pid and start time, plus the thread for an app-server's threads after its
first, so a server's first thread keeps the key the server had before it), so it stays the
same while the agent runs and changes when a pid is reused.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from actors.agents import STATES

RANK = {state: rank for rank, state in enumerate(STATES)}


@dataclass
class Found:
    """One agent a scan found. Everything but the row fields stays inside the daemon."""
    harness: str
    pid: int
    start_time: int
    cwd: str
    state: str = "unknown"
    name: str | None = None
    last_activity: int = 0
    thread: str = ""  # a codex app-server's thread id past its first: one server, several rows
    session_id: str | None = None  # the harness's own session id
    transcript: str | None = None  # the JSONL file the stream tails
    source: tuple | None = None  # OpenCode: (database path, session id)
    chat: str | None = None  # the devhost session whose CLI this is (isOwned)
    facts: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        ident = f"{self.harness}\0{self.pid}\0{self.start_time}\0{self.thread}".encode()
        return hashlib.sha256(ident).hexdigest()[:16]

    @property
    def follow(self):
        """What the activity stream tails for this agent (None: nothing to read yet)."""
        if self.transcript:
            return ("file", self.transcript)
        if self.source:
            return ("opencode", *self.source)
        return None


def inside(path: str, directory: str) -> bool:
    directory = directory.rstrip("/") or "/"
    return path == directory or path.startswith(directory + "/") or directory == "/"


def subdirectory(path: str, directory: str) -> str:
    return "." if path == directory.rstrip("/") else os.path.relpath(path, directory)


def row(found: Found, directory: str) -> dict:
    shaped = {"key": found.key, "harness": found.harness, "state": found.state}
    if found.name:
        shaped["name"] = found.name
    shaped.update(subdirectory=subdirectory(found.cwd, directory), lastActivity=int(found.last_activity),
                  isOwned=found.chat is not None)
    return shaped


def order_key(shaped: dict):
    return RANK.get(shaped["state"], RANK["unknown"]), -shaped["lastActivity"], shaped["key"]


def rows_for(agents, directory: str) -> list[tuple[dict, str | None]]:
    """(row, devhost session id or None) of every agent in ``directory`` or below, in order."""
    picked = [(row(found, directory), found.chat) for found in agents if inside(found.cwd, directory)]
    picked.sort(key=lambda pair: order_key(pair[0]))
    return picked


# A chat session's own status is exact; it replaces what its transcript suggests.
_CHAT_STATES = {"requires_action": "waiting", "running": "working", "idle": "idle", "error": "idle"}


def refine(rows: list[tuple[dict, str | None]], chat_status: dict[str, str],
           background: dict[str, int] | None = None) -> list[dict]:
    """The rows, each owned one with the state its chat session reports, re-ordered. A chat
    idle with work still running in the background (a subagent, a shell) is working, and the
    row says how much runs there (``background``); its subagents are never rows of their own."""
    refined = []
    for shaped, chat in rows:
        state = _CHAT_STATES.get(chat_status.get(chat)) if chat else None
        running = (background or {}).get(chat, 0) if chat else 0
        if running and state == "idle":
            state = "working"
        row = {**shaped, "state": state} if state else dict(shaped)
        if running:
            row["background"] = running
        refined.append(row)
    refined.sort(key=order_key)
    return refined


START_SLACK_MS = 1000  # a session's own clock starts a moment after its process


def match_sessions(processes: list[tuple[int, int]], sessions: list[tuple[object, int, int]]) -> dict[int, object]:
    """Which session each process runs, for harnesses whose processes name none (pi, OpenCode).

    ``processes``: (pid, start ms), all in one folder; ``sessions``: (id, began ms, last
    active ms) of that folder. A session that began after a process started belongs to the
    newest such process (a process that started later cannot have begun it); each process
    takes the most recently active of its sessions. A process left without one takes, newest
    process first, the most recently active session begun earlier and active since it started
    (a resumed session). No session goes to two processes.
    """
    owned: dict[int, list] = {}
    for session in sessions:
        eligible = [p for p in processes if p[1] <= session[1] + START_SLACK_MS]
        if eligible:
            owner = max(eligible, key=lambda p: (p[1], p[0]))
            owned.setdefault(owner[0], []).append(session)
    picked = {pid: max(found, key=lambda s: s[2]) for pid, found in owned.items()}
    taken = {id(s) for s in picked.values()}
    for pid, started in sorted(processes, key=lambda p: (-p[1], -p[0])):
        if pid in picked:
            continue
        resumed = [s for s in sessions if id(s) not in taken and s[2] >= started]
        if resumed:
            pick = max(resumed, key=lambda s: s[2])
            picked[pid] = pick
            taken.add(id(pick))
    return {pid: session[0] for pid, session in picked.items()}

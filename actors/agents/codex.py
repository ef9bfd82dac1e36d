"""Codex: which rollout a process runs, and its state.

Measured on 0.169.0 (tests/fixtures/transcripts/codex/ has samples):
- A thread's rollout is ``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``;
  its first line is ``session_meta`` (``id``, ``cwd``; ``parent_thread_id`` for a subagent's
  thread). The process that runs the thread holds the rollout **open**: ``codex exec``'s
  native process, an ``app-server`` (an IDE's, or devhost's own chat), or the managed
  ``app-server --managed-daemon`` that Codex's TUI talks to. So the fds say which threads live.
- Names live in ``<CODEX_HOME>/session_index.jsonl`` (``{id, thread_name}`` per rename).

What the rollout's records mean (as events, as state, in both record formats) is
actors/harness/codex/records.py; the three kinds of process are this module's.
"""
from __future__ import annotations

import json
import os
import re
import time

from actors.agents import events as ev
from actors.agents.jsonl import read_first_line
from actors.agents.rows import Found
from actors.harness.codex.records import CodexSummary, is_subagent, meta_of

HARNESS = "codex"
_ROLLOUT = re.compile(r"/rollout-[^/]*\.jsonl$")
_ASKS_PERSON = frozenset({"request_user_input"})
FALLBACK_DAYS = 3
START_SLACK_MS = 5000  # a thread begun this long before its process started can still be its own


def codex_home(env: dict, home: str) -> str:
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or home, ".codex")


def sessions_dir(env: dict, home: str) -> str:
    return env.get("CODEX_SESSIONS_DIR") or os.path.join(codex_home(env, home), "sessions")


def is_rollout(path: str) -> bool:
    return "/sessions/" in path and bool(_ROLLOUT.search(path))


def resume_id(argv) -> str | None:
    args = list(argv)
    for index, arg in enumerate(args):
        if arg == "resume" and index + 1 < len(args) and not args[index + 1].startswith("-"):
            return args[index + 1]
    return None


# --------------------------------------------------------------------------- state

def state(summary: CodexSummary | None) -> str:
    if summary is None or summary.last is None:
        return "unknown"
    kind, detail = summary.last
    if kind in ("end", "fresh"):
        return "idle"
    if kind == "asks":
        return "waiting"
    if kind == "call":
        name, escalated = detail
        # An escalated command asks unless the policy is "never"; a policy not seen (the turn's
        # turn_context is outside the window read) is taken as asking.
        if name in _ASKS_PERSON or (escalated and summary.policy != "never"):
            return "waiting"
    return "working"


# --------------------------------------------------------------------------- scanning

class Metas:
    """session_meta of rollouts, cached by (path, inode)."""

    def __init__(self):
        self._cache: dict[str, tuple[int, dict | None]] = {}

    def get(self, path: str) -> dict | None:
        st = os.stat(path)
        cached = self._cache.get(path)
        if cached and cached[0] == st.st_ino:
            return cached[1]
        meta = meta_of(read_first_line(path, 1024 * 1024))
        self._cache[path] = (st.st_ino, meta)
        return meta

    def trim(self, most: int = 4096) -> None:
        if len(self._cache) > most:
            self._cache.clear()


class Names:
    """Thread names from session_index.jsonl, re-read when the file changes."""

    def __init__(self):
        self._cache: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}

    def get(self, home: str) -> dict[str, str]:
        path = os.path.join(home, "session_index.jsonl")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return {}
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._cache.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        names: dict[str, str] = {}
        if st.st_size <= 8 * 1024 * 1024:
            with open(path, "rb") as handle:
                for line in handle:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                        name = entry.get("thread_name")
                        if isinstance(name, str) and name.strip():
                            names[entry["id"]] = name.strip()
        self._cache[path] = (stamp, names)
        return names


def find(agents, summaries, metas: Metas, names: Names, home_of, open_files, now_ms: int):
    """Rows for codex processes: one per exec/TUI process, one per live thread of an
    app-server; a managed daemon's threads go to the TUIs in their folder (unclaimed ones are
    rows only while a turn runs)."""
    found, errors = [], []
    threads: dict[int, list[tuple[str, dict]]] = {}
    for agent in agents:
        rollouts = []
        for member in agent.members:
            for path in open_files(member):
                if is_rollout(path) and path not in (r for r, _ in rollouts):
                    try:
                        meta = metas.get(path)
                    except OSError:
                        continue
                    if meta and not is_subagent(meta):
                        rollouts.append((path, meta))
        threads[agent.pid] = rollouts

    def make(agent, path, meta, thread="", own_cwd=False):
        meta_cwd = meta.get("cwd") if meta else None
        cwd = meta_cwd if own_cwd and isinstance(meta_cwd, str) and meta_cwd.startswith("/") else agent.cwd
        row = Found(HARNESS, agent.pid, agent.start_time, cwd, thread=thread, last_activity=agent.start_ms)
        if meta:
            row.session_id = meta["id"]
            try:
                row.name = names.get(codex_home(agent.env, home_of(agent))).get(meta["id"])
            except (OSError, ValueError, AttributeError):
                pass  # a name is a nicety: an unreadable index costs the row nothing
        if path:
            try:
                summary = summaries.get(path, CodexSummary)
            except OSError as exc:
                errors.append(f"a rollout cannot be read ({exc.strerror or exc})")
                return row
            row.transcript = path
            row.state = state(summary)
            if summary is not None:
                row.last_activity = max(row.last_activity, summary.last_ms or 0)
        return row

    claimed: set[str] = set()
    daemons = [a for a in agents if a.role == "daemon"]
    for agent in agents:
        if agent.role == "app-server":
            # The first thread (by when it began) is keyed on the process alone, as the server
            # was before its first turn: this daemon's chat keeps its row (and stream) when its
            # thread appears. Later threads are keyed on their id too.
            ordered = sorted(threads[agent.pid], key=lambda pair: (_began(pair[1]), pair[1]["id"]))
            for index, (path, meta) in enumerate(ordered):
                found.append(make(agent, path, meta, thread=meta["id"] if index else "", own_cwd=True))
            if not threads[agent.pid]:
                # No thread has written anything yet (a rollout appears with the first turn).
                # Only a chat session of this daemon is a row then (see scan.py).
                row = make(agent, None, None)
                row.facts["threadless"] = True
                found.append(row)
            continue
        if agent.role == "daemon":
            continue
        own = sorted(threads[agent.pid], key=lambda pair: _mtime(pair[0]), reverse=True)
        if own:
            path, meta = own[0]
        else:
            path, meta = _from_daemons(agent, daemons, threads, claimed)
            if path is None:
                # A daemon's threads go to TUIs only as above, never by time.
                held = {meta["id"] for daemon in daemons for _, meta in threads[daemon.pid]}
                try:
                    path, meta = _by_time(agent, home_of, metas, claimed | held)
                except OSError as exc:
                    errors.append(f"its sessions folder cannot be read ({exc.strerror or exc})")
        if meta:
            claimed.add(meta["id"])
        found.append(make(agent, path, meta))
    for agent in daemons:
        for path, meta in threads[agent.pid]:
            if meta["id"] in claimed:
                continue
            row = make(agent, path, meta, thread=meta["id"], own_cwd=True)
            if row.state in ("working", "waiting"):
                found.append(row)
    return found, errors


def _began(meta: dict) -> int:
    began = ev.iso_ms(meta.get("timestamp"))
    return began if began is not None else 2 ** 62


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _from_daemons(agent, daemons, threads, claimed):
    wanted = resume_id(agent.argv)
    best = None
    for daemon in daemons:
        for path, meta in threads[daemon.pid]:
            if meta["id"] in claimed:
                continue
            if wanted and meta["id"] == wanted:
                return path, meta
            # A thread another (older) TUI began is not this one's: only threads that began
            # since this TUI started, unless ``resume <id>`` names it.
            if not wanted and meta.get("cwd") == agent.cwd and _began(meta) >= agent.start_ms - START_SLACK_MS:
                mtime = _mtime(path)
                if best is None or mtime > best[0]:
                    best = (mtime, path, meta)
    return (best[1], best[2]) if best else (None, None)


def _by_time(agent, home_of, metas: Metas, claimed):
    """No fd says it (older versions, a moment between writes): the rollout of the process's
    folder that began when it started, else the one it resumed (written since it started)."""
    root = sessions_dir(agent.env, home_of(agent))
    if not os.path.isdir(root):
        return None, None
    wanted = resume_id(agent.argv)
    days = set()
    start = agent.start_ms / 1000
    for offset in range(FALLBACK_DAYS):
        for stamp in (time.gmtime(start + offset * 86400), time.localtime(start + offset * 86400)):
            days.add(time.strftime("%Y/%m/%d", stamp))
    fresh, resumed = None, None
    for day in sorted(days):
        folder = os.path.join(root, day)
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for entry in entries:
            if not _ROLLOUT.search("/" + entry.name):
                continue
            mtime = entry.stat().st_mtime * 1000
            if mtime < agent.start_ms - 5000:
                continue
            meta = metas.get(entry.path)
            if not meta or is_subagent(meta) or meta["id"] in claimed or meta.get("cwd") != agent.cwd:
                continue
            if wanted and meta["id"] != wanted:
                continue
            begun = ev.iso_ms(meta.get("timestamp")) or 0
            if begun >= agent.start_ms - START_SLACK_MS:
                if fresh is None or begun < fresh[0]:
                    fresh = (begun, entry.path, meta)
            elif resumed is None or mtime > resumed[0]:
                resumed = (mtime, entry.path, meta)
    best = fresh or resumed
    return (best[1], best[2]) if best else (None, None)

"""Claude Code: its live registry, which transcript a process writes, its state.

What its transcript records mean (as events, as state) is actors/harness/claude/records.py.

Measured on 2.1.328 (tests/fixtures/transcripts/claude-code/ has samples):
- ``<config>/sessions/<pid>.json`` (config = ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``) exists
  while the process runs, also in ``-p`` stream-json mode: ``sessionId``, ``cwd``,
  ``procStart`` (= field 22 of /proc/PID/stat; a mismatch means a stale file of a reused pid),
  ``status`` busy | idle | waiting (``waitingFor`` "permission prompt" while an approval is
  pending), ``name`` + ``nameSource`` (``derived`` is automatic, ``user`` after /rename).
  Peer-token ``*.key`` files beside it are never read.
- The transcript is ``<config>/projects/<slug(cwd)>/<sessionId>.jsonl``, created at the first
  prompt, appended and closed (no fd stays open). One content block per assistant line.
  Subagents write under ``<sessionId>/subagents/``; their records carry ``isSidechain``.
"""
from __future__ import annotations

import json
import os
from glob import glob

from actors.agents.rows import Found
from actors.harness.claude.files import slug  # slug stays this module's name too
from actors.harness.claude.records import ClaudeSummary
from actors.harness.paths import glob_escape

HARNESS = "claude-code"
_ASKS_PERSON = frozenset({"AskUserQuestion", "ExitPlanMode"})
PENDING_GRACE_MS = 5000  # a tool call this young is taken as running, not as waiting


# --------------------------------------------------------------------------- where

def config_dir(env: dict, home: str) -> str:
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or home, ".claude")


def read_registry(config: str, pid: int) -> dict | None:
    """``sessions/<pid>.json``, or None when there is none (or it is torn mid-write).
    Other OSErrors (an unreadable registry) propagate."""
    try:
        with open(os.path.join(config, "sessions", f"{pid}.json"), "rb") as handle:
            data = handle.read(1024 * 1024)
    except FileNotFoundError:
        return None
    try:
        entry = json.loads(data)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def registry_matches(entry: dict, pid: int, start_time: int) -> bool:
    if entry.get("pid") != pid or not isinstance(entry.get("sessionId"), str):
        return False
    proc_start = entry.get("procStart")
    return proc_start is None or str(proc_start) == str(start_time)


def session_from_argv(argv) -> str | None:
    argv = list(argv)
    for index, arg in enumerate(argv):
        for flag in ("--resume", "--session-id", "-r"):
            if arg == flag and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
                return argv[index + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def registry_name(entry: dict) -> str | None:
    name = entry.get("name")
    if isinstance(name, str) and name and entry.get("nameSource") not in (None, "derived"):
        return name
    return None


REGISTRY_STATES = {"busy": "working", "waiting": "waiting", "idle": "idle"}


# --------------------------------------------------------------------------- state

def state(summary: ClaudeSummary | None, registry_status: str | None, now_ms: int) -> str:
    """The registry's status when there is one; else the transcript's last record."""
    if registry_status in REGISTRY_STATES:
        return REGISTRY_STATES[registry_status]
    if summary is None or summary.last is None:
        return "unknown"
    kind, detail, ms = summary.last
    if kind in ("end", "error"):
        return "idle"
    if kind == "tool_use":
        if detail in _ASKS_PERSON:
            return "waiting"
        if ms is not None and now_ms - ms < PENDING_GRACE_MS:
            return "working"
        return "unknown"  # a long tool run, or an approval: the transcript cannot tell
    return "working"


# --------------------------------------------------------------------------- scanning

def find(agents, summaries, home_of, now_ms: int, lookups: dict) -> tuple[list[Found], list[str]]:
    """Rows for Claude Code processes; ``lookups`` caches transcript searches between scans."""
    found, errors = [], []
    for agent in agents:
        row = Found(HARNESS, agent.pid, agent.start_time, agent.cwd, last_activity=agent.start_ms)
        found.append(row)
        config = config_dir(agent.env, home_of(agent))
        try:
            entry = read_registry(config, agent.pid)
        except OSError as exc:
            errors.append(f"its session registry cannot be read ({exc.strerror or exc})")
            continue
        status = None
        if entry is not None and registry_matches(entry, agent.pid, agent.start_time):
            row.session_id = entry["sessionId"]
            status = entry.get("status")
            row.name = registry_name(entry)
            for stamp in ("statusUpdatedAt", "updatedAt", "startedAt"):
                if isinstance(entry.get(stamp), (int, float)):
                    row.last_activity = max(row.last_activity, int(entry[stamp]))
            cwd = entry.get("cwd") if isinstance(entry.get("cwd"), str) else agent.cwd
        else:
            row.session_id = session_from_argv(agent.argv)
            cwd = agent.cwd
            if row.session_id is None and os.path.isdir(os.path.join(config, "sessions")):
                # A version that keeps a registry, but none (or a stale one) for this process
                # yet: guessing from the folder could take another agent's transcript.
                continue
        try:
            path = transcript(config, cwd, row.session_id, agent.start_ms, lookups, now_ms)
            summary = summaries.get(path, ClaudeSummary) if path else None
        except OSError as exc:
            errors.append(f"a transcript cannot be read ({exc.strerror or exc})")
            row.state = REGISTRY_STATES.get(status, "unknown")
            continue
        row.transcript = path
        row.state = state(summary, status, now_ms)
        if summary is not None:
            row.name = row.name or summary.name
            if summary.last_ms:
                row.last_activity = max(row.last_activity, summary.last_ms)
    return found, errors


LOOKUP_TTL_MS = 30_000


def transcript(config: str, cwd: str, session_id: str | None, start_ms: int, lookups: dict, now_ms: int) -> str | None:
    projects = os.path.join(config, "projects")
    if session_id:
        if "/" in session_id or session_id.startswith("."):
            return None
        direct = os.path.join(projects, slug(cwd), f"{session_id}.jsonl")
        if os.path.exists(direct):
            return direct
        # The slug guess can miss (an override, an old rule): look in every project folder,
        # but not again for a while when nothing is there yet (a session before its first prompt).
        cached = lookups.get((config, session_id))
        if cached and (cached[0] or now_ms - cached[1] < LOOKUP_TTL_MS):
            if cached[0] is None or os.path.exists(cached[0]):
                return cached[0]
        pattern = os.path.join(glob_escape(projects), "*", f"{glob_escape(session_id)}.jsonl")
        hits = glob(pattern)
        lookups[(config, session_id)] = (hits[0] if hits else None, now_ms)
        return hits[0] if hits else None
    # No registry and no id on the command line (older versions): the newest transcript of
    # the folder written since the process started.
    folder = os.path.join(projects, slug(cwd))
    best = None
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".jsonl") and entry.is_file():
                    mtime = entry.stat().st_mtime * 1000
                    if mtime >= start_ms - 5000 and (best is None or mtime > best[0]):
                        best = (mtime, entry.path)
    except FileNotFoundError:
        return None
    return best[1] if best else None

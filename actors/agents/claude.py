"""Claude Code: its live registry, its transcripts, their records as events, its state.

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
import re
from glob import glob

from actors.agents import events as ev
from actors.agents.jsonl import Summary
from actors.agents.rows import Found
from storage.cli_files import glob_escape, slug  # slug stays this module's name too

HARNESS = "claude-code"
_END_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
_ASKS_PERSON = frozenset({"AskUserQuestion", "ExitPlanMode"})
_WRAPPED = re.compile(r"^\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
                      r"local-command-stderr|task-notification|user-prompt-submit-hook|bash-input|bash-stdout|"
                      r"bash-stderr)\b")
_HEAD_ROLE = re.compile(rb'"role"\s*:\s*"(user|assistant)"')
_HEAD_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
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

class ClaudeSummary(Summary):
    """The last record that tells the state, the latest title, the last timestamp."""

    def __init__(self):
        super().__init__()
        self.last: tuple[str, object, int | None] | None = None  # (kind, detail, ms)
        self._user_title: str | None = None
        self._ai_title: str | None = None

    def feed(self, record: dict) -> None:
        kind = record.get("type")
        ms = ev.iso_ms(record.get("timestamp"))
        if ms is not None:
            self.last_ms = max(self.last_ms or 0, ms)
        if kind in ("custom-title", "agent-name"):
            title = record.get("customTitle") if kind == "custom-title" else record.get("agentName")
            if isinstance(title, str) and title.strip():
                self._user_title = title.strip()
        elif kind in ("ai-title", "summary"):
            title = record.get("aiTitle") or record.get("title") or record.get("summary")
            if isinstance(title, str) and title.strip():
                self._ai_title = title.strip()
        if record.get("isSidechain") is True:
            return
        found = _state_record(record)
        if found:
            self.last = (*found, ms)
            self.decisive = True

    def feed_long(self, head: bytes) -> None:
        if _HEAD_SIDECHAIN.search(head):
            return
        role = _HEAD_ROLE.search(head)
        if role:
            kind = "tool_result" if role.group(1) == b"user" and b'"tool_result"' in head else "working"
            self.last = (kind, None, None)
            self.decisive = True

    @property
    def name(self):
        return self._user_title or self._ai_title

    @name.setter
    def name(self, value):
        self._user_title = value

    def carry(self, older: "Summary") -> None:
        if isinstance(older, ClaudeSummary):
            self._user_title = self._user_title or older._user_title
            self._ai_title = self._ai_title or older._ai_title


def _state_record(record: dict) -> tuple[str, object] | None:
    kind = record.get("type")
    if kind == "user":
        content = (record.get("message") or {}).get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return "tool_result", None
        if record.get("isMeta") or not _is_prompt(ev.text_of(content)):
            return None  # injected context: nothing is asked of the model by it alone
        return "prompt", None
    if kind == "assistant":
        if record.get("error") or record.get("isApiErrorMessage"):
            return "error", None
        message = record.get("message") or {}
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        last = blocks[-1] if blocks else {}
        if last.get("type") == "tool_use":
            return "tool_use", last.get("name")
        if message.get("stop_reason") in _END_REASONS:
            return "end", None
        return "working", None
    if kind == "system":
        subtype = record.get("subtype")
        if subtype == "turn_duration":
            return "end", None
        if subtype == "api_error":
            return ("working", None) if record.get("retryInMs") is not None else ("error", None)
    return None


def _is_prompt(text: str) -> bool:
    return bool(text.strip()) and not _WRAPPED.match(text)


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


# --------------------------------------------------------------------------- events

class ClaudeParser:
    """Transcript records -> agent-parser events; remembers tool names for their results."""

    def __init__(self):
        self._tools: dict[str, str] = {}

    def events(self, record: dict) -> list[dict]:
        if record.get("isSidechain") is True:
            return []
        kind = record.get("type")
        ms = ev.iso_ms(record.get("timestamp"))
        if kind == "user":
            return self._user(record, ms)
        if kind == "assistant":
            return self._assistant(record, ms)
        if kind == "system":
            return _system(record, ms)
        return []

    def _user(self, record: dict, ms) -> list[dict]:
        content = (record.get("message") or {}).get("content")
        found = []
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    name = self._tools.pop(block.get("tool_use_id"), None)
                    found.append(ev.event("tool_result", ms, role="tool", tool_name=name,
                                          text=ev.text_of(block.get("content")), is_error=bool(block.get("is_error"))))
        if found:
            return found
        text = ev.text_of(content)
        if record.get("isMeta") or not _is_prompt(text):
            return []
        return [ev.event("turn_start", ms, role="user", text=text)]

    def _assistant(self, record: dict, ms) -> list[dict]:
        message = record.get("message") or {}
        if record.get("error") or record.get("isApiErrorMessage"):
            text = ev.text_of(message.get("content")) or str(record.get("error") or "error")
            return [ev.event("error", ms, text=text, is_error=True)]
        found = []
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        ends = message.get("stop_reason") in _END_REASONS
        for index, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text":
                last = ends and index == len(blocks) - 1
                found.append(ev.event("turn_end" if last else "agent_message", ms, role="assistant",
                                      text=block.get("text") or ""))
            elif kind == "thinking":
                found.append(ev.event("thinking", ms, role="assistant", text=block.get("thinking") or ""))
            elif kind == "tool_use":
                name = block.get("name") or "tool"
                if isinstance(block.get("id"), str):
                    self._tools[block["id"]] = name
                found.append(ev.event("tool_call", ms, role="assistant", tool_name=name,
                                      text=ev.tool_summary(block.get("input"))))
        return found


def _system(record: dict, ms) -> list[dict]:
    subtype = record.get("subtype")
    if subtype == "api_error" or record.get("level") == "error":
        error = record.get("error")
        text = ""
        if isinstance(error, dict):
            text = error.get("formatted") or error.get("message") or ""
        elif isinstance(error, str):
            text = error
        text = text or str(record.get("content") or "API error")
        if record.get("retryInMs") is not None:
            text += f" (retry {record.get('retryAttempt')} of {record.get('maxRetries')})"
        return [ev.event("error", ms, text=text, is_error=True)]
    return []


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

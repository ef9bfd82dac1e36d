"""Where the CLIs keep their own files: Claude Code's config folder and project transcripts
(with a subagent's beside its session's), Codex's home and thread rollouts.

One place for both the harness drivers (which check a conversation can be resumed) and the
saved-conversation reader. An id names one file: anything path-like is refused, never globbed.
"""
from __future__ import annotations

import os
import re
from glob import glob


def glob_escape(path: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


SLUG_MAX = 200


def _java_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit number."""
    data = text.encode("utf-16-le")
    value = 0
    for index in range(0, len(data), 2):
        value = (value * 31 + (data[index] | data[index + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out


def slug(cwd: str) -> str:
    """The project folder name Claude Code uses for a working directory (lossy: never invert)."""
    flat = re.sub(r"[^a-zA-Z0-9]", "-", cwd)
    if len(flat) <= SLUG_MAX:
        return flat
    return f"{flat[:SLUG_MAX]}-{_base36(abs(_java_hash(cwd)))}"


def _plain_id(value: str) -> bool:
    return bool(value) and not any(c in value for c in "/\\") and not value.startswith(".")


def claude_dir(env: dict) -> str:
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


def codex_dir(env: dict) -> str:
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")


def claude_transcripts(session_id: str, env: dict) -> list[str]:
    """Claude Code's transcripts of a conversation: ``<config>/projects/<folder slug>/<id>.jsonl``."""
    if not _plain_id(session_id):
        return []
    return glob(os.path.join(glob_escape(claude_dir(env)), "projects", "*", f"{glob_escape(session_id)}.jsonl"))


def claude_subagent_transcript(session_id: str, agent_id: str, env: dict) -> str | None:
    """Where Claude Code writes a subagent's own conversation: beside its session's transcript,
    ``<session id>/subagents/agent-<agent id>.jsonl`` (the agent id is the task id)."""
    if not _plain_id(session_id) or not _plain_id(agent_id):
        return None
    matches = glob(os.path.join(glob_escape(claude_dir(env)), "projects", "*", glob_escape(session_id), "subagents",
                                f"agent-{glob_escape(agent_id)}.jsonl"))
    return matches[0] if matches else None


def codex_rollouts(thread_id: str, env: dict) -> list[str]:
    """Codex's rollouts of a thread; the time in the name has a fixed width, so a tail of another
    thread's id is no match."""
    if not _plain_id(thread_id):
        return []
    return glob(os.path.join(glob_escape(codex_dir(env)), "sessions", "*", "*", "*",
                             f"rollout-????-??-??T??-??-??-{glob_escape(thread_id)}.jsonl"))

"""Where Claude Code keeps its own files: its config folder and project transcripts (with a
subagent's beside its session's), and what a transcript says of the folder it ran in.

Plain file work: an actor calls the reading ones on the hub's threadpool (actors/guard.py).
"""
from __future__ import annotations

import json
import os
import re
from glob import glob

from actors.harness.paths import glob_escape, home_folder, plain_id
from actors.harness.transcripts import recorded_folder

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


def claude_dir(env: dict) -> str:
    return home_folder(env, "CLAUDE_CONFIG_DIR", ".claude")


def claude_transcripts(session_id: str, env: dict) -> list[str]:
    """Claude Code's transcripts of a conversation: ``<config>/projects/<folder slug>/<id>.jsonl``."""
    if not plain_id(session_id):
        return []
    return glob(os.path.join(glob_escape(claude_dir(env)), "projects", "*", f"{glob_escape(session_id)}.jsonl"))


def claude_subagent_transcript(session_id: str, agent_id: str, env: dict) -> str | None:
    """Where Claude Code writes a subagent's own conversation: beside its session's transcript,
    ``<session id>/subagents/agent-<agent id>.jsonl`` (the agent id is the task id)."""
    if not plain_id(session_id) or not plain_id(agent_id):
        return None
    matches = glob(os.path.join(glob_escape(claude_dir(env)), "projects", "*", glob_escape(session_id), "subagents",
                                f"agent-{glob_escape(agent_id)}.jsonl"))
    return matches[0] if matches else None


def find_conversation_cwd(session_id: str, env: dict) -> str | None:
    """The working directory a saved conversation was started in, or None when none is saved."""
    return recorded_folder(claude_transcripts(session_id, env), 200, lambda record: record.get("cwd"))


def signed_in(home: str, env, default_account: bool) -> bool:
    """Whether Claude Code under this config home has a login, without running it: a
    ``.credentials.json`` holding an OAuth entry (its shape only is looked at, and nothing of it
    kept), or, for the default account, ANTHROPIC_API_KEY / CLAUDE_CODE_OAUTH_TOKEN in devhostd's
    environment (a named account's home is what it changes; the key would be every account's).
    A login kept in the macOS keychain is not seen."""
    if default_account and (env.get("ANTHROPIC_API_KEY") or env.get("CLAUDE_CODE_OAUTH_TOKEN")):
        return True
    try:
        with open(os.path.join(home, ".credentials.json"), "rb") as handle:
            if os.fstat(handle.fileno()).st_size > 1 << 20:
                return False  # no credentials file is this large
            oauth = json.load(handle).get("claudeAiOauth")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(oauth, dict) and isinstance(oauth.get("accessToken"), str) and bool(oauth["accessToken"])

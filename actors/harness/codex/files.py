"""Where Codex keeps its own files: its home and thread rollouts, and what a rollout says of
the folder its thread ran in.

Plain file work: an actor calls the reading ones on the hub's threadpool (actors/guard.py).
"""
from __future__ import annotations

import os
from glob import glob

from actors.harness.paths import glob_escape, home_folder, plain_id
from actors.harness.transcripts import recorded_folder


def codex_dir(env: dict) -> str:
    return home_folder(env, "CODEX_HOME", ".codex")


def codex_rollouts(thread_id: str, env: dict) -> list[str]:
    """Codex's rollouts of a thread; the time in the name has a fixed width, so a tail of another
    thread's id is no match."""
    if not plain_id(thread_id):
        return []
    return glob(os.path.join(glob_escape(codex_dir(env)), "sessions", "*", "*", "*",
                             f"rollout-????-??-??T??-??-??-{glob_escape(thread_id)}.jsonl"))


def find_conversation_cwd(thread_id: str, env: dict) -> str | None:
    """The folder a saved thread ran in, read from its rollout's session_meta; None when none is saved."""
    return recorded_folder(codex_rollouts(thread_id, env), 50, _meta_cwd)


def _meta_cwd(record: dict):
    payload = record.get("payload")
    return payload.get("cwd") if record.get("type") == "session_meta" and isinstance(payload, dict) else None


def signed_in(home: str) -> bool:
    """Whether Codex under this home has a stored login (``auth.json``, its ``codex login``),
    without running it or reading the file."""
    return os.path.isfile(os.path.join(home, "auth.json"))

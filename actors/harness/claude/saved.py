"""Claude Code's saved conversations: listed per folder, and read back as a chat's items.

Claude Code keeps each conversation as ``<config>/projects/<folder slug>/<session id>.jsonl``
(its own transcript: one JSON record per line, ``user`` and ``assistant`` records holding API
messages). Resuming one reads its transcript into the chat's items (the CLI itself resumes
from the same file); the records' messages are projected as the live frames are
(projection.py). Plain file reading: callers run it on the hub's threadpool.
"""
from __future__ import annotations

import os
import re

from actors.harness.claude.files import claude_dir, claude_transcripts, slug
from actors.harness.claude.projection import ClaudeProjector
from actors.harness.transcripts import PROMPT_MARKER, Builder, listed, mtime, ms, records, title_of


def _claude_user_text(record: dict) -> str | None:
    """A person's own message in a Claude Code transcript record, or None (tool results,
    slash-command bookkeeping, meta records, interruption markers)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if len(parts) != len(content) and not parts:
            return None  # tool results only
        content = "\n".join(parts)
    if not isinstance(content, str) or not content.strip():
        return None
    if content.startswith(("<command-", "<local-command", "<task-notification>", "Caveat:", "[Request interrupted")):
        return None
    return content.split(PROMPT_MARKER, 1)[0]


def _claude_head(path: str) -> dict | None:
    """A transcript's folder, title and times (its first message of the person's), or None."""
    cwd = title = created = None
    for record in records(path, 4 * 1024 * 1024):
        if cwd is None and isinstance(record.get("cwd"), str):
            cwd = record["cwd"]
        if created is None:
            created = ms(record.get("timestamp"))
        text = _claude_user_text(record)
        if text:
            title = title_of(text)
            break
    if cwd is None or title is None:
        return None  # nothing a person said yet, or no folder recorded
    session_id = os.path.basename(path)[:-len(".jsonl")]
    return {"harness": "claude-code", "nativeSessionId": session_id, "title": title, "createdAt": created,
            "updatedAt": int(os.path.getmtime(path) * 1000), "cwd": cwd}


def list_claude(root: str, env: dict) -> list[dict]:
    """Conversations of ``root`` and of folders in it: their project folders' names start with
    root's slug (a sibling's may too: each file's own ``cwd`` decides)."""
    projects = os.path.join(claude_dir(env), "projects")
    exact, flat = slug(root), re.sub(r"[^A-Za-z0-9]", "-", root)
    try:
        folders = [os.path.join(projects, n) for n in os.listdir(projects) if n == exact or n.startswith(flat + "-")]
    except OSError:
        return []
    paths = []
    for folder in folders:
        try:
            paths += [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl")]
        except OSError:
            continue
    return listed(sorted(paths, key=mtime, reverse=True), _claude_head, root)


def claude_transcript(session_id: str, env: dict) -> str | None:
    matches = claude_transcripts(session_id, env)
    return matches[0] if matches else None


def claude_items(path: str, sidechain: bool = False) -> list[dict]:
    """A Claude Code transcript as a chat's items: each message of the person opens a turn;
    the agent's text, thinking and tool calls (with their results) follow in it. ``sidechain``:
    the file is a subagent's own (its prompt is its first message)."""
    builder = Builder()
    projector = ClaudeProjector("saved")
    for record in records(path):
        builder.at = ms(record.get("timestamp")) or builder.at
        if record.get("isSidechain") and not sidechain:
            continue  # a subagent's own conversation, not this one's
        if sidechain:
            record = {**record, "isSidechain": False}  # a subagent's file: its records are its own
        text = _claude_user_text(record)
        if text is not None:
            builder.user(text)
            continue
        if record.get("type") not in ("user", "assistant") or not builder.turn:
            continue
        for op in projector.project({"type": record["type"], "message": record.get("message") or {}}):
            if op[0] == "upsert":
                builder.item(op[1])
    return builder.done()

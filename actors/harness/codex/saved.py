"""Codex's saved conversations: listed per folder, and read back as a chat's items.

Codex keeps each thread as ``<codex home>/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl`` (a
``session_meta`` line naming its folder, then ``event_msg`` and ``response_item`` records).
Both record formats are read: 0.169 writes ``item_completed`` items where older versions wrote
``user_message`` / ``agent_message`` events. Plain file reading: callers run it on the hub's
threadpool.
"""
from __future__ import annotations

import json
import os
from glob import glob

from actors.harness.codex.files import codex_dir, codex_rollouts
from actors.harness.transcripts import Builder, listed, mtime, ms, records, title_of

MAX_CODEX_ROLLOUTS = 400  # the newest rollouts whose folder is read when listing


def _codex_meta(path: str) -> dict | None:
    try:
        with open(path, "rb") as handle:
            line = handle.readline(1024 * 1024)
    except OSError:
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    if not isinstance(payload, dict) or record.get("type") != "session_meta":
        return None
    return payload


def _codex_user_text(record: dict) -> str | None:
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
    if record.get("type") != "event_msg":
        return None
    if payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
        return payload["message"]  # older Codex
    item = payload.get("item") if payload.get("type") == "item_completed" else None
    if isinstance(item, dict) and item.get("type") == "UserMessage":
        return "\n".join(part.get("text", "") for part in item.get("content") or []
                         if isinstance(part, dict) and part.get("type") == "text")
    return None


def _codex_head(path: str) -> dict | None:
    """A rollout's folder, id, title and times (a top-level thread's, with a message of the
    person's), or None."""
    meta = _codex_meta(path)
    if not meta or not isinstance(meta.get("cwd"), str) or meta.get("parent_thread_id") \
            or not isinstance(meta.get("id"), str):
        return None
    title = next((title_of(text) for text in map(_codex_user_text, records(path, 4 * 1024 * 1024))
                  if text and text.strip()), None)
    if title is None:
        return None
    return {"harness": "codex", "nativeSessionId": meta["id"], "title": title, "createdAt": ms(meta.get("timestamp")),
            "updatedAt": int(mtime(path) * 1000), "cwd": meta["cwd"]}


def list_codex(root: str, env: dict) -> list[dict]:
    pattern = os.path.join(codex_dir(env), "sessions", "*", "*", "*", "rollout-*.jsonl")
    return listed(sorted(glob(pattern), key=mtime, reverse=True)[:MAX_CODEX_ROLLOUTS], _codex_head, root)


def codex_transcript(thread_id: str, env: dict) -> str | None:
    matches = codex_rollouts(thread_id, env)
    return matches[0] if matches else None


def _command_text(command) -> str:
    if isinstance(command, list):
        # ["/bin/bash", "-lc", "<the command>"]: the command as the agent wrote it.
        return command[-1] if len(command) == 3 and command[1] in ("-lc", "-c") else " ".join(map(str, command))
    return str(command or "")


def _path(value):
    """A folder as Codex 0.169 writes it in a rollout (a file: URL) as a plain path."""
    return value[len("file://"):] if isinstance(value, str) and value.startswith("file://") else value


def _codex_task_text(record: dict) -> str | None:
    """A task another agent gave a child agent (an ``agent_message`` to it), as the words that
    open its turn: who sent it, and its payload where Codex keeps it readable."""
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
    if record.get("type") != "response_item" or payload.get("type") != "agent_message":
        return None
    parts = [p for p in payload.get("content") or [] if isinstance(p, dict)]
    header = "".join(p.get("text", "") for p in parts if p.get("type") == "input_text")
    if "NEW_TASK" not in header and "FOLLOWUP" not in header.upper():
        return None  # the child's own answers to its parent are in its agent messages already
    body = header.split("Payload:\n", 1)[1] if "Payload:\n" in header else ""
    return f"Task from {payload.get('author') or 'its parent'}" + (f": {body.strip()}" if body.strip() else "")


def codex_child_items(path: str) -> list[dict]:
    """A child agent's rollout (Codex's multi-agent tools) as items: each task it was given
    opens a turn. (Its task text itself may be encrypted by Codex, then only its sender shows.)"""
    return codex_items(path, task_text=_codex_task_text)


def codex_items(path: str, task_text=None) -> list[dict]:
    """A Codex rollout as a chat's items: each message of the person opens a turn; the
    agent's messages, commands and file changes follow in it."""
    builder = Builder()
    for record in records(path):
        builder.at = ms(record.get("timestamp")) or builder.at
        text = _codex_user_text(record) if task_text is None else task_text(record)
        if text is not None:
            builder.user(text)
            continue
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        if record.get("type") != "event_msg" or not builder.turn:
            continue
        kind = payload.get("type")
        item = payload.get("item") if kind == "item_completed" and isinstance(payload.get("item"), dict) else {}
        ref = item.get("id") or f"n{builder.count}"
        if kind == "agent_message" and isinstance(payload.get("message"), str):
            builder.item({"id": f"saved:{builder.count}", "kind": "assistant", "text": payload["message"],
                          "streaming": False})
        elif item.get("type") == "AgentMessage":
            text = "\n".join(p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict))
            builder.item({"id": f"saved:{ref}", "kind": "assistant", "text": text, "streaming": False})
        elif item.get("type") == "CommandExecution":
            status = item.get("status")
            tool = {"id": f"saved:{ref}", "kind": "tool", "toolUseId": ref, "name": "shell",
                    "input": {"command": _command_text(item.get("command")), "cwd": _path(item.get("cwd"))},
                    "output": item.get("aggregated_output"),
                    "state": "done" if status == "completed" else "error", "parentToolUseId": None}
            if isinstance(item.get("exit_code"), int):
                tool["exitCode"] = item["exit_code"]
            builder.item(tool)
        elif item.get("type") == "FileChange":
            changes = item.get("changes") if isinstance(item.get("changes"), dict) else {}
            builder.item({"id": f"saved:{ref}", "kind": "tool", "toolUseId": ref, "name": "apply_patch", "input": {},
                          "output": None, "parentToolUseId": None,
                          "state": "done" if item.get("status") == "completed" else "error",
                          "changes": [{"path": p, "kind": (c or {}).get("type", "update"),
                                       "diff": (c or {}).get("unified_diff") or (c or {}).get("content") or ""}
                                      for p, c in changes.items() if isinstance(c, dict)]})
        elif kind == "turn_aborted":
            builder.end("aborted")
    return builder.done()

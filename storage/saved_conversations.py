"""The CLIs' own saved conversations: listed per folder, and read back as a chat's items.

Claude Code keeps each conversation as ``<config>/projects/<folder slug>/<session id>.jsonl``
(its own transcript: one JSON record per line, ``user`` and ``assistant`` records holding API
messages); Codex keeps each thread as ``<codex home>/sessions/YYYY/MM/DD/rollout-…-<thread
id>.jsonl`` (a ``session_meta`` line naming its folder, then ``event_msg`` and
``response_item`` records). devhostd lists those of a page's folder that no chat of its own
holds, so a conversation begun in a terminal can be continued from the page; resuming one
reads its transcript into the chat's items (the CLI itself resumes from the same file).

Plain file reading, no actor: callers run it on the hub's threadpool. Nothing here trusts a
path from a request: files are found from the CLI's own folders and an id that names a file.
"""
from __future__ import annotations

import json
import os
import re
from datetime import datetime
from glob import glob

from actors.core.cuts import collapsed, first_line
from actors.core.projector import ClaudeProjector
from actors.core.thread import Thread, new_info
from storage.cli_files import claude_dir, claude_transcripts, codex_dir, codex_rollouts, slug

MAX_LISTED = 50  # per CLI, newest first
MAX_CODEX_ROLLOUTS = 400  # the newest rollouts whose folder is read when listing
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024  # a transcript larger than this is read up to here
PROMPT_MARKER = "\n\n---\nInstructions from devhost:\n"  # what devhostd appends to a page's message
TITLE_CHARS = 80


def _inside(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip("/") + "/"))


def resume_folder(recorded_cwd: str | None, root: str) -> str | None:
    """Where to resume a saved conversation of ``root``'s: the folder it was begun in, as the
    CLI's own transcript recorded it, when that folder exists and is, by its real path (no link
    leads out), ``root`` or a folder in it; None (run in ``root``) otherwise."""
    if not recorded_cwd or not os.path.isabs(recorded_cwd):
        return None
    folder = os.path.realpath(recorded_cwd)
    return folder if _inside(folder, root) and os.path.isdir(folder) else None


def _records(path: str, limit_bytes: int = MAX_TRANSCRIPT_BYTES):
    """The JSON objects of a JSONL file, skipping lines that are not one."""
    try:
        with open(path, "rb") as handle:
            read = 0
            for line in handle:
                read += len(line)
                if read > limit_bytes:
                    return
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    yield record
    except OSError:
        return


def _ms(timestamp) -> int | None:
    if not isinstance(timestamp, str):
        return None
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def title_of(text: str) -> str:
    line = collapsed(first_line(text.strip()), TITLE_CHARS)
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


# ---- Claude Code ------------------------------------------------------------------------------

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
    for record in _records(path, 4 * 1024 * 1024):
        if cwd is None and isinstance(record.get("cwd"), str):
            cwd = record["cwd"]
        if created is None:
            created = _ms(record.get("timestamp"))
        text = _claude_user_text(record)
        if text:
            title = title_of(text)
            break
    if cwd is None or title is None:
        return None  # nothing a person said yet, or no folder recorded
    session_id = os.path.basename(path)[:-len(".jsonl")]
    return {"harness": "claude-code", "nativeSessionId": session_id, "title": title, "createdAt": created,
            "updatedAt": int(os.path.getmtime(path) * 1000), "cwd": cwd}


# What a file said, by path, while its size and time stay the same: listing a folder's saved
# conversations again (each panel open) reads only the files that changed since.
_HEADS: dict[str, tuple[tuple[int, int], dict | None]] = {}
MAX_REMEMBERED = 4096


def _listed(paths: list[str], read_head, root: str) -> list[dict]:
    """The conversations of ``root`` (and folders in it) among ``paths``, in their order, at most
    MAX_LISTED: each file's head (``read_head``) read once while the file is unchanged."""
    found = []
    for path in paths:
        head = _read_once(path, read_head)
        if head is None or not _inside(os.path.realpath(head["cwd"]), root):
            continue
        found.append({k: v for k, v in head.items() if k != "cwd"})
        if len(found) == MAX_LISTED:
            break
    return found


def _read_once(path: str, read):
    try:
        info = os.stat(path)
    except OSError:
        return None
    stamp = (info.st_size, info.st_mtime_ns)
    known = _HEADS.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    found = read(path)
    if len(_HEADS) >= MAX_REMEMBERED:
        _HEADS.clear()  # simple and bounded: the next listing reads them again
    _HEADS[path] = (stamp, found)
    return found


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
    return _listed(sorted(paths, key=_mtime, reverse=True), _claude_head, root)


def claude_transcript(session_id: str, env: dict) -> str | None:
    matches = claude_transcripts(session_id, env)
    return matches[0] if matches else None


def claude_items(path: str, sidechain: bool = False) -> list[dict]:
    """A Claude Code transcript as a chat's items: each message of the person opens a turn;
    the agent's text, thinking and tool calls (with their results) follow in it. ``sidechain``:
    the file is a subagent's own (its prompt is its first message)."""
    builder = _Builder()
    projector = ClaudeProjector("saved")
    for record in _records(path):
        builder.at = _ms(record.get("timestamp")) or builder.at
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


# ---- Codex ------------------------------------------------------------------------------------

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
    title = next((title_of(text) for text in map(_codex_user_text, _records(path, 4 * 1024 * 1024))
                  if text and text.strip()), None)
    if title is None:
        return None
    return {"harness": "codex", "nativeSessionId": meta["id"], "title": title, "createdAt": _ms(meta.get("timestamp")),
            "updatedAt": int(_mtime(path) * 1000), "cwd": meta["cwd"]}


def list_codex(root: str, env: dict) -> list[dict]:
    pattern = os.path.join(codex_dir(env), "sessions", "*", "*", "*", "rollout-*.jsonl")
    return _listed(sorted(glob(pattern), key=_mtime, reverse=True)[:MAX_CODEX_ROLLOUTS], _codex_head, root)


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
    builder = _Builder()
    for record in _records(path):
        builder.at = _ms(record.get("timestamp")) or builder.at
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


# ---- shared -----------------------------------------------------------------------------------

class _Builder:
    """Items in turns, the way a chat holds them (actors/core/thread.py), timed by the
    transcript's own records (``at``), so reading the same file twice gives the same items."""

    def __init__(self):
        self.thread = Thread(new_info("saved", "saved", "/", None, "full-access"))
        self.turn = None
        self.count = 0
        self.at = 0  # the time (ms) of the record being read
        self._times: dict[str, int] = {}
        self._ends: dict[str, int] = {}

    def user(self, text: str) -> None:
        self.end("done")
        self.count += 1
        self.turn = f"turn-saved-{self.count}"
        self.thread.open_turn(self.turn)
        self.thread.add_user(self.turn, text, f"user-saved-{self.count}")
        self._times.setdefault(self.turn, self.at)
        self._times.setdefault(f"user-saved-{self.count}", self.at)

    def item(self, item: dict) -> None:
        self.count += 1
        self.thread.upsert(item)
        self._times.setdefault(item["id"], self.at)

    def end(self, state: str) -> None:
        if self.turn is not None:
            self.thread.end_turn(state)
            self._ends[self.turn] = self.at
            self.turn = None

    def done(self) -> list[dict]:
        self.end("done")
        items = self.thread.snapshot()["items"]
        for item in items:
            item["createdAt"] = self._times.get(item["id"], 0)
            if item["kind"] == "turn":
                item["endedAt"] = self._ends.get(item["id"])
        return items


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


LISTERS = {"claude-code": list_claude, "codex": list_codex}
TRANSCRIPTS = {"claude-code": (claude_transcript, claude_items), "codex": (codex_transcript, codex_items)}


def saved_conversations(root: str, env: dict) -> list[dict]:
    """The CLIs' saved conversations of ``root`` (and folders in it), newest first."""
    found = [c for lister in LISTERS.values() for c in lister(root, env)]
    return sorted(found, key=lambda c: c.get("updatedAt") or 0, reverse=True)


def transcript_items(harness_id: str, native_id: str, env: dict) -> list[dict]:
    """A saved conversation's items, read from the CLI's own file ([] when there is none)."""
    find, read = TRANSCRIPTS.get(harness_id, (None, None))
    path = find(native_id, env) if find else None
    return read(path) if path else []

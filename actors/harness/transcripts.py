"""Reading a CLI's transcripts: shared by the harness packages' saved-conversation readers.

A transcript is JSON lines (one record each); it is read into a chat's items in turns the way
a chat holds them, and a folder's files are listed with each file's head read once while the
file is unchanged. Plain file work, no actor: callers run it on the hub's threadpool.
"""
from __future__ import annotations

import json
import os
from datetime import datetime

from actors.core.cuts import collapsed, first_line
from actors.core.thread import Thread, new_info

MAX_LISTED = 50  # per CLI, newest first
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024  # a transcript larger than this is read up to here
PROMPT_MARKER = "\n\n---\nInstructions from devhost:\n"  # what devhostd appends to a page's message
TITLE_CHARS = 80


def inside(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip("/") + "/"))


def records(path: str, limit_bytes: int = MAX_TRANSCRIPT_BYTES):
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


def recorded_folder(paths: list[str], lines: int, folder_of) -> str | None:
    """The folder a saved conversation ran in, as its CLI's file recorded it: the first readable
    of ``paths`` is read up to ``lines`` lines for a record whose ``folder_of(record)`` is a
    string. None when there is no such file; "" when the file records no folder."""
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for _, line in zip(range(lines), handle):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    folder = folder_of(record) if isinstance(record, dict) else None
                    if isinstance(folder, str):
                        return folder
        except OSError:
            continue
        return ""  # saved, but the folder is not recorded: treat as unknown project
    return None


def ms(timestamp) -> int | None:
    if not isinstance(timestamp, str):
        return None
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def title_of(text: str) -> str:
    line = collapsed(first_line(text.strip()), TITLE_CHARS)
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


# What a file said, by path, while its size and time stay the same: listing a folder's saved
# conversations again (each panel open) reads only the files that changed since.
_HEADS: dict[str, tuple[tuple[int, int], dict | None]] = {}
MAX_REMEMBERED = 4096


def listed(paths: list[str], read_head, root: str) -> list[dict]:
    """The conversations of ``root`` (and folders in it) among ``paths``, in their order, at most
    MAX_LISTED: each file's head (``read_head``) read once while the file is unchanged."""
    found = []
    for path in paths:
        head = read_once(path, read_head)
        if head is None or not inside(os.path.realpath(head["cwd"]), root):
            continue
        found.append({k: v for k, v in head.items() if k != "cwd"})
        if len(found) == MAX_LISTED:
            break
    return found


def read_once(path: str, read):
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


class Builder:
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


def mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0

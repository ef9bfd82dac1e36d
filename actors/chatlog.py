"""Chat activity: one record per thing that happened, as a terminal line and as data.

Every record names the conversation (its session id: the chat id, which a resume keeps) and
its harness; turn records carry the turn's number in the session. Records never carry
prompts, replies, tool input or output, or approval answers: callers pass ids, counts, names,
paths and outcomes only. Error details are cut at 512 bytes and a whole line at 2 KiB, on a
UTF-8 boundary.

The terminal line is aligned (time, session, harness, record, then ``key=value``) with numbers
printed plainly (no float noise). The same record goes, as data, to the daemon's log book
(``BOOK``), which keeps the latest LOG_ENTRIES of each directory for the browser's log stream
(web/log_socket.py) and tells its subscribers as records come.
"""
from __future__ import annotations

import sys
import time
from collections import deque

from actors.session_rules import ERROR_DETAIL_BYTES, LOG_LINE_BYTES, cut_utf8

LOG_ENTRIES = 512  # per directory: what a page's log view gets first
DETAIL_KEYS = ("error", "stderr", "reason")


def plain(value):
    """A field's value as a record holds it: floats without noise, text on one line."""
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return " ".join(str(value).split())


def make_record(session_id: str, harness: str, record: str, fields: dict, root: str | None = None) -> dict:
    clean = {}
    for key, value in fields.items():
        if value is None:
            continue
        value = plain(value)
        if key in DETAIL_KEYS and isinstance(value, str):
            value = cut_utf8(value, ERROR_DETAIL_BYTES)
        clean[key] = value
    return {"time": round(time.time(), 3), "session": session_id, "harness": harness, "record": record,
            "fields": clean, **({"root": root} if root else {})}


def iso_ms(ms) -> str | None:
    """A time in ms since the epoch as UTC ISO 8601 (seconds), for a log field."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)) if isinstance(ms, int) else None


def format_record(entry: dict) -> str:
    parts = [time.strftime("%H:%M:%S", time.localtime(entry["time"])), "chat", f"{entry['session']:<16}",
             f"{entry['harness']:<11}", f"{entry['record']:<18}"]
    for key, value in entry["fields"].items():
        text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        parts.append(f"{key}={text}" if " " not in text and text else f'{key}="{text}"')
    return cut_utf8(" ".join(parts).rstrip(), LOG_LINE_BYTES)


def format_line(session_id: str, harness: str, record: str, fields: dict) -> str:
    return format_record(make_record(session_id, harness, record, fields))


class LogBook:
    """The latest records of each directory, and who wants the next ones (sinks: ``push``)."""

    def __init__(self, keep: int = LOG_ENTRIES):
        self._keep = keep
        self._entries: dict[str, deque] = {}
        self._subscribers: dict[str, set] = {}

    def add(self, entry: dict) -> None:
        root = entry.get("root")
        if not root:
            return
        self._entries.setdefault(root, deque(maxlen=self._keep)).append(entry)
        for sink in list(self._subscribers.get(root, ())):
            sink.push(entry)

    def latest(self, root: str) -> list[dict]:
        return list(self._entries.get(root, ()))

    def subscribe(self, root: str, sink) -> list[dict]:
        """The latest records of ``root``; the next ones go to ``sink``."""
        self._subscribers.setdefault(root, set()).add(sink)
        return self.latest(root)

    def unsubscribe(self, root: str, sink) -> None:
        self._subscribers.get(root, set()).discard(sink)


BOOK = LogBook()


def log(session_id: str, harness: str, record: str, *, root: str | None = None, **fields) -> dict:
    entry = make_record(session_id, harness, record, fields, root)
    print(format_record(entry), file=sys.stderr, flush=True)
    BOOK.add(entry)
    return entry


class ChatLog:
    """One conversation's log: its session, harness and directory on every record, and its
    turns numbered. Shared by the Chat actor and the plain objects it owns."""

    def __init__(self, session_id: str, harness: str, root: str):
        self.session_id = session_id
        self.harness = harness
        self.root = root
        self.turn = 0  # the number of the turn running (or that ran last) in this session

    def __call__(self, record: str, **fields) -> dict:
        return log(self.session_id, self.harness, record, root=self.root, **fields)

    def next_turn(self) -> int:
        self.turn += 1
        return self.turn


def daemon_log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} devhostd {cut_utf8(message, LOG_LINE_BYTES)}", file=sys.stderr, flush=True)

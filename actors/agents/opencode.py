"""OpenCode: its SQLite store, the session a process runs, its event rows as events, its state.

Observed on 1.18.33 (tests/fixtures/transcripts/opencode/ has samples):
- One database, ``$OPENCODE_DB_PATH`` / ``$OPENCODE_DB`` / ``$XDG_DATA_HOME/opencode/opencode.db``
  (default ``~/.local/share/opencode/opencode.db``), WAL mode. Tables ``session`` (``directory``,
  ``parent_id`` for child sessions, ``title``, ``time_created``/``time_updated``/``time_archived``),
  ``message`` and ``part`` (JSON ``data``), and ``event``: an append-only log per session
  (``aggregate_id``, ``seq``, ``type`` such as ``message.updated.1``, ``message.part.updated.1``).
  It is read-only here (``mode=ro``), never with a transaction held, with no busy wait, and
  every query runs on gevent's threadpool. A follow starts at ``event_sequence``'s seq and
  the last rowid, then reads only rows past the last rowid it saw.
- The process (comm ``opencode``) names no session: a process gets the top-level session of
  its folder that began when it started, or the one active since (``rows.match_sessions``).
- Permission prompts are not stored; a tool part ``running`` with no ``metadata`` yet for a few
  seconds is what a pending permission looks like, so it reads as ``waiting``.
- Event rows are revisions of messages and parts: a part's text grows over several rows, so a
  text, thinking or tool event is emitted once per part (when it is complete), and
  ``turn_end`` once per completed assistant message.
"""
from __future__ import annotations

import json
import os
import sqlite3
from urllib.parse import quote

import gevent

from actors.agents import events as ev
from actors.agents.rows import Found, match_sessions

HARNESS = "opencode"
PERMISSION_GRACE_MS = 3000
_DEFAULT_TITLES = ("New session - ", "Child session - ")


def db_path(env: dict, home: str) -> str:
    if env.get("OPENCODE_DB_PATH"):
        return env["OPENCODE_DB_PATH"]
    if env.get("OPENCODE_DB"):
        return env["OPENCODE_DB"]
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or home, ".local", "share")
    return os.path.join(data, "opencode", "opencode.db")


def connect(path: str) -> sqlite3.Connection:
    """A read-only connection; raises sqlite3.Error (or OSError) when it cannot be read.
    No busy wait (timeout 0): a locked database is read again at the next tick."""
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    connection = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=0, check_same_thread=False,
                                 isolation_level=None)
    connection.execute("PRAGMA query_only = 1")
    return connection


def off_hub(function, *args):
    """Runs ``function`` on gevent's threadpool (sqlite3 releases the GIL while it reads), so a
    slow query never stalls the hub; exceptions propagate."""
    return gevent.get_hub().threadpool.apply(function, args)


def _json(text) -> dict:
    try:
        value = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def title_name(title) -> str | None:
    if not isinstance(title, str) or not title.strip() or title.startswith(_DEFAULT_TITLES):
        return None
    return title.strip()


# --------------------------------------------------------------------------- state

def session_state(connection: sqlite3.Connection, session_id: str, now_ms: int) -> str:
    row = connection.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC "
                             "LIMIT 1", (session_id,)).fetchone()
    if row is None:
        return "idle"  # a fresh session, waiting for its first prompt
    data = _json(row[1])
    if data.get("role") != "assistant":
        return "working"
    completed = (data.get("time") or {}).get("completed")
    if completed or data.get("error"):
        if data.get("error") or data.get("finish") not in ("tool-calls", "tool_calls"):
            return "idle"
        return "working"  # one step ended with tool calls: the next one follows
    parts = connection.execute("SELECT data FROM part WHERE message_id = ?", (row[0],)).fetchall()
    return state_of_parts([_json(p[0]) for p in parts], now_ms)


def state_of_parts(parts: list[dict], now_ms: int) -> str:
    """An unfinished assistant message: waiting while a tool looks held by a prompt."""
    for part in parts:
        if part.get("type") != "tool":
            continue
        tool_state = part.get("state") or {}
        if tool_state.get("status") != "running":
            continue
        if part.get("tool") == "question":
            return "waiting"
        started = (tool_state.get("time") or {}).get("start")
        if "metadata" not in tool_state and isinstance(started, (int, float)) \
                and now_ms - started >= PERMISSION_GRACE_MS:
            return "waiting"
    return "working"


# --------------------------------------------------------------------------- events

class OpencodeParser:
    """event rows -> events, once per part and once per completed message."""

    def __init__(self):
        self._roles: dict[str, str] = {}
        self._done: set[tuple[str, str]] = set()
        self._text: dict[str, str] = {}  # message id -> its latest text, for turn_end

    def events(self, kind: str, data: dict) -> list[dict]:
        if kind.startswith("message.updated"):
            return self._message(data.get("info") or {})
        if kind.startswith("message.part.updated"):
            return self._part(data.get("part") or {}, data.get("time"))
        return []

    def _once(self, *key) -> bool:
        if key in self._done:
            return False
        self._done.add(key)
        return True

    def _message(self, info: dict) -> list[dict]:
        message_id, role = info.get("id"), info.get("role")
        if not isinstance(message_id, str):
            return []
        if isinstance(role, str):
            self._roles[message_id] = role
        if role != "assistant":
            return []
        times = info.get("time") or {}
        ms = times.get("completed") or times.get("created")
        error = info.get("error")
        if error and self._once(message_id, "error"):
            text = error.get("data", {}).get("message") if isinstance(error, dict) else None
            return [ev.event("error", ms, text=text or (error.get("name") if isinstance(error, dict) else str(error)),
                             is_error=True)]
        if times.get("completed") and info.get("finish") not in ("tool-calls", "tool_calls") \
                and self._once(message_id, "turn_end"):
            return [ev.event("turn_end", ms, role="assistant", text=self._text.get(message_id, ""))]
        return []

    def _part(self, part: dict, at) -> list[dict]:
        part_id, kind = part.get("id"), part.get("type")
        message_id = part.get("messageID")
        if not isinstance(part_id, str):
            return []
        role = self._roles.get(message_id, "assistant")
        if kind == "text":
            text = part.get("text") or ""
            ended = (part.get("time") or {}).get("end")
            if role == "user":
                if text.strip() and not part.get("synthetic") and self._once(part_id, "text"):
                    return [ev.event("user_prompt", at, role="user", text=text)]
                return []
            self._text[message_id] = text
            if ended and self._once(part_id, "text"):
                return [ev.event("text", ended, role="assistant", text=text)]
            return []
        if kind == "reasoning":
            ended = (part.get("time") or {}).get("end")
            if ended and self._once(part_id, "thinking"):
                return [ev.event("thinking", ended, role="assistant", text=part.get("text") or "")]
            return []
        if kind == "tool":
            return self._tool(part_id, part, at)
        return []

    def _tool(self, part_id: str, part: dict, at) -> list[dict]:
        tool_state = part.get("state") or {}
        status = tool_state.get("status")
        name = part.get("tool")
        found = []
        times = tool_state.get("time") or {}
        if status in ("running", "completed", "error") and self._once(part_id, "call"):
            found.append(ev.event("tool_use", times.get("start") or at, role="assistant", tool_name=name,
                                  text=ev.tool_summary(tool_state.get("input"))))
        if status in ("completed", "error") and self._once(part_id, "result"):
            failed = status == "error"
            text = tool_state.get("error") if failed else tool_state.get("output")
            found.append(ev.event("tool_result", times.get("end") or at, role="tool", tool_name=name,
                                  text=text if isinstance(text, str) else "", is_error=failed))
        return found


def last_seq(connection: sqlite3.Connection, session_id: str) -> int:
    """The session's last seq, from ``event_sequence`` (its primary key: no scan of ``event``)."""
    row = connection.execute("SELECT seq FROM event_sequence WHERE aggregate_id = ?", (session_id,)).fetchone()
    return row[0] if row and isinstance(row[0], int) else -1


def end_of_events(connection: sqlite3.Connection) -> int:
    """The rowid of the last event row (any session): where a follow from the end starts."""
    row = connection.execute("SELECT max(rowid) FROM event").fetchone()
    return row[0] if row and row[0] is not None else 0


EVENTS_LIMIT = 500
LOOK_BACK_ROWS = 2000  # event rows (of any session) read again before the end a stream found late


def events_after(connection: sqlite3.Connection, session_id: str, seq: int, rowid: int = 0,
                 limit: int = EVENTS_LIMIT):
    """((seq, type, data) of the session's event rows after ``seq`` written after row ``rowid``,
    in order; the rowid the next read starts after). Only rows past ``rowid`` are looked at, so
    a read costs what was written since the last one, however big the table is."""
    top = end_of_events(connection)
    rows = connection.execute("SELECT rowid, seq, type, data FROM event WHERE rowid > ? AND rowid <= ? "
                              "AND aggregate_id = ? AND seq > ? ORDER BY rowid LIMIT ?",
                              (rowid, top, session_id, seq, limit)).fetchall()
    after = rows[-1][0] if len(rows) >= limit else max(top, rowid)
    return [(row[1], row[2], _json(row[3])) for row in rows], after


# --------------------------------------------------------------------------- scanning

def find(agents, home_of, now_ms: int):
    """Rows for OpenCode processes, one database at a time."""
    found, errors = [], []
    by_db: dict[str, list] = {}
    for agent in agents:
        row = Found(HARNESS, agent.pid, agent.start_time, agent.cwd, last_activity=agent.start_ms)
        found.append(row)
        by_db.setdefault(db_path(agent.env, home_of(agent)), []).append((agent, row))
    for path, members in by_db.items():
        try:
            connection = connect(path)
        except FileNotFoundError:
            continue  # no session stored yet
        except (sqlite3.Error, OSError) as exc:
            errors.append(f"its database cannot be read ({exc})")
            continue
        try:
            off_hub(_fill, connection, path, members, now_ms)
        except sqlite3.Error as exc:
            errors.append(f"its database cannot be read ({exc})")
        finally:
            connection.close()
    return found, errors


def _fill(connection, path: str, members, now_ms: int) -> None:
    folders = sorted({agent.cwd for agent, _ in members})
    marks = ",".join("?" * len(folders))
    sessions = connection.execute(
        f"SELECT id, directory, title, time_created, time_updated FROM session WHERE parent_id IS NULL "
        f"AND time_archived IS NULL AND directory IN ({marks})", folders).fetchall()
    info = {s[0]: s for s in sessions}
    for folder in folders:
        group = [(agent, row) for agent, row in members if agent.cwd == folder]
        picked = match_sessions([(agent.pid, agent.start_ms) for agent, _ in group],
                                [(s[0], s[3] or 0, s[4] or 0) for s in sessions if s[1] == folder])
        for agent, row in group:
            session_id = picked.get(agent.pid)
            if session_id is None:
                continue
            session = info[session_id]
            row.session_id = session_id
            row.source = (path, session_id)
            row.name = title_name(session[2])
            row.last_activity = max(row.last_activity, session[4] or 0)
            row.state = session_state(connection, session_id, now_ms)

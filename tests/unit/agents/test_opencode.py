"""OpenCode: state from its database rows, event rows as events (once per part and message)."""
from __future__ import annotations

import json
import sqlite3

from actors.agents import opencode
from tests.agent_fakes import FIXTURES, opencode_db, opencode_insert, opencode_rows

OC = FIXTURES / "opencode"


def test_database_location():
    assert opencode.db_path({}, "/h") == "/h/.local/share/opencode/opencode.db"
    assert opencode.db_path({"XDG_DATA_HOME": "/d"}, "/h") == "/d/opencode/opencode.db"
    assert opencode.db_path({"OPENCODE_DB": "/x.db", "XDG_DATA_HOME": "/d"}, "/h") == "/x.db"
    assert opencode.db_path({"OPENCODE_DB_PATH": "/y.db", "OPENCODE_DB": "/x.db"}, "/h") == "/y.db"


def test_titles_that_are_names():
    assert opencode.title_name("Mock title") == "Mock title"
    assert opencode.title_name("New session - 2026-11-30T13:35:48.068Z") is None
    assert opencode.title_name("") is None


def test_state_from_real_rows(tmp_path):
    path = opencode_db(tmp_path)
    opencode_insert(path, opencode_rows("run-mode-session.db-rows.jsonl", tmp_path / "p"))
    connection = opencode.connect(str(path))
    try:
        assert opencode.session_state(connection, "ses_dd357d838ffeW3SKEdpB4C42gW", 0) == "idle"
        assert opencode.session_state(connection, "ses_unknown", 0) == "idle"
        connection.close()
        # The last step is still running (no completed time yet).
        raw = __import__("sqlite3").connect(path)
        raw.execute("UPDATE message SET data = json_remove(data, '$.time.completed') WHERE id = ?",
                    ("msg_22ca82ec4001pIdyPWimXytexW",))
        raw.commit()
        raw.close()
        connection = opencode.connect(str(path))
        assert opencode.session_state(connection, "ses_dd357d838ffeW3SKEdpB4C42gW", 0) == "working"
    finally:
        connection.close()


def test_a_tool_held_by_a_permission_prompt_is_waiting():
    pending = json.loads((OC / "part-while-permission-pending.json").read_text())["data"]
    started = pending["state"]["time"]["start"]
    assert opencode.state_of_parts([pending], started + 500) == "working"
    assert opencode.state_of_parts([pending], started + opencode.PERMISSION_GRACE_MS + 1) == "waiting"
    running = {**pending, "state": {**pending["state"], "metadata": {"output": ""}}}
    assert opencode.state_of_parts([running], started + 60_000) == "working"  # it prints: it runs


def test_the_connection_is_read_only(tmp_path):
    path = opencode_db(tmp_path)
    connection = opencode.connect(str(path))
    try:
        try:
            connection.execute("DELETE FROM session")
            raised = False
        except Exception:  # noqa: BLE001 - sqlite3.OperationalError: attempt to write a readonly database
            raised = True
        assert raised
    finally:
        connection.close()


def _event_rows(name):
    rows = [json.loads(line) for line in (OC / name).read_text().splitlines()]
    return sorted((r for r in rows if r["table"] == "event"), key=lambda r: r["seq"])


def test_event_rows_as_events_once_each():
    parser = opencode.OpencodeParser()
    found = [e for row in _event_rows("tui-permission-approved.db-rows.jsonl")
             for e in parser.events(row["type"], row["data"])]
    assert [(e["eventType"], e.get("toolName")) for e in found] == [
        ("user_prompt", None), ("tool_use", "bash"), ("tool_result", "bash"), ("text", None), ("turn_end", None)]
    assert found[0]["text"] == "please touch a file" and found[0]["role"] == "user"
    assert found[1]["text"] == "touch mockfile.txt"
    assert found[2]["text"] == "(no output)" and found[2]["isError"] is False
    assert found[3]["text"] == "All done." and found[4]["text"] == "All done."


def test_a_rejected_permission_is_a_failed_tool_result():
    lines = (OC / "tui-permission-rejected-by-ctrl-c.db-rows.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    parser = opencode.OpencodeParser()
    found = [e for row in sorted((r for r in rows if r["table"] == "event"), key=lambda r: r["seq"])
             for e in parser.events(row["type"], row["data"])]
    results = [e for e in found if e["eventType"] == "tool_result"]
    assert results and results[0]["isError"] is True and "rejected permission" in results[0]["text"]


def test_tailing_event_rows_by_sequence(tmp_path):
    path = opencode_db(tmp_path)
    opencode_insert(path, opencode_rows("run-mode-session.db-rows.jsonl", tmp_path / "p"))
    raw = sqlite3.connect(path)
    raw.execute("UPDATE event_sequence SET seq = 27")  # OpenCode keeps the last seq there
    raw.commit()
    raw.close()
    connection = opencode.connect(str(path))
    try:
        session = "ses_dd357d838ffeW3SKEdpB4C42gW"
        last, end = opencode.last_seq(connection, session), opencode.end_of_events(connection)
        assert last == 27 and opencode.events_after(connection, session, last, end) == ([], end)
        rows, after = opencode.events_after(connection, session, 20)
        assert [seq for seq, _, _ in rows] == list(range(21, 28)) and after == end
        rows, after = opencode.events_after(connection, session, -1, limit=5)
        assert len(rows) == 5 and 0 < after < end
        assert opencode.last_seq(connection, "nobody") == -1
    finally:
        connection.close()


def test_a_follow_reads_off_the_hub_and_only_new_rows(tmp_path, monkeypatch):
    from gevent import monkey
    from actors.agents.activity import Follow
    from actors.agents.rows import Found
    native = monkey.get_original("threading", "get_native_id")
    path = opencode_db(tmp_path)
    opencode_insert(path, opencode_rows("run-mode-session.db-rows.jsonl", tmp_path / "p"))
    session = "ses_dd357d838ffeW3SKEdpB4C42gW"
    seen = []
    connect = opencode.connect

    def traced(db):
        connection = connect(db)
        connection.set_trace_callback(lambda sql: seen.append((native(), sql)))
        return connection

    monkeypatch.setattr(opencode, "connect", traced)
    found = Found("opencode", 1, 1, str(tmp_path / "p"), source=(str(path), session))
    follow = Follow(found, from_end=True)
    assert follow.read() == []
    assert any("event_sequence" in sql for _, sql in seen)
    assert not any("max(seq)" in sql for _, sql in seen)
    assert all("rowid >" in sql for _, sql in seen if "FROM event " in sql and "max(rowid)" not in sql)
    here = native()
    assert seen and all(thread != here for thread, sql in seen if not sql.startswith("PRAGMA"))
    follow.close()


def test_a_follow_whose_end_could_not_be_read_at_open_sends_no_history(tmp_path, monkeypatch):
    from actors.agents.activity import Follow
    from actors.agents.rows import Found
    path = opencode_db(tmp_path)
    opencode_insert(path, opencode_rows("run-mode-session.db-rows.jsonl", tmp_path / "p"))
    session = "ses_dd357d838ffeW3SKEdpB4C42gW"
    last_seq = opencode.last_seq

    def locked(*args):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(opencode, "last_seq", locked)
    follow = Follow(Found("opencode", 1, 1, str(tmp_path / "p"), source=(str(path), session)), from_end=True)
    assert follow.read() == []
    monkeypatch.setattr(opencode, "last_seq", last_seq)
    assert follow.read() == [] and follow.read() == []
    follow.close()


def _later(data, shift: int):
    """``data`` with every time in it moved ``shift`` ms later (OpenCode stamps parts and messages
    with ``time``, ``created``, ``completed``, ``start`` and ``end``)."""
    if isinstance(data, dict):
        return {key: value + shift if key in ("time", "created", "updated", "completed", "start", "end")
                and isinstance(value, int) else _later(value, shift) for key, value in data.items()}
    if isinstance(data, list):
        return [_later(value, shift) for value in data]
    return data


def test_a_follow_from_the_end_as_of_an_earlier_opening_sends_what_was_written_since(tmp_path):
    """The stream opened, then its opening scan took a while: what OpenCode wrote in between is
    new, not history, as for a transcript (tests/unit/agents/test_activity.py)."""
    from actors.agents import events as ev
    from actors.agents.activity import Follow
    from actors.agents.rows import Found
    path = opencode_db(tmp_path)
    rows = opencode_rows("tui-permission-approved.db-rows.jsonl", tmp_path / "p")
    events = sorted((r for r in rows if r["table"] == "event"), key=lambda r: r["seq"])
    split = next(n for n, r in enumerate(events) if r["type"].startswith("message.part.updated")
                 and r["data"]["part"].get("type") == "tool")
    opencode_insert(path, [r for r in rows if r["table"] != "event"] + events[:split])  # the person's prompt: history
    opened = ev.now_ms()
    first = min(r["data"]["time"] for r in events[split:] if isinstance(r["data"].get("time"), int))
    opencode_insert(path, [{**r, "data": _later(r["data"], opened - first + 5)} for r in events[split:]])
    session = events[0]["aggregate_id"]
    follow = Follow(Found("opencode", 1, 1, str(tmp_path / "p"), source=(str(path), session)), from_end=True,
                    opened_ms=opened)
    try:
        sent = follow.read()
        assert [(m["eventType"], m.get("toolName")) for m in sent] == [
            ("tool_use", "bash"), ("tool_result", "bash"), ("text", None), ("turn_end", None)]
        assert follow.read() == []
        # A stream that opened after all of it was written gets none of it: history.
        after = max(m["timestamp"] for m in sent) + 1
        later = Follow(Found("opencode", 1, 1, str(tmp_path / "p"), source=(str(path), session)), from_end=True,
                       opened_ms=after)
        assert later.read() == []
        later.close()
    finally:
        follow.close()

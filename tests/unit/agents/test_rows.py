"""The agents list: rows, subdirectories, order, owned states, session matching."""
from __future__ import annotations

from actors.agents.rows import Found, inside, match_sessions, refine, rows_for, subdirectory


def _found(pid, state, last, cwd="/w/p", **fields):
    return Found("pi", pid, 1000 + pid, cwd, state=state, last_activity=last, **fields)


def test_rows_in_attention_order_then_most_recent_first():
    agents = [_found(1, "idle", 50), _found(2, "working", 10), _found(3, "waiting", 5), _found(4, "unknown", 99),
              _found(5, "working", 20), _found(6, "idle", 60, cwd="/w/other")]
    rows = [row for row, _ in rows_for(agents, "/w/p")]
    assert [(r["state"], r["lastActivity"]) for r in rows] == [
        ("waiting", 5), ("working", 20), ("working", 10), ("unknown", 99), ("idle", 50)]


def test_a_row_says_only_what_a_page_may_read():
    agent = _found(1, "idle", 5, cwd="/w/p/sub/deeper", name="Task", session_id="secret-session",
                   transcript="/h/.pi/agent/sessions/x.jsonl", chat="abc")
    [(row, chat)] = rows_for([agent], "/w/p")
    assert row == {"key": agent.key, "harness": "pi", "state": "idle", "name": "Task",
                   "subdirectory": "sub/deeper", "lastActivity": 5, "isOwned": True}
    assert chat == "abc"


def test_keys_are_stable_per_process_and_change_with_it():
    assert _found(1, "idle", 5).key == _found(1, "working", 9).key
    assert _found(1, "idle", 5).key != Found("pi", 1, 999, "/w").key  # a reused pid
    assert Found("codex", 7, 1, "/w", thread="a").key != Found("codex", 7, 1, "/w", thread="b").key
    assert len(_found(1, "idle", 5).key) == 16


def test_directories_and_subdirectories():
    assert inside("/w/p", "/w/p") and inside("/w/p/x", "/w/p") and inside("/w/p/x", "/w/p/")
    assert not inside("/w/pp", "/w/p") and not inside("/w", "/w/p")
    assert subdirectory("/w/p", "/w/p") == "." and subdirectory("/w/p/a/b", "/w/p") == "a/b"


def test_owned_rows_take_their_chat_sessions_state():
    agents = [_found(1, "unknown", 1, chat="c1"), _found(2, "working", 2), _found(3, "idle", 3, chat="c3")]
    rows = refine(rows_for(agents, "/w/p"), {"c1": "requires_action", "c3": "running"})
    assert [(r["state"], r["isOwned"]) for r in rows] == [("waiting", True), ("working", True), ("working", False)]
    starting = refine(rows_for(agents, "/w/p"), {"c1": "starting"})
    assert [r["state"] for r in starting if r["lastActivity"] == 1] == ["unknown"]  # the scan's reading stands


def test_an_idle_chat_with_background_work_is_working_and_says_how_much_runs():
    agents = [_found(1, "idle", 1, chat="c1"), _found(2, "idle", 2, chat="c2")]
    rows = refine(rows_for(agents, "/w/p"), {"c1": "idle", "c2": "idle"}, {"c1": 2})
    by_activity = {r["lastActivity"]: r for r in rows}
    assert (by_activity[1]["state"], by_activity[1]["background"]) == ("working", 2)
    assert by_activity[2]["state"] == "idle" and "background" not in by_activity[2]


def test_sessions_go_to_the_process_that_began_them():
    # a started at 1000, b at 5000; sessions began at 1200 (a's) and 5100 (b's).
    picked = match_sessions([(1, 1000), (2, 5000)], [("s-a", 1200, 9000), ("s-b", 5100, 6000)])
    assert picked == {1: "s-a", 2: "s-b"}


def test_a_process_takes_its_most_recent_session_and_a_resumed_one_otherwise():
    assert match_sessions([(1, 1000)], [("old", 1100, 2000), ("new", 3000, 4000)]) == {1: "new"}
    # c resumed a session that began before it started, and wrote to it since.
    assert match_sessions([(3, 5000)], [("resumed", 100, 6000), ("stale", 50, 900)]) == {3: "resumed"}
    assert match_sessions([(3, 5000)], [("stale", 50, 900)]) == {}
    # No session goes to two processes.
    picked = match_sessions([(1, 5000), (2, 6000)], [("resumed", 100, 7000)])
    assert list(picked.values()) == ["resumed"]

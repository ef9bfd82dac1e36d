"""actors.core.status: a chat's status from the facts (spec B41) and its broadcast signature (B40)."""
import pytest

from actors.core.status import STATUSES, chat_status, status_signature


def test_the_statuses_are_the_seeds_five():
    assert STATUSES == ("running", "needs-you", "idle", "error", "exited")


def test_nothing_going_on_is_idle():
    assert chat_status(pending=False, busy=False, failed=False) == "idle"


def test_a_running_turn_is_running():
    assert chat_status(pending=False, busy=True, failed=False) == "running"


def test_a_pending_request_is_needs_you_whatever_else_holds():
    for busy in (False, True):
        for failed in (False, True):
            assert chat_status(pending=True, busy=busy, failed=failed) == "needs-you"


def test_a_failure_with_no_turn_running_is_error():
    assert chat_status(pending=False, busy=False, failed=True) == "error"


def test_a_running_turn_wins_over_an_earlier_failure():
    assert chat_status(pending=False, busy=True, failed=True) == "running"


BASE = {"chatId": "c", "status": "idle", "running": False, "activeTurnId": None, "queue": [], "queuePaused": False,
        "usage": {"contextTokens": 0, "costUsd": 0, "turns": 0}, "requests": [], "model": None,
        "agentSessionId": None, "slashCommands": []}


@pytest.mark.parametrize("field, value", [
    ("status", "running"),
    ("limit", {"kind": "usage", "resetsAt": 5}),
    ("resumeAt", 1234),
    ("resumeAtReset", False),
    ("delegating", True),
    ("requests", [{"requestId": "r1", "itemId": "approval-r1", "kind": "approval", "createdAt": 1}]),
])
def test_the_signature_changes_with_each_field_of_spec_b40(field, value):
    assert status_signature({**BASE, field: value}) != status_signature(BASE)


@pytest.mark.parametrize("field, value", [
    ("running", True),
    ("activeTurnId", "turn-1"),
    ("queue", [{"id": "queued-1", "text": "x"}]),
    ("queuePaused", True),
    ("usage", {"contextTokens": 99, "costUsd": 1.5, "turns": 7}),
    ("agentSessionId", "s-1"),
    ("model", "claude-opus-5-5"),
    ("slashCommands", ["compact"]),
])
def test_the_signature_ignores_every_other_field(field, value):
    assert status_signature({**BASE, field: value}) == status_signature(BASE)


def test_the_signature_follows_the_pending_request_ids_not_their_summaries():
    one = [{"requestId": "r1", "itemId": "approval-r1", "kind": "approval", "createdAt": 1}]
    same_id = [{"requestId": "r1", "itemId": "approval-r1", "kind": "approval", "createdAt": 99}]
    two = one + [{"requestId": "r2", "itemId": "question-r2", "kind": "question", "createdAt": 2}]
    assert status_signature({**BASE, "requests": one}) == status_signature({**BASE, "requests": same_id})
    assert status_signature({**BASE, "requests": one}) != status_signature({**BASE, "requests": two})


def test_a_limit_with_another_reset_time_is_another_signature():
    assert status_signature({**BASE, "limit": {"kind": "usage", "resetsAt": 1}}) != \
        status_signature({**BASE, "limit": {"kind": "usage", "resetsAt": 2}})


def test_absent_requests_read_as_none_pending():
    without = {key: value for key, value in BASE.items() if key != "requests"}
    assert status_signature(without) == status_signature(BASE)

"""actors.status: one derivation, two vocabularies: a chat's status and a session's,
and the chat core's broadcast signature."""
import pytest

import itertools

from actors.status import CHAT_STATUSES, SESSION_STATUSES, chat_status, session_status, status_signature


def test_the_statuses_are_the_seeds_five():
    assert CHAT_STATUSES == ("running", "needs-you", "idle", "error", "exited")


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


# ---- a session's status (the Chat API) -------------------------------------------------------

def status(closed=False, starting=False, turn_active=False, pending_requests=0, error=None) -> str:
    return session_status(closed=closed, starting=starting, turn_active=turn_active,
                          pending_requests=pending_requests, error=error)


# ---- status ----------------------------------------------------------------------------------

def test_a_session_with_nothing_going_on_is_idle():
    assert status() == "idle"


def test_a_closed_session_is_closed_whatever_else_is_true():
    assert status(closed=True, starting=True, turn_active=True, pending_requests=2, error="boom") == "closed"


def test_a_pending_approval_outranks_a_running_turn():
    assert status(turn_active=True, pending_requests=1) == "requires_action"


def test_a_running_turn_outranks_the_previous_turns_error():
    assert status(turn_active=True, error="Invalid API key") == "running"


def test_an_error_shows_once_the_turn_is_over():
    assert status(error="Invalid API key") == "error"


def test_a_failed_start_reads_as_error_not_starting():
    assert status(starting=True, error="Claude Code could not be started") == "error"


def test_a_starting_cli_is_starting():
    assert status(starting=True) == "starting"


def test_every_combination_of_facts_gives_one_documented_status():
    for closed, starting, active, pending, error in itertools.product([False, True], [False, True], [False, True],
                                                                      [0, 1], [None, "x"]):
        assert status(closed, starting, active, pending, error) in SESSION_STATUSES


def test_the_precedence_is_closed_then_requires_action_then_running_then_error_then_starting_then_idle():
    facts = {"closed": {"closed": True}, "requires_action": {"pending_requests": 1},
             "running": {"turn_active": True}, "error": {"error": "x"}, "starting": {"starting": True}}
    order = ["closed", "requires_action", "running", "error", "starting"]
    for index, name in enumerate(order):
        everything_below = {k: v for later in order[index:] for k, v in facts[later].items()}
        assert status(**everything_below) == name


# ---- the broadcast signature ------------------------------------------------------------------

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

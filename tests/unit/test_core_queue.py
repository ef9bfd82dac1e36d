"""actors.core.queue: the queue rules of a core chat and the resume decision."""
import re

import pytest

from actors.core import queue as q
from actors.core.queue import MAX_ATTEMPTS, ChatError


def info(queue=(), paused=False) -> dict:
    return {"queue": [dict(m) for m in queue], "queuePaused": paused}


def message(name: str) -> dict:
    return {"id": f"queued-{name}", "turnId": f"turn-{name}", "text": name, "createdAt": 1}


# ---- must_queue ---------------------------------------------------------------------------------

def test_a_send_to_an_idle_chat_with_nothing_queued_goes_out_at_once():
    assert q.must_queue(info(), busy=False) is False


def test_a_send_while_a_turn_runs_is_queued():
    assert q.must_queue(info(), busy=True) is True


def test_a_send_while_anything_waits_already_is_queued_even_when_idle():
    assert q.must_queue(info([message("a")]), busy=False) is True


# ---- enqueue --------------------------------------------------------------------------------------

def test_enqueue_appends_the_message_behind_what_waits():
    chat = info([message("a")])
    added = q.enqueue(chat, "b")
    assert [m["text"] for m in chat["queue"]] == ["a", "b"] and chat["queue"][-1] is added


def test_a_queued_message_has_a_queued_id_and_reserves_a_turn_id():
    added = q.enqueue(info(), "hello")
    assert re.fullmatch(r"queued-\d+-[0-9a-z]{6}", added["id"])
    assert re.fullmatch(r"turn-\d+-[0-9a-z]{6}", added["turnId"])
    assert added["text"] == "hello" and isinstance(added["createdAt"], int)


def test_every_queued_message_reserves_a_turn_id_of_its_own():
    chat = info()
    added = [q.enqueue(chat, str(n)) for n in range(20)]
    assert len({m["turnId"] for m in added}) == 20 and len({m["id"] for m in added}) == 20


# ---- take / to_front ------------------------------------------------------------------------------

def test_take_removes_and_returns_the_message():
    chat = info([message("a"), message("b"), message("c")])
    assert q.take(chat, "queued-b", "c1")["text"] == "b"
    assert [m["text"] for m in chat["queue"]] == ["a", "c"]


def test_take_of_a_message_already_gone_is_request_not_found_naming_message_and_chat():
    chat = info([message("a")])
    q.take(chat, "queued-a", "c1")
    with pytest.raises(ChatError) as gone:
        q.take(chat, "queued-a", "c1")
    assert gone.value.code == "request-not-found"
    assert str(gone.value) == "No queued message queued-a in chat c1"


def test_to_front_moves_the_message_ahead_of_the_others_keeping_their_order():
    chat = info([message("a"), message("b"), message("c")])
    q.to_front(chat, "queued-c", "c1")
    assert [m["text"] for m in chat["queue"]] == ["c", "a", "b"]


def test_to_front_of_an_absent_message_is_request_not_found_and_changes_nothing():
    chat = info([message("a"), message("b")])
    with pytest.raises(ChatError) as gone:
        q.to_front(chat, "queued-x", "c1")
    assert gone.value.code == "request-not-found" and str(gone.value) == "No queued message queued-x in chat c1"
    assert [m["text"] for m in chat["queue"]] == ["a", "b"]


# ---- next_to_drain --------------------------------------------------------------------------------

def test_drain_takes_the_head_when_idle_and_not_paused():
    chat = info([message("a"), message("b")])
    assert q.next_to_drain(chat, busy=False)["text"] == "a"
    assert [m["text"] for m in chat["queue"]] == ["b"]


def test_drain_takes_nothing_while_a_turn_runs():
    chat = info([message("a")])
    assert q.next_to_drain(chat, busy=True) is None
    assert q.next_to_drain(chat, busy=True, explicit=True) is None
    assert len(chat["queue"]) == 1


def test_drain_takes_nothing_from_a_paused_queue():
    chat = info([message("a")], paused=True)
    assert q.next_to_drain(chat, busy=False) is None and len(chat["queue"]) == 1


def test_an_explicit_drain_takes_the_head_of_a_paused_queue():
    chat = info([message("a"), message("b")], paused=True)
    assert q.next_to_drain(chat, busy=False, explicit=True)["text"] == "a"


def test_drain_of_an_empty_queue_is_nothing():
    assert q.next_to_drain(info(), busy=False, explicit=True) is None


# ---- resume_decision --------------------------------------------------------------------

def test_max_attempts_is_two_processes_per_turn():
    assert MAX_ATTEMPTS == 2


def test_with_resuming_off_the_turn_is_not_resumed():
    resume, reason, _ = q.resume_decision({"id": "t"}, "session-1", resuming_on=False)
    assert resume is False and reason == "this machine does not resume turns"


def test_resuming_off_wins_over_a_missing_session():
    _, reason, _ = q.resume_decision({"id": "t"}, None, resuming_on=False)
    assert reason == "this machine does not resume turns"


def test_without_an_agent_session_the_turn_is_not_resumed():
    resume, reason, _ = q.resume_decision({"id": "t"}, None, resuming_on=True)
    assert resume is False and reason == "the agent had not started a session to resume yet"


def test_a_first_resume_is_attempt_two():
    assert q.resume_decision({"id": "t"}, "session-1", resuming_on=True) == (True, None, 2)


def test_a_turn_already_resumed_once_is_not_resumed_again():
    resume, reason, attempt = q.resume_decision({"id": "t", "attempt": 2, "resumePending": False}, "s", True)
    assert resume is False and reason == "it was already resumed after an earlier restart"
    assert attempt == MAX_ATTEMPTS + 1


def test_a_resume_still_pending_keeps_its_attempt_and_may_go_again():
    assert q.resume_decision({"id": "t", "attempt": 2, "resumePending": True}, "s", True) == (True, None, 2)


def test_an_explicit_first_attempt_counts_like_an_absent_one():
    assert q.resume_decision({"id": "t", "attempt": 1}, "s", True) == (True, None, 2)


def test_a_turn_the_chat_was_stopped_on_purpose_during_is_never_resumed_and_says_why():
    turn = {"id": "t", "createdAt": 100}
    resume, reason, _ = q.resume_decision(turn, "s", True, {"endedAt": 150})
    assert not resume and reason == "the chat was stopped on purpose before the restart"
    resume, reason, _ = q.resume_decision(turn, "s", True, {"endedAt": 150, "unownedReason": "the task was cancelled"})
    assert not resume and reason == "the task was cancelled"
    assert q.resume_decision(turn, "s", True, {"endedAt": 50})[0]  # stopped before this turn: it resumes


def test_the_chats_own_reason_replaces_devhostds_when_resuming_is_off():
    assert q.resume_decision({"id": "t"}, "s", False, {"unownedReason": "nobody owns it"})[1] == "nobody owns it"


def test_a_resume_is_worded_by_the_chat_where_it_set_words():
    assert q.resume_words({}) == (q.RESUME_PROMPT, q.RESUME_NOTE)
    assert q.resume_words({"resumeWords": {"note": "Back after the deploy"}}) == \
        (q.RESUME_PROMPT, "Back after the deploy")
    assert q.resume_words({"resumeWords": {"prompt": "Go on."}})[0] == "Go on."

"""web.thread_socket: the page's commands in the chat core's words, read and checked before
anything reaches a chat (a frame that cannot be read is refused, naming what to send)."""
import json

import pytest

from web.commands import CommandError, Interrupt, Send
from web.thread_socket import AnswerRefused, _parse, parse_history_limit


def parse(value):
    return _parse(json.dumps(value))


def test_stops_configure_and_bookmarks_are_read_as_the_cores_requests():
    assert parse({"type": "stopTask", "taskId": "t1"}) == {"type": "stopTask", "taskId": "t1"}
    assert parse({"type": "stopSubagent", "subagentId": "g:sub-1"}) == {"type": "stopSubagent", "subagentId": "g:sub-1"}
    assert parse({"type": "configure", "resumeAtReset": False}) == \
        {"type": "configure", "resumeAtReset": False, "runtimeMode": None, "plan": None, "account": ...}
    assert parse({"type": "bookmark", "itemId": "user-1", "name": "the ask"}) == \
        {"type": "bookmark", "itemId": "user-1", "name": "the ask"}
    assert parse({"type": "unbookmark", "itemId": "user-1", "name": "ignored"}) == \
        {"type": "unbookmark", "itemId": "user-1", "name": None}


@pytest.mark.parametrize("frame, words", [
    ({"type": "stopTask"}, "stopTask needs the taskId"),
    ({"type": "configure", "resumeAtReset": "yes"}, "configure takes resumeAtReset: true or false"),
    ({"type": "configure", "runtimeMode": "Accept edits"},
     "runtimeMode must be one of: supervised, auto-accept-edits, auto, full-access"),
    ({"type": "configure", "plan": "on"}, "plan must be true"),
    ({"type": "configure"}, "configure takes resumeAtReset (true or false), runtimeMode (one of: supervised, "
                            "auto-accept-edits, auto, full-access), plan (true or false) or account"),
    ({"type": "bookmark"}, "bookmark needs the itemId"),
    ({"type": "bookmark", "itemId": "x" * 301}, "bookmark needs the itemId"),
    ({"type": "bookmark", "itemId": "user-1", "name": 5}, "a bookmark's name must be text"),
    ({"type": "respond", "requestId": 1, "result": {}}, "approve or answer, not respond"),
])
def test_a_command_that_cannot_be_read_is_refused_saying_what_to_send(frame, words):
    with pytest.raises(CommandError) as refused:
        parse(frame)
    assert words in str(refused.value)


def test_configure_sets_the_sessions_mode_or_asks_for_a_plan():
    assert parse({"type": "configure", "runtimeMode": "full-access", "plan": False}) == \
        {"type": "configure", "resumeAtReset": None, "runtimeMode": "full-access", "plan": False, "account": ...}
    assert parse({"type": "configure", "plan": True}) == \
        {"type": "configure", "resumeAtReset": None, "runtimeMode": None, "plan": True, "account": ...}


def test_configure_moves_the_session_to_an_account_by_name_or_to_the_default():
    assert parse({"type": "configure", "account": "work"})["account"] == "work"
    assert parse({"type": "configure", "account": None})["account"] is None  # null: the CLI's default home
    with pytest.raises(CommandError, match="or null for the CLI's default account"):
        parse({"type": "configure", "account": 5})


def test_a_plans_approval_may_name_the_mode_to_go_on_in():
    assert parse({"type": "approve", "requestId": "r1", "decision": "allow", "runtimeMode": "auto-accept-edits"}) == \
        {"type": "approve", "requestId": "r1", "decision": "allow", "message": None, "runtimeMode": "auto-accept-edits"}
    denied = parse({"type": "approve", "requestId": "r1", "decision": "deny", "message": "smaller steps"})
    assert denied["runtimeMode"] is None
    with pytest.raises(AnswerRefused, match="runtimeMode must be one of") as refused:
        parse({"type": "approve", "requestId": "r2", "decision": "allow", "runtimeMode": "plan"})
    assert refused.value.request_id == "r2"  # open again: the page can answer it once more


def test_an_unreadable_answer_names_its_request_so_the_page_can_reopen_it():
    with pytest.raises(AnswerRefused) as refused:
        parse({"type": "approve", "requestId": "r1", "decision": "maybe"})
    assert refused.value.request_id == "r1"


def test_sends_and_interrupts_are_the_chat_sockets_own():
    assert isinstance(parse({"type": "interrupt"}), Interrupt)
    sent = parse({"type": "send", "commandId": "11111111-2222-4333-8444-555555555555", "text": "hi"})
    assert isinstance(sent, Send) and sent.text == "hi"


def test_a_history_page_is_asked_with_a_cursor_and_a_limit_of_the_cores_rules():
    assert parse({"type": "history", "cursor": "0:400"}) == {"type": "history", "cursor": "0:400", "limit": 60}
    assert parse({"type": "history", "cursor": "0:400", "limit": 100})["limit"] == 100
    for bad, words in (({"cursor": 5}, "the cursor a snapshot"), ({"cursor": "x" * 129}, "1..128"),
                       ({"cursor": "0:4", "limit": 0}, "1..100"), ({"cursor": "0:4", "limit": True}, "1..100")):
        with pytest.raises(CommandError) as refused:
            parse({"type": "history", **bad})
        assert words in str(refused.value)


@pytest.mark.parametrize("value, limit", [(None, None), ("", None), ("1", 1), ("100", 100)])
def test_a_history_limit_in_the_address_is_1_to_100_items(value, limit):
    assert parse_history_limit(value) == limit


@pytest.mark.parametrize("value", ["0", "101", "-1", "ten", "٣"])
def test_a_history_limit_out_of_range_is_refused(value):
    with pytest.raises(ValueError, match="historyLimit must be 1..100"):
        parse_history_limit(value)

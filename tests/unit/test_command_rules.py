"""web.command_rules: the chat core (web/core) and the panel's thread socket
(web/thread_socket.py) refuse the same input the same way, with the seed's limits."""
import json

import pytest

from web import command_rules as rules
from web.command_rules import MAX_BACKGROUND_ID
from web.commands import CommandError
from web.core.service import CoreService
from web.thread_socket import AnswerRefused, _parse

# The same request in each edge's words: (the core's request, the thread socket's frame type).
REFUSED = [
    ("chat.stopTask", "stopTask", {"taskId": "t" * (MAX_BACKGROUND_ID + 1)}),
    ("chat.stopTask", "stopTask", {"taskId": "  "}),
    ("chat.stopSubagent", "stopSubagent", {"subagentId": "s" * (MAX_BACKGROUND_ID + 1)}),
    ("chat.addBookmark", "bookmark", {"itemId": "x" * 301}),
    ("chat.addBookmark", "bookmark", {"itemId": "user-1", "name": 5}),
    ("chat.removeBookmark", "unbookmark", {}),
    ("chat.configure", "configure", {"resumeAtReset": "yes"}),
    ("chat.approve", "approve", {"requestId": True, "decision": "allow"}),
    ("chat.approve", "approve", {"requestId": "r1", "decision": "maybe"}),
    ("chat.approve", "approve", {"requestId": "r1", "decision": "deny", "message": "m" * 4001}),
    ("chat.answer", "answer", {"requestId": 7, "answers": {"q": 1}}),
]


def core_refusal(request: str, fields: dict) -> str:
    # The payload is refused before any chat is asked: no registry is needed to read it.
    answer = CoreService(registry=None, clients=None).handle(
        {"id": "1", "type": request, "payload": {"chatId": "c1", **fields}})
    assert not answer["ok"] and answer["error"]["code"] == "bad-request", answer
    return answer["error"]["message"]


def thread_refusal(kind: str, fields: dict) -> str:
    with pytest.raises(CommandError) as refused:
        _parse(json.dumps({"type": kind, **fields}))
    return str(refused.value)


@pytest.mark.parametrize("request_name, kind, fields", REFUSED)
def test_both_edges_refuse_the_same_input_with_the_same_words(request_name, kind, fields):
    assert core_refusal(request_name, fields) == thread_refusal(kind, fields)


def test_a_task_or_subagent_id_may_have_the_seeds_256_characters_on_both_edges():
    longest = "t" * MAX_BACKGROUND_ID
    assert _parse(json.dumps({"type": "stopTask", "taskId": longest})) == {"type": "stopTask", "taskId": longest}
    assert _parse(json.dumps({"type": "stopSubagent", "toolUseId": longest}))["subagentId"] == longest
    # The core reads it and goes on to ask for the chat, which this registry-less service lacks.
    answer = CoreService(registry=None, clients=None).handle(
        {"id": "1", "type": "chat.stopTask", "payload": {"chatId": "c1", "taskId": longest}})
    assert answer["error"]["code"] == "internal"


def test_an_answer_refused_on_the_thread_socket_names_its_request_as_the_core_does():
    with pytest.raises(AnswerRefused) as refused:
        _parse(json.dumps({"type": "approve", "requestId": "r1", "decision": "maybe"}))
    assert refused.value.request_id == "r1"
    assert core_refusal("chat.approve", {"requestId": "r1", "decision": "maybe"}) == str(refused.value)


# ---- a turn's revert (chat.revert, and the panel's route) -------------------------------------

def test_a_revert_names_paths_or_hunks_or_neither_for_the_whole_turn():
    assert rules.revert({}) == (None, None, False)
    assert rules.revert({"paths": ["src/a.js"], "force": True}) == (["src/a.js"], None, True)
    hunks = [{"path": "a.txt", "header": "@@ -1,3 +1,4 @@", "extra": 1}]
    assert rules.revert({"hunks": hunks}) == (None, [{"path": "a.txt", "header": "@@ -1,3 +1,4 @@"}], False)


@pytest.mark.parametrize("payload, words", [
    ({"paths": []}, "`paths`"), ({"paths": "a.txt"}, "`paths`"), ({"paths": ["../etc/passwd"]}, "`paths`"),
    ({"paths": ["/etc/passwd"]}, "`paths`"), ({"paths": ["a\0b"]}, "`paths`"),
    ({"hunks": [{"path": "a.txt"}]}, "`hunks`"), ({"hunks": [{"path": "a.txt", "header": "rm -rf"}]}, "`hunks`"),
    ({"paths": ["a"], "hunks": [{"path": "a", "header": "@@ -1 +1 @@"}]}, "not both"),
    ({"force": "yes"}, "`force`"),
])
def test_a_bad_revert_says_what_to_send(payload, words):
    with pytest.raises(rules.Invalid) as refused:
        rules.revert(payload)
    assert words in str(refused.value)


def test_a_turn_id_is_a_bounded_string():
    assert rules.turn_id({"turnId": "turn-1"}) == "turn-1"
    for bad in (None, "", 5, "x" * 301):
        with pytest.raises(rules.Invalid):
            rules.turn_id({"turnId": bad})

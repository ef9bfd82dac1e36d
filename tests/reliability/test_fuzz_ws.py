"""Property tests of the sockets' commands: whatever a page sends on a chat socket or a thread
socket (unreadable text, JSON of every shape, commands with fields of the wrong kind, answers
to requests that do not exist), the daemon answers in words or ignores it, the socket stays
open and in order, and nothing reaches the CLI that is not a proper message (no `bug:` line:
the daemon fixture fails the test on one)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FRAMES = 2500  # per socket in CI (5,000 frames); --long: 25,000

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(max_size=40),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                         max_size=4),
                           max_leaves=12)
not_text = st.none() | st.integers() | st.booleans() | st.lists(st.integers(), max_size=3) | st.dictionaries(
    st.text(max_size=5), st.integers(), max_size=2)


@st.composite
def commands(draw):
    """A command of every kind, each with fields that may be anything."""
    kind = draw(st.sampled_from(["send", "interrupt", "respond", "approve", "answer", "other"]))
    frame = {"type": draw(st.text(max_size=12)) if kind == "other" else kind}
    if kind == "send":
        # Never a well-formed send (it would start a turn): commandId or text is not a string.
        frame["commandId"] = draw(st.text(max_size=40) | not_text)
        frame["text"] = draw(not_text) if isinstance(frame["commandId"], str) else draw(st.text(max_size=60) | not_text)
        if draw(st.booleans()):
            frame["images"] = draw(json_values)
        if draw(st.booleans()):
            frame["model"] = draw(json_values)
    elif kind in ("respond", "approve", "answer"):
        frame["requestId"] = draw(json_values)
        frame[draw(st.sampled_from(["result", "decision", "answers", "message"]))] = draw(json_values)
    extra = draw(st.dictionaries(st.text(max_size=10), json_values, max_size=3))
    return {**extra, **frame}


frames = st.one_of(
    commands().map(json.dumps),
    json_values.map(json.dumps),  # JSON, but not a command
    st.text(max_size=200),  # not JSON at all
)


@pytest.fixture
def count(long_mode) -> int:
    return FRAMES * 10 if long_mode else FRAMES


@pytest.mark.parametrize("path", ["chat", "thread"])
def test_any_frame_on_a_pages_socket_is_answered_or_ignored_and_the_socket_goes_on(daemon, mock, path, count):
    record = daemon.create_session()
    sock = daemon.connect(record["id"], path=path)
    sent = [0]

    @settings(max_examples=count, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(frame=frames)
    def fuzz(frame):
        sock.send(frame)
        sent[0] += 1

    fuzz()
    # Still open, still in order: a last command is answered after everything before it.
    marker = {"type": "respond", "requestId": "after-the-fuzz", "result": {}} if path == "chat" else \
        {"type": "approve", "requestId": "after-the-fuzz", "decision": "allow"}
    sock.send(marker)
    answer = sock.wait_for(lambda f: f["type"] == "error" and "after-the-fuzz" in json.dumps(f), timeout=60,
                           what="the answer to the last command")
    assert answer
    assert mock.requests == []  # no frame was a message: the CLI was never asked anything
    print(f"{sent[0]} fuzzed frames on the {path} socket")
    sock.close()

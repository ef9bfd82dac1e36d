"""Property tests of the sockets' commands: whatever a page sends on a chat socket, a thread
socket or a page socket (unreadable text, JSON of every shape, commands with fields of the wrong kind, answers
to requests that do not exist), the daemon answers in words or ignores it, the socket stays
open and in order, and nothing reaches the CLI that is not a proper message (no `bug:` line:
the daemon fixture fails the test on one)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.conftest import core  # noqa: F401 - a fixture
from tests.integration.daemon import wait_until

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


entry_fields = st.sampled_from(["kind", "message", "stack", "time", "count", "method", "url", "status", "error",
                                "source", "line", "column", "fn"])
entry_values = json_values | st.sampled_from(["error", "console-error", "rejection", "request", "proxy"]) | \
    st.integers(min_value=-2**70, max_value=2**70)
entries = st.lists(st.dictionaries(entry_fields, entry_values | st.lists(st.dictionaries(entry_fields, entry_values,
                                                                                          max_size=5), max_size=3),
                                   max_size=6), max_size=4)


@st.composite
def page_frames(draw):
    """What a page might send on its page socket: entries and element answers of every shape."""
    kind = draw(st.sampled_from(["entries", "element", "other"]))
    frame = {"type": draw(st.text(max_size=12)) if kind == "other" else kind}
    if kind == "entries":
        frame["errors"], frame["requests"] = draw(entries | json_values), draw(entries | json_values)
    elif kind == "element":
        frame.update(requestId=draw(json_values), element=draw(json_values), count=draw(json_values))
    return frame


def test_any_frame_on_the_page_socket_is_kept_bounded_or_ignored_and_the_agent_still_reads_it(daemon, core, stack,
                                                                                              count):
    import websocket

    core.chats.create("fuzzed", provider="claude", cwd=str(stack / "project"))
    host = daemon.host()
    sock = websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/page?{daemon.query()}",
                                       host=host, origin=f"http://{host}", timeout=30)

    @settings(max_examples=count, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(frame=st.one_of(page_frames().map(json.dumps), json_values.map(json.dumps), st.text(max_size=200)))
    def fuzz(frame):
        sock.send(frame)

    fuzz()
    sock.send(json.dumps({"type": "entries", "errors": [{"kind": "error", "message": "after-the-fuzz",
                                                         "stack": [{"url": daemon.page(), "line": 1, "column": 1}]}]}))
    answer = wait_until(lambda: (a := core.request("page.errors", {"chatId": "fuzzed"})) and
                        "after-the-fuzz" in json.dumps(a) and a, timeout=60, what="the last entry, read by the core")
    [page] = answer["pages"]
    assert len(page["errors"]) <= 100 and page["errors"][-1]["message"] == "after-the-fuzz"
    assert core.request("page.requests", {"chatId": "fuzzed"})["pages"][0]["url"] == daemon.page()
    sock.close()

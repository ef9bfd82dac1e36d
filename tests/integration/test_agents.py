"""The agents list and the activity stream on a real devhostd, with the real CLIs as its chats
and processes laid out as the other harnesses' (see tests/agent_fakes.py)."""
from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest
import websocket

from tests.agent_fakes import Agents, append_jsonl, pi_header, pi_message, pi_session_path
from tests.integration.daemon import wait_until
from tests.mock_anthropic import text_reply, tool_use_reply

ROW_FIELDS = {"key", "harness", "state", "name", "subdirectory", "lastActivity", "isOwned"}


@pytest.fixture
def agents(tmp_path):
    started = Agents(tmp_path / "agents")
    try:
        yield started
    finally:
        started.stop_all()


@pytest.fixture
def agents_home(tmp_path):
    home = tmp_path / "agents-home"  # not the daemon's HOME: these are nobody's chats
    home.mkdir()
    return home


def _list(daemon, hostname="app.localhost", **query):
    query = query or {"pageURL": daemon.page(hostname), "chatTarget": "project"}
    return daemon.request("GET", f"/__devhost__/agents?{urlencode(query)}", host=daemon.host(hostname), origin=None)


def _wait_list(daemon, predicate, what, timeout=60):
    def check():
        status, answer = _list(daemon)
        assert status == 200, answer
        return answer if predicate(answer["agents"]) else None
    return wait_until(check, timeout=timeout, what=what)


def _control(daemon) -> str:
    return daemon.control_origin.removeprefix("http://")


def _stream(daemon, query=None):
    query = query or daemon.query()
    ws = websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/agents/activity?{query}",
                                     host=_control(daemon), origin=daemon.control_origin, timeout=30)
    return Stream(ws)


class Stream:
    def __init__(self, ws):
        self.ws = ws
        self.messages = []

    def wait_for(self, predicate, timeout=60, what="a message"):
        deadline = time.monotonic() + timeout
        for message in self.messages:
            if predicate(message):
                return message
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                got = [(m['eventType'], m.get('text', '')[:40]) for m in self.messages]
                raise AssertionError(f"no {what}; got {got}")
            self.ws.settimeout(remaining)
            message = json.loads(self.ws.recv())
            self.messages.append(message)
            if predicate(message):
                return message

    def close(self):
        self.ws.close()


def test_a_chat_session_is_an_owned_agent_and_its_approval_is_waiting(daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch made.txt", "description": "Create a file"}), text_reply("done"))
    record = daemon.create_session()
    answer = _wait_list(daemon, lambda rows: any(r["harness"] == "claude-code" and r["state"] == "idle"
                                                 for r in rows), "the chat's CLI, ready")
    [row] = answer["agents"]
    assert set(row) <= ROW_FIELDS and row["isOwned"] is True and row["subdirectory"] == "."
    assert isinstance(row["lastActivity"], int)

    sock = daemon.connect(record["id"])
    sock.send_message("please make the file")
    state = sock.wait_status("requires_action")
    answer = _wait_list(daemon, lambda rows: rows and rows[0]["state"] == "waiting", "the pending approval")
    assert answer["agents"][0]["key"] == row["key"]  # the same row while the agent runs
    status, raw = daemon.request("GET", f"/__devhost__/agents?{daemon.query()}", origin=None)
    text = json.dumps(raw)
    native = daemon.sessions()[0].get("nativeSessionId")
    assert native and native not in text and ".jsonl" not in text and "/" not in text.replace(". ", "")
    [request_id] = state["pendingRequestIds"]
    sock.send({"type": "respond", "requestId": request_id, "result": {"behavior": "allow", "updatedInput":
               {"command": "touch made.txt", "description": "Create a file"}}})
    sock.wait_status("idle")
    sock.close()


def test_other_agents_in_the_directory_are_listed_unowned_with_their_subdirectory(daemon, agents, agents_home,
                                                                                   stack, openai):
    project = stack / "project"
    (project / "web").mkdir()
    agents.fake("pi", project / "web", agents_home)
    agents.fake("opencode", stack / "other", agents_home)  # another service's checkout
    record = daemon.create_session(harness="codex")
    answer = _wait_list(daemon, lambda rows: len(rows) == 2 and rows[-1]["state"] == "idle",
                        "the pi and the codex chat, ready")
    rows = {r["harness"]: r for r in answer["agents"]}
    assert rows["pi"] == {**rows["pi"], "subdirectory": "web", "isOwned": False, "state": "unknown"}
    assert rows["codex"]["isOwned"] is True and rows["codex"]["subdirectory"] == "."
    assert [r["harness"] for r in answer["agents"]] == ["pi", "codex"]  # unknown before idle
    status, other = _list(daemon, "other.localhost")
    assert status == 200 and [r["harness"] for r in other["agents"]] == ["opencode"]
    daemon.close_session(record["id"])


def test_the_agents_list_follows_the_chat_routes_rules(daemon):
    status, answer = _list(daemon, "other.localhost", pageURL=daemon.page("app.localhost"), chatTarget="project")
    assert status == 400 and "pageURL" in answer["error"]
    status, answer = _list(daemon, pageURL=daemon.page(), chatTarget="nowhere")
    assert status == 400 and answer["error"]
    status, answer = _list(daemon, pageURL="not a url", chatTarget="project")
    assert status == 400
    status, answer = daemon.request("GET", f"/__devhost__/agents?{daemon.query()}", host=_control(daemon),
                                    origin=None)
    assert status == 200 and answer == {"agents": []}
    status, answer = daemon.request("POST", f"/__devhost__/agents?{daemon.query()}", {})
    assert 400 <= status < 500 and answer["error"]  # as every other route: a JSON refusal, never a 500


def test_activity_answers_only_on_the_control_origin(daemon):
    for hostname in ("app.localhost", "other.localhost"):
        for path in (f"/__devhost__/agents/activity?{daemon.query(hostname)}", "/__devhost__/agents/activity.js"):
            status, answer = daemon.request("GET", path, host=daemon.host(hostname), origin=None)
            assert status == 403 and "control origin" in answer["error"]
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(
                f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/agents/activity?{daemon.query(hostname)}",
                host=daemon.host(hostname), origin=f"http://{daemon.host(hostname)}")
        assert refused.value.status_code == 403
    status, page = daemon.request("GET", f"/__devhost__/agents/activity?{daemon.query()}", host=_control(daemon),
                                  origin=None)
    assert status == 200 and "Agent activity" in page
    status, _ = daemon.request("GET", "/__devhost__/agents/activity?pageURL=x", host=_control(daemon), origin=None)
    assert status == 400
    # The stream needs the control origin as Origin too (a page elsewhere cannot open it).
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/agents/activity?{daemon.query()}",
                                    host=_control(daemon), origin=f"http://{daemon.host()}")
    assert refused.value.status_code == 403
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/agents/activity?chatTarget=project",
                                    host=_control(daemon), origin=daemon.control_origin)
    assert refused.value.status_code == 400


def test_the_stream_sends_events_in_order_as_a_transcript_grows(daemon, agents, agents_home, stack):
    project = stack / "project"
    agents.fake("pi", project, agents_home)
    path = pi_session_path(agents_home, project)
    append_jsonl(path, pi_header(project), pi_message("user", text="said before the stream opened"))
    stream = _stream(daemon)
    try:
        wait_until(lambda: _list(daemon)[1]["agents"], what="the pi in the list")  # the stream's scan ran
        words = [pi_message("user", text=f"message {n}") for n in range(20)]
        append_jsonl(path, *words[:10])
        append_jsonl(path, *words[10:], pi_message("toolResult", text="ü" * 3000, tool="bash"))
        stream.wait_for(lambda m: m["eventType"] == "tool_result", what="the tool result")
        texts = [m.get("text") for m in stream.messages if m["eventType"] == "turn_start"]
        assert texts == [f"message {n}" for n in range(20)]  # nothing from before, nothing out of order
        result = stream.messages[-1]
        assert result["harness"] == "pi" and result["role"] == "tool" and result["toolName"] == "bash"
        assert len(result["text"].encode("utf-8")) <= 4096 and result["text"].endswith("…")
        assert set(result) == {"harness", "pid", "eventType", "timestamp", "role", "toolName", "text", "isError"}
    finally:
        stream.close()


def test_the_stream_carries_this_daemons_chats_and_replays_a_resumed_session(daemon, mock):
    mock.add(text_reply("First answer."), text_reply("Second answer."))
    stream = _stream(daemon)
    try:
        record = daemon.create_session()
        sock = daemon.connect(record["id"])
        sock.send_message("first question")
        sock.wait_status("idle")
        start = stream.wait_for(lambda m: m["eventType"] == "turn_start", what="the chat's prompt")
        assert start["harness"] == "claude-code" and start["text"].startswith("first question")
        stream.wait_for(lambda m: m["eventType"] == "turn_end" and m["text"] == "First answer.", what="its reply")
        native = daemon.sessions()[0]["nativeSessionId"]
        sock.close()
        daemon.close_session(record["id"])
        stream.wait_for(lambda m: m["eventType"] == "run_exited" and m["pid"] == start["pid"], what="run_exited")

        resumed = daemon.create_session(resumeId=native)
        again = stream.wait_for(lambda m: m["eventType"] == "run_started" and m["pid"] != start["pid"],
                                what="the resumed CLI")
        sock = daemon.connect(resumed["id"])
        sock.send_message("second question")
        sock.wait_status("idle")
        stream.wait_for(lambda m: m["eventType"] == "turn_end" and m["text"] == "Second answer.", what="the reply")
        replay = [(m["eventType"], m.get("text", "")[:15]) for m in stream.messages
                  if m["pid"] == again["pid"] and m["eventType"] in ("turn_start", "turn_end")]
        assert replay == [("turn_start", "first question\n"), ("turn_end", "First answer."),
                          ("turn_start", "second question"), ("turn_end", "Second answer.")]
        sock.close()
    finally:
        stream.close()

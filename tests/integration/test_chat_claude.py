"""The Chat API end to end: a real devhostd driving the real Claude Code CLI against a mock model.

Each test reads as one thing a page (or a person) does, and what it must see.
"""
from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

from tests.integration.daemon import processes_with, tagged_processes, wait_until
from tests.mock_anthropic import error_reply, message_text, text_reply, tool_use_reply


def _turn_result(sock):
    return sock.wait_event(lambda p: p["type"] == "result", what="the turn's result")


def test_a_plain_turn_streams_native_events_and_ends_idle(daemon, mock):
    mock.add(text_reply("Hello ", "from the mock."))
    record = daemon.create_session()
    assert record["status"] == "starting" and record["harness"] == "claude-code"
    assert record["projectRootPath"].endswith("/project")
    sock = daemon.connect(record["id"])
    assert sock.snapshot["session"]["id"] == record["id"]
    assert sock.snapshot["pendingRequestIds"] == [] and sock.snapshot["events"] == []

    command_id = sock.send_message("hello there")
    ack = sock.result_for(command_id)
    assert ack == {"type": "command_result", "sessionId": record["id"], "commandId": command_id,
                   "delivery": "queued"}
    result = _turn_result(sock)
    assert result.get("is_error") is False and result["result"] == "Hello from the mock.", result
    sock.wait_status("idle")

    # The commandId (a lowercase UUID) became the native message id: lifecycle and echo carry it.
    events = sock.events()
    assert {"queued", "started"} <= {e["state"] for e in events if e["type"] == "command_lifecycle"
                                     and e["command_uuid"] == command_id}
    assert any(e["type"] == "user" and e.get("isReplay") and e["uuid"] == command_id for e in events)
    deltas = [e for e in events if e["type"] == "stream_event" and e["event"]["type"] == "content_block_delta"]
    assert "".join(d["event"]["delta"]["text"] for d in deltas) == "Hello from the mock."
    sequences = [f["sequence"] for f in sock.frames if f["type"] == "event"]
    assert sequences == list(range(1, len(sequences) + 1))

    # The model saw the text and the appended devhost prompt, as a labelled section.
    sent = message_text(mock.requests[0])
    assert "hello there" in sent and "Instructions from devhost" in sent

    listed = daemon.sessions()
    assert [(s["id"], s["status"]) for s in listed] == [(record["id"], "idle")]
    assert listed[0]["nativeSessionId"] == result["session_id"]

    # A page that reloads reads the same frames from the snapshot.
    # (The prompt's "completed" lifecycle frame may land after the result, so compare a prefix.)
    again = daemon.connect(record["id"])
    live = [f for f in sock.frames if f["type"] == "event"]
    assert again.snapshot["events"][:len(live)] == live
    again.close()
    sock.close()


def test_a_message_sent_during_a_turn_is_queued_then_started(daemon, mock):
    mock.add(text_reply(*["word "] * 30, delay=0.15), text_reply("Answer to the second message."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    first = sock.send_message("first message")
    assert sock.result_for(first)["delivery"] == "queued"
    sock.wait_event(lambda p: p["type"] == "stream_event" and p["event"]["type"] == "content_block_delta",
                    what="the first reply streaming")
    second = sock.send_message("second message")
    assert sock.result_for(second)["delivery"] == "queued"
    started = sock.wait_event(lambda p: p["type"] == "command_lifecycle" and p["command_uuid"] == second
                              and p["state"] == "started", what="the second message starting")
    assert started
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "Answer to the second message.")
    sock.wait_status("idle")
    assert "second message" in message_text(mock.requests[1])
    sock.close()


def test_sends_from_one_socket_are_acknowledged_in_order(daemon, mock):
    mock.add(text_reply("one"), text_reply("two"), text_reply("three"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    ids = [sock.send_message(f"message {n}") for n in range(3)]
    results = [sock.result_for(command_id) for command_id in ids]
    assert [r["delivery"] for r in results] == ["queued"] * 3
    order = [f["commandId"] for f in sock.frames if f["type"] == "command_result"]
    assert order == ids
    sock.close()


def test_an_approval_is_answered_allow_through_respond(daemon, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": "touch made_by_tool.txt", "description": "Create a file"}),
             text_reply("done"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("please make the file")
    state = sock.wait_status("requires_action")
    [request_id] = state["pendingRequestIds"]
    request = sock.wait_event(lambda p: p["type"] == "control_request", what="can_use_tool")
    assert request["request_id"] == request_id and request["request"]["subtype"] == "can_use_tool"

    # A reconnecting page learns which request still needs an answer.
    other = daemon.connect(record["id"])
    assert other.snapshot["pendingRequestIds"] == [request_id]
    assert other.snapshot["session"]["status"] == "requires_action"
    other.close()

    sock.send({"type": "respond", "requestId": request_id,
               "result": {"behavior": "allow", "updatedInput": request["request"]["input"]}})
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "done")
    assert (stack / "project" / "made_by_tool.txt").exists()
    state = sock.wait_status("idle")
    assert state["pendingRequestIds"] == []

    # Answering it again is refused: it is no longer pending.
    sock.send({"type": "respond", "requestId": request_id, "result": {"behavior": "allow"}})
    error = sock.wait_for(lambda f: f["type"] == "error")
    assert "not pending" in error["message"]
    sock.close()


def test_an_approval_is_answered_deny_through_respond(daemon, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": "touch denied.txt", "description": "Create a file"}),
             text_reply("understood"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    state = sock.wait_status("requires_action")
    [request_id] = state["pendingRequestIds"]
    sock.send({"type": "respond", "requestId": request_id,
               "result": {"behavior": "deny", "message": "The user said no."}})
    tool_result = sock.wait_event(
        lambda p: p["type"] == "user" and isinstance(p["message"]["content"], list)
        and p["message"]["content"][0].get("type") == "tool_result", what="the denied tool_result")
    assert tool_result["message"]["content"][0]["is_error"] is True
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "understood")
    assert not (stack / "project" / "denied.txt").exists()
    assert "The user said no." in message_text(mock.requests[1])
    sock.close()


def test_respond_to_an_unknown_request_is_refused(daemon, mock):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send({"type": "respond", "requestId": "not-a-request", "result": {"behavior": "allow"}})
    assert "not pending" in sock.wait_for(lambda f: f["type"] == "error")["message"]
    sock.close()


def test_interrupt_stops_a_slow_stream_and_cancels_queued_input(daemon, mock):
    mock.add(text_reply(*["slow "] * 60, delay=0.2), text_reply("must never run"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    first = sock.send_message("tell me a long story")
    sock.wait_event(lambda p: p["type"] == "stream_event" and p["event"]["type"] == "content_block_delta")
    queued = sock.send_message("and then this")
    assert sock.result_for(queued)["delivery"] == "queued"
    sock.send({"type": "interrupt"})
    sock.wait_event(lambda p: p["type"] == "result", what="the interrupted result")
    sock.wait_event(lambda p: p["type"] == "command_lifecycle" and p["command_uuid"] == queued
                    and p["state"] == "cancelled", what="the queued message cancelled")
    state = sock.wait_status("idle")
    assert "error" not in state["session"]
    assert first
    assert len(mock.requests) == 1  # the queued message never reached the model
    sock.close()


def test_close_then_resume_brings_the_earlier_conversation_back(daemon, mock, stack):
    mock.add(text_reply("I will remember the word pelican."), text_reply("You said pelican."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("remember the word pelican")
    result = _turn_result(sock)
    native_id = result["session_id"]

    status, closed = daemon.close_session(record["id"])
    assert status == 200 and closed["status"] == "closed"
    assert sock.wait_closed() == 1000

    resumed = daemon.create_session(resumeId=native_id)
    assert resumed["nativeSessionId"] == native_id and resumed["id"] != record["id"]
    # The resumed session replaces the closed one of the same conversation in the list.
    assert [s["id"] for s in daemon.sessions()] == [resumed["id"]]
    sock2 = daemon.connect(resumed["id"])
    sock2.send_message("what word did I say?")
    assert _turn_result(sock2)["result"] == "You said pelican."
    history = message_text(mock.requests[1])
    assert "remember the word pelican" in history and "I will remember the word pelican." in history
    sock2.close()


def test_resume_of_another_projects_conversation_is_refused(daemon, mock):
    mock.add(text_reply("ok"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("hi")
    native_id = _turn_result(sock)["session_id"]
    sock.close()
    daemon.close_session(record["id"])
    status, body = daemon.request("POST", "/__devhost__/chat/sessions",
                                  {"harness": "claude-code", "pageURL": daemon.page("other.localhost"),
                                   "target": "project", "resumeId": native_id}, host=daemon.host("other.localhost"))
    assert status == 400 and "another project" in body["error"]
    status, body = daemon.request("POST", "/__devhost__/chat/sessions",
                                  {"harness": "claude-code", "pageURL": daemon.page(), "target": "project",
                                   "resumeId": str(uuid.uuid4())})
    assert status == 404 and "no saved conversation" in body["error"]


def test_an_is_error_result_sets_error_with_the_clis_text_and_the_next_message_clears_it(daemon, mock):
    mock.add(error_reply(400, "invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum"),
             text_reply("fine again"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("a huge prompt")
    result = _turn_result(sock)
    assert result["is_error"] is True
    state = sock.wait_status("error")
    assert state["session"]["error"] == result["result"]
    assert "too long" in state["session"]["error"].lower()
    sock.send_message("try again")
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "fine again")
    state = sock.wait_status("idle")
    assert "error" not in state["session"]
    sock.close()


def test_a_cli_that_is_not_signed_in_fails_at_its_first_turn(daemon, mock):
    mock.add(error_reply(401, "authentication_error", "invalid x-api-key", times=None))
    status, harnesses = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}")
    assert status == 200
    claude = next(h for h in harnesses["harnesses"] if h["id"] == "claude-code")
    assert claude["available"] is True and claude["models"]  # discovery sends no prompt
    assert mock.requests == []
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("hello")
    state = sock.wait_status("error", timeout=90)
    assert "api key" in state["session"]["error"].lower()
    sock.close()


def test_closing_a_session_closes_its_sockets_with_1000_and_ends_the_cli(daemon, mock, daemon_env):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.wait_status("idle")
    status, closed = daemon.close_session(record["id"])
    assert status == 200 and closed["status"] == "closed"
    assert sock.wait_closed() == 1000
    wait_until(lambda: not tagged_processes(record["id"]), what="the CLI to end")
    assert [s["status"] for s in daemon.sessions()] == ["closed"]


def test_stopping_the_daemon_closes_sockets_with_1001_and_exits_0(daemon, mock):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.wait_status("idle")
    daemon.proc.send_signal(15)
    assert sock.wait_closed() == 1001
    assert daemon.stop() == 0


def test_a_tool_child_that_ignores_sigterm_leaves_no_process_behind(daemon, mock):
    marker = f"{uuid.uuid4().int % 10**6:06d}"  # unique sleep lengths name the test's processes
    # The tool backgrounds a child in a session of its own that ignores SIGTERM, then the turn
    # blocks on a second, foreground child that ignores SIGTERM too.
    command = (f"setsid sh -c 'trap \"\" TERM; exec sleep 4000.{marker}' >/dev/null 2>&1 & "
               f"sh -c 'trap \"\" TERM; sleep 4001.{marker}; true'")
    mock.add(tool_use_reply("Bash", {"command": command, "description": "Start a stubborn process"}))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("run it")
    state = sock.wait_status("requires_action")
    [request_id] = state["pendingRequestIds"]
    sock.send({"type": "respond", "requestId": request_id, "result": {"behavior": "allow"}})
    wait_until(lambda: processes_with(f"sleep 4000.{marker}") and processes_with(f"sleep 4001.{marker}"),
               what="the stubborn processes to start")
    status, _ = daemon.close_session(record["id"])
    assert status == 200
    wait_until(lambda: not processes_with(f".{marker}") and not tagged_processes(record["id"]), timeout=30,
               what="every process of the session to end")
    sock.close()


def test_a_cli_that_dies_mid_turn_sets_error_and_the_next_message_resumes_its_conversation(daemon, mock, daemon_env):
    mock.add(text_reply("The secret is walrus. ", *["more "] * 50, delay=0.2), text_reply("Back again."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("remember walrus")
    native_id = sock.wait_event(lambda p: p["type"] == "stream_event"
                                and p["event"]["type"] == "content_block_delta")["session_id"]
    # Kill it once it has saved the conversation (the CLI writes its transcript as it goes).
    transcripts = Path(daemon_env["HOME"], ".claude", "projects")
    wait_until(lambda: any("remember walrus" in p.read_text() for p in transcripts.glob(f"*/{native_id}.jsonl")),
               what="the transcript")
    for pid in tagged_processes(record["id"]):
        os.kill(pid, signal.SIGKILL)
    state = sock.wait_status("error")
    assert "killed by signal 9" in state["session"]["error"]
    sock.send_message("are you back?")
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "Back again.")
    assert "remember walrus" in message_text(mock.requests[1])  # the same conversation, resumed
    assert sock.wait_status("idle")["session"]["nativeSessionId"] == state["session"]["nativeSessionId"]
    sock.close()

"""The Chat API end to end on Codex: a real devhostd driving the real `codex app-server`.

The same surface as Claude Code's: sessions over HTTP, native frames on the socket, delivery
acknowledgements, approvals through respond, interrupts, failures, resume.
"""
from __future__ import annotations

import base64

from tests.integration.test_chat_send import data_url, tiny_png
from tests.mock_openai import error_reply, message_text, shell_reply, text_reply


def _codex(daemon, **fields):
    return daemon.create_session(harness="codex", **fields)


def _completed(sock, status=None, nth=1):
    """The ``nth`` turn/completed of this socket (waiting for it), checked against ``status``."""
    seen = []

    def is_nth(payload):
        if payload.get("method") == "turn/completed" and id(payload) not in seen:
            seen.append(id(payload))
        return payload.get("method") == "turn/completed" and len(seen) == nth and seen[-1] == id(payload)
    turn = sock.wait_event(is_nth, what=f"turn/completed #{nth}")["params"]["turn"]
    if status is not None:
        assert turn["status"] == status, turn
    return turn


def _agent_text(sock) -> str:
    done = [p["params"]["item"] for p in sock.events()
            if p.get("method") == "item/completed" and p["params"]["item"]["type"] == "agentMessage"]
    return done[-1]["text"] if done else ""


def test_a_text_turn_streams_codex_frames_and_reports_the_thread(daemon, openai):
    openai.add(text_reply("Hello ", "from Codex."))
    record = _codex(daemon)
    assert record["harness"] == "codex" and record["status"] == "starting"
    sock = daemon.connect(record["id"])
    command_id = sock.send_message("say hello")
    assert sock.result_for(command_id)["delivery"] in ("queued", "started")
    _completed(sock, "completed")
    assert _agent_text(sock) == "Hello from Codex."
    state = sock.wait_status("idle")
    thread_id = state["session"]["nativeSessionId"]
    assert thread_id
    # The commandId came back as the userMessage item's clientId (the native message id).
    picked_up = sock.wait_event(lambda p: p.get("method") == "item/started"
                                and p["params"]["item"]["type"] == "userMessage")
    assert picked_up["params"]["item"]["clientId"] == command_id
    assert "say hello" in message_text(openai.requests[0])
    assert "Instructions from devhost" in message_text(openai.requests[0])
    assert [s["nativeSessionId"] for s in daemon.sessions()] == [thread_id]
    sock.close()


def test_a_message_during_a_turn_is_steered_in_queued_then_started(daemon, openai):
    openai.add(text_reply(*["story "] * 40, delay=0.15), text_reply("Short now."))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    first = sock.send_message("tell me a long story")
    sock.result_for(first)
    sock.wait_event(lambda p: p.get("method") == "item/agentMessage/delta", what="the story streaming")
    second = sock.send_message("keep it short")
    assert sock.result_for(second)["delivery"] == "queued"  # the turn/steer answer
    steered = sock.wait_event(lambda p: p.get("method") == "item/started"
                              and p["params"]["item"].get("clientId") == second, what="the steer picked up")
    assert steered["params"]["item"]["type"] == "userMessage"
    turn = _completed(sock, "completed")
    assert _agent_text(sock) == "Short now."
    assert "keep it short" in message_text(openai.requests[1])
    # One turn took both messages.
    assert len({p["params"]["turnId"] for p in sock.events() if p.get("method") == "item/started"
                and p["params"]["item"]["type"] == "userMessage"}) == 1 == len([turn])
    sock.wait_status("idle")
    sock.close()


def test_interrupt_ends_the_turn_interrupted_and_the_session_idle(daemon, openai):
    openai.add(text_reply(*["slow "] * 60, delay=0.2), text_reply("after"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("go slowly")
    sock.wait_event(lambda p: p.get("method") == "item/agentMessage/delta")
    sock.send({"type": "interrupt"})
    _completed(sock, "interrupted")
    state = sock.wait_status("idle")
    assert "error" not in state["session"]
    sock.send_message("and now?")
    _completed(sock, "completed", nth=2)
    assert "<turn_aborted>" in message_text(openai.requests[1])
    sock.close()


def _approval(sock):
    state = sock.wait_status("requires_action")
    [request_id] = state["pendingRequestIds"]
    request = sock.wait_event(lambda p: p.get("method") == "item/commandExecution/requestApproval")
    assert request["id"] == request_id and isinstance(request_id, int)
    return request_id


def test_a_shell_approval_answered_accept_runs_the_command(daemon, openai, stack):
    openai.add(shell_reply("touch approved.txt", justification="needs to write"), text_reply("done"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    request_id = _approval(sock)
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "accept"}})
    _completed(sock, "completed")
    assert (stack / "project" / "approved.txt").exists()
    assert sock.wait_status("idle")["pendingRequestIds"] == []
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "accept"}})
    assert "not pending" in sock.wait_for(lambda f: f["type"] == "error")["message"]
    sock.close()


def test_a_shell_approval_answered_decline_does_not_run_it(daemon, openai, stack):
    openai.add(shell_reply("touch declined.txt", justification="needs to write"), text_reply("ok, not doing it"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    request_id = _approval(sock)
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "decline"}})
    _completed(sock, "completed")
    declined = sock.wait_event(lambda p: p.get("method") == "item/completed"
                               and p["params"]["item"]["type"] == "commandExecution")
    assert declined["params"]["item"]["status"] == "declined"
    assert not (stack / "project" / "declined.txt").exists()
    sock.close()


def test_an_approval_cancelled_by_an_interrupt_can_no_longer_be_answered(daemon, openai, stack):
    openai.add(shell_reply("touch never.txt", justification="needs to write"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    request_id = _approval(sock)
    sock.send({"type": "interrupt"})
    _completed(sock, "interrupted")
    sock.wait_event(lambda p: p.get("method") == "serverRequest/resolved")
    assert sock.wait_status("idle")["pendingRequestIds"] == []
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "accept"}})
    assert "not pending" in sock.wait_for(lambda f: f["type"] == "error")["message"]
    assert not (stack / "project" / "never.txt").exists()
    sock.close()


def test_an_approval_answer_that_would_outlast_the_chat_is_refused(daemon, openai):
    openai.add(shell_reply("touch policy.txt", justification="needs to write"), text_reply("done"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    request_id = _approval(sock)
    amendment = {"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch"]}}}
    sock.send({"type": "respond", "requestId": request_id, "result": amendment})
    assert "decision" in sock.wait_for(lambda f: f["type"] == "error")["message"]
    assert sock.snapshot is not None and request_id in daemon.connect(record["id"]).snapshot["pendingRequestIds"]
    sock.send({"type": "respond", "requestId": request_id, "result": {"decision": "accept"}})
    _completed(sock, "completed")
    sock.close()


def test_a_401_fails_the_turn_with_codexs_message_and_the_next_message_clears_it(daemon, openai):
    openai.add(error_reply(401, "Incorrect API key provided"), text_reply("signed in again"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("hello")
    _completed(sock, "failed")
    state = sock.wait_status("error")
    assert "401" in state["session"]["error"] and "Incorrect API key" in state["session"]["error"]
    sock.send_message("again")
    _completed(sock, "completed", nth=2)
    assert "error" not in sock.wait_status("idle")["session"]
    sock.close()


def test_a_500_fails_the_turn_with_codexs_message(daemon, openai):
    openai.add(error_reply(500, "boom"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("hello")
    _completed(sock, "failed")
    assert sock.wait_status("error")["session"]["error"]
    sock.close()


def test_close_then_resume_continues_the_thread(daemon, openai):
    openai.add(text_reply("Noted: the word is heron."), text_reply("You said heron."))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("remember the word heron")
    _completed(sock, "completed")
    thread_id = sock.wait_status("idle")["session"]["nativeSessionId"]
    status, closed = daemon.close_session(record["id"])
    assert status == 200 and closed["status"] == "closed"
    assert sock.wait_closed() == 1000

    resumed = _codex(daemon, resumeId=thread_id)
    assert resumed["nativeSessionId"] == thread_id
    assert [s["id"] for s in daemon.sessions()] == [resumed["id"]]
    sock2 = daemon.connect(resumed["id"])
    sock2.send_message("what was the word?")
    _completed(sock2, "completed")
    history = message_text(openai.requests[1])
    assert "remember the word heron" in history and "Noted: the word is heron." in history
    assert sock2.wait_status("idle")["session"]["nativeSessionId"] == thread_id
    sock2.close()


def test_a_thread_of_another_project_is_refused(daemon, openai):
    openai.add(text_reply("ok"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("hi")
    _completed(sock)
    thread_id = sock.wait_status("idle")["session"]["nativeSessionId"]
    sock.close()
    daemon.close_session(record["id"])
    status, body = daemon.request("POST", "/__devhost__/chat/sessions",
                                  {"harness": "codex", "pageURL": daemon.page("other.localhost"),
                                   "target": "project", "resumeId": thread_id}, host=daemon.host("other.localhost"))
    assert status == 400 and "another project" in body["error"]


def test_a_png_reaches_codex_as_image_input(daemon, openai):
    openai.add(text_reply("a pixel"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("what is this?", images=[{"dataURL": data_url("image/png", tiny_png())}])
    _completed(sock, "completed")
    images = [part for item in openai.requests[0]["input"] if isinstance(item.get("content"), list)
              for part in item["content"] if part.get("type") == "input_image"]
    [image] = images
    assert image["image_url"] == "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    sock.close()


def test_a_model_chosen_on_send_reaches_the_next_turn(daemon, openai):
    openai.add(text_reply("one"), text_reply("two"))
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("first", model="gpt-5.5-mini")
    _completed(sock)
    sock.send_message("second", model="")
    _completed(sock, nth=2)
    assert openai.requests[0]["model"] == "gpt-5.5-mini"
    assert openai.requests[1]["model"] == "gpt-5.5"  # "" went back to the configured model
    sock.close()


def test_closing_a_codex_session_ends_its_process(daemon, openai):
    from tests.integration.daemon import tagged_processes, wait_until
    record = _codex(daemon)
    sock = daemon.connect(record["id"])
    sock.wait_status("idle")
    assert tagged_processes(record["id"])
    daemon.close_session(record["id"])
    assert sock.wait_closed() == 1000
    wait_until(lambda: not tagged_processes(record["id"]), what="codex to end")

"""The Chat API end to end on an ACP agent: a real devhostd driving the real ``opencode acp``.

The manifest names the agent (``[devtools.chat.opencode] protocol = "acp"``); OpenCode runs with
tests/acp_peers.py's environment against the same Responses mock as Codex, with its own config's
default rules (which ask nothing): devhostd starts it asking before every edit and command
(actors/harness/acp ASKING_ENVIRONMENT), so the session's runtime mode decides. The same
surface as the two CLIs': sessions over HTTP, the agent's own JSON-RPC frames on the chat
socket, the core's items on the thread socket, approvals through respond, interrupts, resume.
"""
from __future__ import annotations

import base64
import json
import signal

import pytest

from tests.acp_peers import OPENCODE, TITLE_MARKER, opencode_env, require_opencode
from tests.integration.daemon import Daemon, processes_with_env, tagged_processes, wait_until, write_manifest
from tests.integration.test_chat_send import data_url, tiny_png
from tests.mock_openai import MockOpenAI, Reply, _new_id, message_text, text_reply
from tests.tiers import needs

HARNESS = "opencode"
LABEL = "OpenCode"


@pytest.fixture
def stack(tmp_path):
    """The integration stack, its manifest naming OpenCode as an ACP agent."""
    require_opencode()
    manifest = write_manifest(tmp_path)
    manifest.write_text(manifest.read_text() + f'[devtools.chat.{HARNESS}]\nprotocol = "acp"\n'
                        f'command = [{json.dumps(str(OPENCODE))}, "acp"]\nlabel = "{LABEL}"\n')
    return tmp_path


@pytest.fixture
def openai():
    """The Responses mock; OpenCode's title requests (one per new session) answered beside the
    turns' script, so they never take a turn's reply."""
    server = MockOpenAI()
    server.route(TITLE_MARKER, *[text_reply("A title")] * 20)
    server.start()
    yield server
    server.stop()


@pytest.fixture
@needs("peers")
def daemon_env(daemon_env, tmp_path, openai):
    """The conftest's environment (both CLIs, the hub's monitor) with OpenCode's in the same
    HOME: its config, XDG folders and switches, its folder first on PATH."""
    env = dict(daemon_env)
    opencode = opencode_env(tmp_path / "home", openai.url)
    path = opencode.pop("PATH")
    assert opencode["HOME"] == env["HOME"]
    env.update(opencode, PATH=f"{path.split(':', 1)[0]}:{env['PATH']}")
    return env


def turns(openai) -> list[dict]:
    """The model requests of turns (OpenCode's title requests left out)."""
    return [body for body in openai.requests if TITLE_MARKER not in json.dumps(body)]


def bash_reply(command: str) -> Reply:
    """A ``function_call`` of OpenCode's own ``bash`` tool (tests/fixtures/record_acp_frames.py)."""
    return Reply([{"type": "function_call", "name": "bash", "call_id": _new_id("call_mock_"),
                   "arguments": json.dumps({"command": command, "description": "Run it"})}])


def _opencode(daemon, **fields) -> dict:
    return daemon.create_session(harness=HARNESS, **fields)


def _updates(sock, kind: str) -> list[dict]:
    return [p["params"]["update"] for p in sock.events()
            if p.get("method") == "session/update" and p["params"]["update"].get("sessionUpdate") == kind]


def _agent_text(sock) -> str:
    return "".join(u["content"].get("text", "") for u in _updates(sock, "agent_message_chunk"))


def _prompt_answer(sock, nth: int = 1) -> dict:
    """The ``nth`` answer to a session/prompt on this socket: ``{stopReason, usage}``."""
    def answers():
        return [p for p in sock.events() if "method" not in p and "stopReason" in (p.get("result") or {})]
    sock.wait_for(lambda f: len(answers()) >= nth, what=f"session/prompt answer #{nth}")
    return answers()[nth - 1]["result"]


@needs("peers")
def test_the_harness_list_names_the_manifests_agent_with_its_label_beside_the_two_clis(daemon):
    status, answer = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}")
    assert status == 200, answer
    listed = {h["id"]: h for h in answer["harnesses"]}
    assert {"claude-code", "codex", HARNESS} <= set(listed)
    assert listed[HARNESS]["label"] == LABEL


@needs("peers")
def test_a_text_turn_streams_the_agents_frames_and_items_and_ends_idle(daemon, openai):
    openai.add(text_reply("Hello ", "from ", "OpenCode."))
    record = _opencode(daemon)
    assert record["harness"] == HARNESS
    sock = daemon.connect(record["id"])
    thread = daemon.connect_thread(record["id"])
    command_id = sock.send_message("say hello")
    assert sock.result_for(command_id)["delivery"] in ("queued", "started")
    assert _prompt_answer(sock)["stopReason"] == "end_turn"
    assert _agent_text(sock) == "Hello from OpenCode."
    thread.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done", what="the turn done")
    assert [i["text"] for i in thread.items().values() if i["kind"] == "assistant"] == ["Hello from OpenCode."]
    state = sock.wait_status("idle")
    assert state["session"]["nativeSessionId"].startswith("ses_")
    assert "say hello" in message_text(turns(openai)[0])
    sock.close()
    thread.close()


def _permission(sock) -> dict:
    """The agent's session/request_permission, once the session waits on it alone."""
    state = sock.wait_status("requires_action")
    [request_id] = state["pendingRequestIds"]
    request = sock.wait_event(lambda p: p.get("method") == "session/request_permission", what="the permission ask")
    assert request["id"] == request_id
    assert request["params"]["toolCall"]["kind"] == "execute"
    return request


def _choose(request: dict, kind: str) -> dict:
    option = next(o for o in request["params"]["options"] if o["kind"] == kind)
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


@needs("peers")
def test_a_shell_command_the_person_allows_through_respond_runs(daemon, openai, stack):
    openai.add(bash_reply("touch allowed.txt"), text_reply("The file is there."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("make a file")
    request = _permission(sock)
    assert "touch allowed.txt" in json.dumps(request["params"]["toolCall"])
    sock.send({"type": "respond", "requestId": request["id"], "result": _choose(request, "allow_once")})
    assert _prompt_answer(sock)["stopReason"] == "end_turn"
    assert (stack / "project" / "allowed.txt").exists()
    assert _agent_text(sock) == "The file is there."
    assert sock.wait_status("idle")["pendingRequestIds"] == []
    sock.send({"type": "respond", "requestId": request["id"], "result": _choose(request, "allow_once")})
    assert "not pending" in sock.wait_for(lambda f: f["type"] == "error")["message"]
    sock.close()


@needs("peers")
def test_a_shell_command_the_person_rejects_does_not_run(daemon, openai, stack):
    openai.add(bash_reply("touch rejected.txt"), text_reply("Understood, not run."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    thread = daemon.connect_thread(record["id"])
    sock.send_message("make a file")
    request = _permission(sock)
    sock.send({"type": "respond", "requestId": request["id"], "result": _choose(request, "reject_once")})
    assert _prompt_answer(sock)["stopReason"] == "end_turn"
    assert not (stack / "project" / "rejected.txt").exists()
    failed = [u for u in _updates(sock, "tool_call_update") if u.get("status") == "failed"]
    assert failed, "the rejected tool call ends failed"
    approval = thread.wait_item(lambda i: i["kind"] == "approval" and i["decision"] != "pending")
    assert approval["decision"] == "deny"
    assert sock.wait_status("idle")["pendingRequestIds"] == []
    sock.close()
    thread.close()


@needs("peers")
def test_an_interrupt_mid_reply_ends_the_turn_cancelled_and_the_agent_lives_on(daemon, openai):
    openai.add(text_reply(*["slow "] * 60, delay=0.2), text_reply("After the interrupt."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    thread = daemon.connect_thread(record["id"])
    sock.send_message("talk slowly")
    sock.wait_event(lambda p: p.get("method") == "session/update"
                    and p["params"]["update"]["sessionUpdate"] == "agent_message_chunk", what="the reply streaming")
    [agent] = _agent_processes(record["id"])
    sock.send({"type": "interrupt"})
    assert _prompt_answer(sock)["stopReason"] == "cancelled"
    turn = thread.wait_item(lambda i: i["kind"] == "turn" and i["state"] != "running", what="the turn's end")
    assert turn["state"] == "aborted", turn  # the core's word for a turn stopped by the person
    state = sock.wait_status("idle")
    assert "error" not in state["session"]
    # The same agent takes the next message; nothing else of the turn is left running.
    sock.send_message("and now?")
    assert _prompt_answer(sock, nth=2)["stopReason"] == "end_turn"
    assert _agent_processes(record["id"]) == [agent]
    daemon.close_session(record["id"])
    wait_until(lambda: not tagged_processes(record["id"]), what="the agent to end")
    sock.close()
    thread.close()


def _agent_processes(session_id: str) -> list[int]:
    """The session's tagged processes that are OpenCode itself (not a tool it runs)."""
    found = []
    for pid in tagged_processes(session_id):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"opencode") and b"acp" in argv:
            found.append(pid)
    return found


@needs("peers")
def test_close_then_resume_loads_the_agents_session_and_the_next_turn_has_the_history(daemon, openai):
    openai.add(text_reply("Noted: the word is heron."), text_reply("You said heron."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("remember the word heron")
    _prompt_answer(sock)
    native_id = sock.wait_status("idle")["session"]["nativeSessionId"]
    status, closed = daemon.close_session(record["id"])
    assert status == 200 and closed["status"] == "closed"
    assert sock.wait_closed() == 1000
    wait_until(lambda: not tagged_processes(record["id"]), what="the agent to end")

    resumed = _opencode(daemon, resumeId=native_id)
    assert resumed["nativeSessionId"] == native_id and resumed["chatId"] == record["chatId"]
    assert [s["id"] for s in daemon.sessions()] == [resumed["id"]]
    again = daemon.connect(resumed["id"])
    again.send_message("what was the word?")
    _prompt_answer(again)
    assert _agent_text(again) == "You said heron."
    history = message_text(turns(openai)[1])
    assert "remember the word heron" in history and "Noted: the word is heron." in history
    assert again.wait_status("idle")["session"]["nativeSessionId"] == native_id
    again.close()


@needs("peers")
def test_a_png_attachment_reaches_the_model_as_image_input(daemon, openai):
    openai.add(text_reply("A pixel."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("what is this?", images=[{"dataURL": data_url("image/png", tiny_png())}])
    _prompt_answer(sock)
    images = [part for item in turns(openai)[0]["input"] if isinstance(item.get("content"), list)
              for part in item["content"] if part.get("type") == "input_image"]
    [image] = images
    assert image["image_url"] == "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    sock.close()


def remembered(daemon, openai, word: str) -> tuple[dict, str]:
    """A session told to remember ``word`` (the mock notes it, then answers it back): its record
    and the agent's session id."""
    openai.add(text_reply(f"Noted: {word}."), text_reply(f"It was {word}."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message(f"remember {word}")
    _prompt_answer(sock)
    native_id = sock.wait_status("idle")["session"]["nativeSessionId"]
    sock.close()
    return record, native_id


def answered_with_context(daemon, openai, native_id: str, word: str) -> dict:
    """The conversation resumed by its session id on ``daemon``: the next message is answered,
    and the model request holds the earlier turn."""
    resumed = daemon.create_session(harness=HARNESS, resumeId=native_id)
    assert resumed["nativeSessionId"] == native_id
    sock = daemon.connect(resumed["id"])
    sock.send_message("which animal?")
    _prompt_answer(sock)
    assert _agent_text(sock) == f"It was {word}."
    assert f"remember {word}" in message_text(turns(openai)[1])
    sock.close()
    return resumed


@needs("peers")
def test_after_a_daemon_restart_the_chat_resumes_and_answers_with_its_context(daemon, openai, stack, daemon_env):
    record, native_id = remembered(daemon, openai, "lynx")
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.stop() == 0
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        [listed] = again.sessions()
        assert (listed["id"], listed["status"], listed["nativeSessionId"]) == (record["id"], "closed", native_id)
        assert answered_with_context(again, openai, native_id, "lynx")["chatId"] == record["chatId"]
    finally:
        assert again.stop() == 0
        print(again.log())


@needs("peers")
def test_a_conversation_no_chat_holds_is_resumed_in_the_pages_project_by_the_agent_itself(daemon, openai, stack,
                                                                                         daemon_env):
    _, native_id = remembered(daemon, openai, "otter")
    assert daemon.stop() == 0
    # Another state folder: no chat of devhostd's holds the conversation; only OpenCode has it.
    fresh = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "fresh-state")
    try:
        assert fresh.sessions() == []
        resumed = answered_with_context(fresh, openai, native_id, "otter")
        # The chat shows the conversation as OpenCode replayed it, before the message sent at
        # once (which went in before the replay came): nothing read twice, nothing out of order.
        thread = fresh.connect_thread(resumed["id"])
        said = [(i["kind"], i["text"]) for i in thread.snapshot["items"] if i["kind"] in ("user", "assistant")]
        assert said == [("user", "remember otter"), ("assistant", "Noted: otter."),
                        ("user", "which animal?"), ("assistant", "It was otter.")]
        thread.close()
    finally:
        assert fresh.stop() == 0
        print(fresh.log())


@needs("peers")
def test_stopping_the_daemon_mid_turn_ends_the_agent_with_it(daemon, openai, daemon_env):
    openai.add(text_reply(*["slow "] * 60, delay=0.2))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("talk slowly")
    sock.wait_event(lambda p: p.get("method") == "session/update"
                    and p["params"]["update"]["sessionUpdate"] == "agent_message_chunk", what="the reply streaming")
    assert _agent_processes(record["id"])
    daemon.proc.send_signal(signal.SIGTERM)
    assert sock.wait_closed() == 1001
    assert daemon.stop() == 0
    assert not tagged_processes(record["id"])
    assert not processes_with_env(f"HOME={daemon_env['HOME']}")


@needs("peers")
def test_a_message_during_a_turn_is_acknowledged_queued_at_once_and_answered_after_the_turn(daemon, openai):
    openai.add(text_reply(*["story "] * 30, delay=0.1), text_reply("Short now."))
    record = _opencode(daemon)
    sock = daemon.connect(record["id"])
    sock.send_message("tell me a long story")
    sock.wait_event(lambda p: p.get("method") == "session/update"
                    and p["params"]["update"]["sessionUpdate"] == "agent_message_chunk", what="the story streaming")
    second = sock.send_message("keep it short")
    # ACP cannot steer: the message waits for the turn's end, and the page is told so at once
    # (not "unconfirmed" after the acknowledgement's time).
    assert sock.result_for(second, timeout=5)["delivery"] == "queued"
    _prompt_answer(sock, nth=2)
    assert "keep it short" in message_text(turns(openai)[1])
    assert "Short now." in _agent_text(sock)
    sock.close()

"""The Chat API end to end on an ACP agent: a real devhostd driving the real ``opencode acp``.

The manifest names the agent (``[devtools.chat.opencode] protocol = "acp"``); OpenCode runs with
tests/acp_peers.py's environment against the same Responses mock as Codex, and asks before every
shell command (``permission: {"bash": "ask"}``), as devhostd's supervised mode expects. The same
surface as the two CLIs': sessions over HTTP, the agent's own JSON-RPC frames on the chat
socket, the core's items on the thread socket, approvals through respond, interrupts, resume.
"""
from __future__ import annotations

import base64
import json
import signal

import pytest

from tests.acp_peers import OPENCODE, TITLE_MARKER, opencode_env, require_opencode
from tests.integration.daemon import Daemon, tagged_processes, wait_until, write_manifest
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
    opencode = opencode_env(tmp_path / "home", openai.url, permission={"bash": "ask"})
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

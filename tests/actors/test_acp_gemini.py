"""A second real ACP agent: Gemini CLI (``gemini --acp``, pinned in tests/peers.sh) against the
Gemini API mock (tests/mock_gemini.py), driven by the chat core in-process (Registry, Chat
actors), as the manifest names it (``[devtools.chat.gemini] protocol = "acp"``). The same driver
as OpenCode's (tests/actors/test_acp_harness.py): what differs is only what the agent says."""
from __future__ import annotations

import json
import os
import urllib.request

import pytest

from actors.harness import HARNESSES
from actors.harness.acp import TESTED_VERSIONS
from tests import mock_gemini
from tests.acp_peers import GEMINI, gemini_env, pinned_gemini, require_gemini
from tests.actors.acp_host import ASK, agent_host, items_of, opened, pending_approval
from tests.actors.test_core_chat import turn_ended
from tests.integration.daemon import tagged_processes
from tests.tiers import needs


@pytest.fixture
def gemini(tmp_path, monkeypatch):
    """A mock model and Gemini's environment; ``start()`` a Registry whose ``gemini`` harness runs
    the pinned CLI."""
    require_gemini()
    mock = mock_gemini.MockGemini()
    mock.start()
    try:
        with agent_host(tmp_path, monkeypatch, "gemini", [str(GEMINI), "--acp"], "Gemini",
                        gemini_env(tmp_path / "home", mock.url)) as (project, start):
            yield mock, project, start
    finally:
        mock.stop()


def gemini_opened(registry, chat_id: str, project: str, **fields):
    return opened(registry, chat_id, project, "gemini", **fields)


@needs("peers")
def test_the_pinned_version_is_the_one_doctor_compares_with_and_gemini_needs_nothing_to_ask(gemini):
    assert HARNESSES["gemini"].TESTED_VERSION == TESTED_VERSIONS["gemini"] == pinned_gemini()
    assert HARNESSES["gemini"].AGENT_ENVIRONMENT == {}  # its own default mode asks (below)


@needs("peers")
def test_a_turn_streams_the_agents_text_into_the_thread_and_ends_done(gemini):
    mock, project, start = gemini
    mock.add(mock_gemini.text_reply("Hello ", "from ", "Gemini."))
    registry = start()
    chat, sink = gemini_opened(registry, "gem1", project)
    sent = chat.core_send("say hello").get(timeout=ASK)
    assert turn_ended(sink, sent["turnId"])["state"] == "done"
    texts = [item for item in items_of(chat) if item["kind"] == "assistant"]
    assert [item.get("text") for item in texts] == ["Hello from Gemini."]
    assert "say hello" in mock_gemini.message_text(mock.requests[-1])
    # Its model router asked the mock beside the turn (generateContent), not the script.
    assert any(entry["path"].endswith(":generateContent") for entry in mock.log)
    assert tagged_processes("gem1")  # the agent lives on for the next message
    # What it advertised (initialize, session/new) is the chat's.
    abilities = chat.info().get(timeout=ASK)["abilities"]
    assert abilities["agent"] == {"name": "Gemini CLI", "version": pinned_gemini()}
    assert (abilities["loadSession"], abilities["images"], abilities["audio"], abilities["embeddedContext"]) == \
        (True, True, True, True)
    assert {"auto", "gemini-2.5-pro"} <= {model["id"] for model in abilities["models"]}
    assert {"default", "autoEdit", "yolo", "plan"} <= {mode["id"] for mode in abilities["modes"]}
    kept = registry.agents_measured().get(timeout=ASK)["gemini"]
    assert kept["agent"] == abilities["agent"] and kept["measuredAt"] > 0


@needs("peers")
@pytest.mark.parametrize("decision, runs", [("allow", True), ("deny", False)])
def test_a_command_runs_only_when_the_person_allows_it(gemini, decision, runs):
    mock, project, start = gemini
    mock.add(mock_gemini.shell_reply("touch made.txt", "Make a file"), mock_gemini.text_reply("done"))
    registry = start()
    chat, sink = gemini_opened(registry, "gem2", project, runtimeMode="supervised")
    turn = chat.core_send("make a file").get(timeout=ASK)["turnId"]
    asked = pending_approval(sink)
    assert asked["turnId"] == turn
    assert chat.info().get(timeout=ASK)["status"] == "needs-you"
    chat.approve(asked["requestId"], decision).get(timeout=ASK)
    assert turn_ended(sink, turn)["state"] == "done"
    assert os.path.exists(os.path.join(project, "made.txt")) is runs
    settled = [item for item in items_of(chat) if item["id"] == asked["id"]]
    assert settled[0]["decision"] == decision
    assert chat.info().get(timeout=ASK)["abilities"]["seen"] == {"permissionRequests": True}


@needs("peers")
def test_full_access_answers_the_agents_permission_requests_itself(gemini):
    mock, project, start = gemini
    mock.add(mock_gemini.shell_reply("touch free.txt"), mock_gemini.text_reply("done"))
    registry = start()
    chat, sink = gemini_opened(registry, "gem3", project, runtimeMode="full-access")
    turn = chat.core_send("make a file").get(timeout=ASK)["turnId"]
    assert turn_ended(sink, turn)["state"] == "done"
    assert os.path.exists(os.path.join(project, "free.txt"))
    assert not [item for item in items_of(chat) if item["kind"] == "approval"]


def test_unscripted_turns_answer_the_default_text_and_side_questions_a_json_every_router_reads():
    # The mock on its own (no CLI): what a test that scripted too little would see.
    with mock_gemini.MockGemini() as mock:
        def post(action):
            request = urllib.request.Request(f"{mock.url}/v1beta/models/m:{action}", method="POST",
                                             data=json.dumps({"contents": []}).encode())
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.read().decode()
        streamed = post("streamGenerateContent?alt=sse")
        side = json.loads(post("generateContent"))
    chunks = [json.loads(line[len("data: "):]) for line in streamed.splitlines() if line.startswith("data: ")]
    assert chunks[-1]["candidates"][0]["content"]["parts"] == [{"text": mock_gemini.DEFAULT_TEXT}]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and chunks[-1]["usageMetadata"]
    assert json.loads(side["candidates"][0]["content"]["parts"][0]["text"])["model_choice"] == "flash"
    assert len(mock.requests) == 1 and [entry["kind"] for entry in mock.log] == ["turn", "side"]

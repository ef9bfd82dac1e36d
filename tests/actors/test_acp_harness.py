"""An ACP agent as a third harness, on a real one: OpenCode (``opencode acp``, pinned in
tests/peers.sh) against the Responses mock, driven by the chat core in-process (Registry, Chat
actors), as the manifest names it (``[devtools.chat.opencode] protocol = "acp"``)."""
from __future__ import annotations

import os

import pytest

from actors.harness import HARNESSES, PROVIDERS
from tests import mock_openai
from tests.acp_peers import OPENCODE, TITLE_MARKER, opencode_env, require_opencode, tool_reply
from tests.actors.acp_host import ASK, agent_host, item_of, items_of, pending_approval
from tests.actors.acp_host import opened as host_opened
from tests.actors.shutdown import stop_registry
from tests.actors.test_core_chat import turn_ended
from tests.integration.daemon import tagged_processes
from tests.sinks import Sink
from tests.tiers import needs
from web.core.wire import encode


@pytest.fixture
def opencode(tmp_path, monkeypatch):
    """A mock model and OpenCode's environment; ``start()`` a Registry whose ``opencode`` harness
    runs the pinned binary."""
    require_opencode()
    mock = mock_openai.MockOpenAI()
    mock.route(TITLE_MARKER, *[mock_openai.text_reply("A title")] * 20)
    mock.start()
    try:
        # OpenCode's own config asks nothing (its default): devhostd makes it ask (ASKING_ENVIRONMENT).
        with agent_host(tmp_path, monkeypatch, "opencode", [str(OPENCODE), "acp"], "OpenCode",
                        opencode_env(tmp_path / "home", mock.url)) as (project, start):
            yield mock, project, start
    finally:
        mock.stop()


def opened(registry, chat_id: str, project: str, **fields):
    return host_opened(registry, chat_id, project, "opencode", **fields)


def turn_requests(mock) -> list[dict]:
    """The model requests of turns (the title requests OpenCode makes beside them left out)."""
    return [body for body in mock.requests if TITLE_MARKER not in str(body)]


@needs("peers")
def test_the_manifests_agent_is_a_harness_and_a_core_provider_under_its_own_id(opencode):
    assert HARNESSES["opencode"].LABEL == "OpenCode" and PROVIDERS["opencode"] == "opencode"


@needs("peers")
def test_a_turn_streams_the_agents_text_into_the_thread_and_ends_done(opencode):
    mock, project, start = opencode
    mock.add(mock_openai.text_reply("Hello ", "from ", "OpenCode."))
    registry = start()
    chat, sink = opened(registry, "acp1", project)
    sent = chat.core_send("say hello").get(timeout=ASK)
    assert turn_ended(sink, sent["turnId"])["state"] == "done"
    texts = [item for item in items_of(chat) if item["kind"] == "assistant"]
    assert [item.get("text") for item in texts] == ["Hello from OpenCode."]
    assert "say hello" in mock_openai.message_text(turn_requests(mock)[-1])
    assert tagged_processes("acp1")  # the agent lives on for the next message
    # What it advertised is the chat's, and the registry's to keep for the listing and doctor.
    abilities = chat.info().get(timeout=ASK)["abilities"]
    assert abilities["loadSession"] is True and abilities["agent"]["name"] == "OpenCode"
    assert "mock/gpt-5.5" in {model["id"] for model in abilities["models"]}
    kept = registry.agents_measured().get(timeout=ASK)["opencode"]
    assert kept["agent"] == abilities["agent"] and kept["measuredAt"] > 0


@needs("peers")
@pytest.mark.parametrize("decision, runs", [("allow", True), ("deny", False)])
def test_a_command_runs_only_when_the_person_allows_it_though_the_agents_own_config_asks_nothing(opencode, decision,
                                                                                               runs):
    mock, project, start = opencode
    mock.add(tool_reply("bash", command="touch made.txt", description="Make a file"), mock_openai.text_reply("done"))
    registry = start()
    chat, sink = opened(registry, "acp2", project, runtimeMode="supervised")
    # A second client of the core sees the same approval (any surface may answer it).
    other = Sink(encode)
    chat.core_attach(other).get(timeout=ASK)
    turn = chat.core_send("make a file").get(timeout=ASK)["turnId"]
    asked = pending_approval(sink)
    assert pending_approval(other)["requestId"] == asked["requestId"]
    assert asked["turnId"] == turn
    assert chat.info().get(timeout=ASK)["status"] == "needs-you"
    chat.approve(asked["requestId"], decision).get(timeout=ASK)
    ended = turn_ended(sink, turn)
    assert ended["state"] == "done"
    assert os.path.exists(os.path.join(project, "made.txt")) is runs
    settled = [item for item in items_of(chat) if item["id"] == asked["id"]]
    assert settled[0]["decision"] == decision
    assert other.wait_for(lambda f: item_of(f).get("id") == asked["id"] and item_of(f).get("decision") == decision,
                          "the answer on the other surface")


@needs("peers")
def test_full_access_answers_the_agents_permission_requests_itself(opencode):
    mock, project, start = opencode
    mock.add(tool_reply("bash", command="touch free.txt", description="Make a file"), mock_openai.text_reply("done"))
    registry = start()
    chat, sink = opened(registry, "acp5", project, runtimeMode="full-access")
    turn = chat.core_send("make a file").get(timeout=ASK)["turnId"]
    assert turn_ended(sink, turn)["state"] == "done"
    assert os.path.exists(os.path.join(project, "free.txt"))
    assert not [item for item in items_of(chat) if item["kind"] == "approval"]
    # It did ask (devhostd made it), and devhostd's mode answered.
    assert chat.info().get(timeout=ASK)["abilities"]["seen"] == {"permissionRequests": True}


@needs("peers")
def test_opencodes_todo_list_shows_as_the_chats_plan(opencode):
    mock, project, start = opencode
    todos = [{"content": "Read the code", "status": "completed", "priority": "high"},
             {"content": "Write the fix", "status": "in_progress", "priority": "high"}]
    mock.add(tool_reply("todowrite", todos=todos), mock_openai.text_reply("Planned."))
    registry = start()
    chat, sink = opened(registry, "acp6", project)
    turn = chat.core_send("make a plan").get(timeout=ASK)["turnId"]
    assert turn_ended(sink, turn)["state"] == "done"
    [plan] = [item for item in items_of(chat) if item["kind"] == "plan"]
    assert plan["entries"] == todos and plan["turnId"] == turn
    assert [item["name"] for item in items_of(chat) if item["kind"] == "tool"]  # the tool call itself stays


@needs("peers")
def test_messages_sent_during_a_turn_wait_in_the_queue_and_each_is_answered_in_order(opencode):
    mock, project, start = opencode
    mock.add(mock_openai.text_reply(*["slow "] * 30, delay=0.05), mock_openai.text_reply("second answer"))
    registry = start()
    chat, sink = opened(registry, "acp3", project)
    first = chat.core_send("a long one").get(timeout=ASK)
    second = chat.core_send("and then this").get(timeout=ASK)
    assert second["queued"] is True  # ACP cannot steer a running prompt: the core queues it
    assert turn_ended(sink, first["turnId"])["state"] == "done"
    second_turn = sink.wait_for(lambda f: item_of(f).get("kind") == "turn" and item_of(f).get("id") != first["turnId"]
                                and item_of(f).get("state") == "done", "the queued message's turn")
    assert second_turn
    texts = [item.get("text") for item in items_of(chat) if item["kind"] == "assistant"]
    assert texts[-1] == "second answer"
    assert "and then this" in mock_openai.message_text(turn_requests(mock)[-1])


@needs("peers")
def test_after_a_restart_the_chat_reopens_its_conversation_by_session_load(opencode, tmp_path):
    mock, project, start = opencode
    mock.add(mock_openai.text_reply("Noted: alpha."), mock_openai.text_reply("alpha"))
    registry = start()
    chat, sink = opened(registry, "acp4", project)
    first = chat.core_send("remember the word alpha").get(timeout=ASK)
    assert turn_ended(sink, first["turnId"])["state"] == "done"
    native = chat.info().get(timeout=ASK)["agentSessionId"]
    stop_registry(registry.actor_ref, ASK)
    assert not tagged_processes("acp4")
    again = start()
    chat, sink = again.chat("acp4").get(timeout=ASK), Sink(encode)
    chat.core_attach(sink).get(timeout=ASK)
    second = chat.core_send("what word did I ask you to remember?").get(timeout=ASK)
    assert turn_ended(sink, second["turnId"])["state"] == "done"
    assert chat.info().get(timeout=ASK)["agentSessionId"] == native  # the same conversation, loaded
    asked = mock_openai.message_text(turn_requests(mock)[-1])
    assert "remember the word alpha" in asked and "Noted: alpha." in asked
    assert chat.info().get(timeout=ASK)["abilities"]["seen"].get("loadSession") is True

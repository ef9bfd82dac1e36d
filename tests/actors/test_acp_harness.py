"""An ACP agent as a third harness, on a real one: OpenCode (``opencode acp``, pinned in
tests/peers.sh) against the Responses mock, driven by the chat core in-process (Registry, Chat
actors), as the manifest names it (``[devtools.chat.opencode] protocol = "acp"``)."""
from __future__ import annotations

import textwrap

import pytest

from actors.harness import HARNESSES, PROVIDERS, configure_agents
from actors.harness.acp import agents_configured
from storage.manifest import load_manifest
from tests import mock_openai
from tests.acp_peers import OPENCODE, TITLE_MARKER, opencode_env, require_opencode
from tests.actors.shutdown import registries
from tests.actors.test_core_chat import turn_ended
from tests.integration.daemon import tagged_processes
from tests.sinks import Sink
from tests.tiers import needs
from web.core.wire import encode

ASK = 60


@pytest.fixture
def opencode(tmp_path, monkeypatch):
    """The manifest's agent configured as the daemon does, a mock model, OpenCode's environment;
    ``start()`` a Registry whose ``opencode`` harness runs the pinned binary."""
    require_opencode()
    manifest = tmp_path / "devhost.toml"
    manifest.write_text(textwrap.dedent(f"""
        name = "acp"
        [services.app]
        host = "app.localhost"
        root = "."
        [devtools.chat.opencode]
        protocol = "acp"
        command = ["{OPENCODE}", "acp"]
        label = "OpenCode"
    """))
    loaded = load_manifest(str(manifest))
    agents_configured(loaded)
    mock = mock_openai.MockOpenAI()
    mock.route(TITLE_MARKER, *[mock_openai.text_reply("A title")] * 20)
    mock.start()
    for key, value in opencode_env(tmp_path / "home", mock.url).items():
        monkeypatch.setenv(key, value)
    project = tmp_path / "project"
    project.mkdir()
    try:
        with registries(tmp_path / "data", ASK) as start:
            yield mock, str(project), lambda: start(loaded.commands)
    finally:
        mock.stop()
        configure_agents([])


def opened(registry, chat_id: str, project: str):
    registry.create_chat({"chatId": chat_id, "cwd": project, "provider": "opencode"}).get(timeout=ASK)
    chat, sink = registry.chat(chat_id).get(timeout=ASK), Sink(encode)
    chat.core_attach(sink).get(timeout=ASK)
    return chat, sink


def turn_requests(mock) -> list[dict]:
    """The model requests of turns (the title requests OpenCode makes beside them left out)."""
    return [body for body in mock.requests if TITLE_MARKER not in str(body)]


def items_of(chat) -> list[dict]:
    return chat.history(None, 100).get(timeout=ASK)["items"]


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

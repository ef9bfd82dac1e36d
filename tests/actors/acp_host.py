"""The chat core in-process on a real ACP agent, as the daemon configures one: the tests of
each agent (test_acp_harness.py: OpenCode; test_acp_gemini.py: Gemini CLI) start from here."""
from __future__ import annotations

import contextlib
import json
import textwrap

from actors.harness import configure_agents
from actors.harness.acp import agents_configured
from storage.manifest import load_manifest
from tests.actors.shutdown import registries
from tests.sinks import Sink
from web.core.wire import encode

ASK = 60


@contextlib.contextmanager
def agent_host(tmp_path, monkeypatch, agent_id: str, command: list[str], label: str, env: dict):
    """The manifest naming one agent, configured as the daemon does it, ``env`` in the process's
    environment; yields (the project folder, ``start()`` a Registry whose ``agent_id`` harness
    runs ``command``). The agents go again at the end."""
    manifest = tmp_path / "devhost.toml"
    manifest.write_text(textwrap.dedent(f"""
        name = "acp"
        [services.app]
        host = "app.localhost"
        root = "."
        [devtools.chat.{agent_id}]
        protocol = "acp"
        command = {json.dumps(command)}
        label = "{label}"
    """))
    loaded = load_manifest(str(manifest))
    agents_configured(loaded)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    project = tmp_path / "project"
    project.mkdir()
    try:
        with registries(tmp_path / "data", ASK) as start:
            yield str(project), lambda: start(loaded.commands)
    finally:
        configure_agents([])


def opened(registry, chat_id: str, project: str, provider: str, **fields):
    """A chat of ``provider`` in ``project``, and a core client's sink attached to it."""
    registry.create_chat({"chatId": chat_id, "cwd": project, "provider": provider, **fields}).get(timeout=ASK)
    chat, sink = registry.chat(chat_id).get(timeout=ASK), Sink(encode)
    chat.core_attach(sink).get(timeout=ASK)
    return chat, sink


def items_of(chat) -> list[dict]:
    return chat.history(None, 100).get(timeout=ASK)["items"]


def item_of(frame: dict) -> dict:
    return (frame["payload"]["event"].get("item") or {}) if frame.get("event") == "chat.event" else {}


def pending_approval(sink) -> dict:
    frame = sink.wait_for(lambda f: item_of(f).get("kind") == "approval" and item_of(f).get("decision") == "pending",
                          "an approval")
    return item_of(frame)

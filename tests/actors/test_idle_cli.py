"""Idle CLIs let go, on the real CLIs: the chat core in-process (Registry, Chat actors).

The manifest's ``[devtools.chat] idle_cli_minutes`` is set low (0.02: 1.2 s). A turn ("remember
the word alpha"), the idle time passing, the CLI gone (no process of the chat left), the chat
idle and not in error, ``info.running`` false; the next message is answered, and the request
the mock model receives holds the earlier turn: the CLI was resumed on its own conversation.
"""
from __future__ import annotations

import textwrap
import time
import uuid

import gevent
import pytest

from actors.messages import Send
from storage.manifest import load_manifest
from tests import mock_anthropic, mock_openai
from tests.actors.shutdown import registries
from tests.actors.test_core_chat import turn_ended
from tests.integration.daemon import tagged_processes
from tests.peers import CLAUDE, CODEX, claude_env, codex_env, require_peers
from tests.sinks import Sink
from tests.tiers import needs
from web.core.wire import encode

ASK = 30
IDLE_MINUTES = 0.02


@pytest.fixture
def host(tmp_path):
    manifest = tmp_path / "devhost.toml"
    manifest.write_text(textwrap.dedent(f"""
        name = "idle"
        [services.app]
        host = "app.localhost"
        root = "."
        [devtools.chat]
        idle_cli_minutes = {IDLE_MINUTES}
    """))
    minutes = load_manifest(str(manifest)).idle_cli_minutes
    with registries(tmp_path / "data", ASK, idle_cli_minutes=lambda: minutes) as start:
        yield start


def wait_until(check, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        gevent.sleep(0.1)
    raise AssertionError(f"never: {what}")


def let_go_and_resumed(registry, chat_id: str, provider: str, project: str, capsys, surface: str) -> None:
    """``surface``: where the next message comes from, the chat core or the panel's thread socket
    (attached the whole time: a socket reading items does not keep the CLI)."""
    registry.create_chat({"chatId": chat_id, "cwd": project, "provider": provider}).get(timeout=ASK)
    chat, sink = registry.chat(chat_id).get(timeout=ASK), Sink(encode)
    chat.core_attach(sink).get(timeout=ASK)
    panel = chat.thread_attach(Sink()).get(timeout=ASK)["subscriber"]
    sent = chat.core_send("remember the word alpha").get(timeout=ASK)
    assert turn_ended(sink, sent["turnId"])["state"] == "done"
    ended_at = time.monotonic()
    # The CLI lived for the turn; once the idle time passed no process of the chat is left.
    wait_until(lambda: not tagged_processes(chat_id), "the idle CLI's processes gone")
    assert time.monotonic() - ended_at >= IDLE_MINUTES * 60 * 0.9  # not before its time
    info = chat.info().get(timeout=ASK)
    assert info["running"] is False and info["status"] == "idle"
    record = chat.record().get(timeout=ASK)
    assert record["status"] == "idle" and "error" not in record  # the panel's word: idle, never error
    notes = [item for item in chat.history(None, 100).get(timeout=ASK)["items"] if item["kind"] == "note"]
    assert not [note for note in notes if note["level"] == "error"]
    said = capsys.readouterr().err
    assert "session.idle-end" in said and "bug:" not in said and "kind=process" not in said
    # The next message starts the CLI again, on its own conversation.
    asked = "what word did I ask you to remember?"
    if surface == "core":
        turn_id = chat.core_send(asked).get(timeout=ASK)["turnId"]
    else:
        command_id = str(uuid.uuid4())
        chat.send(panel, Send(command_id, asked, None), "").get(timeout=ASK)
        (user,) = [item for item in chat.history(None, 100).get(timeout=ASK)["items"]
                   if item["id"] == f"user-{command_id}"]  # the page's message opened a turn
        turn_id = user["turnId"]
    assert turn_ended(sink, turn_id)["state"] == "done"
    assert chat.info().get(timeout=ASK)["running"] is True
    assert tagged_processes(chat_id)


@needs("peers")
@pytest.mark.parametrize("surface", ["core", "panel"])
def test_claude_code_let_go_when_idle_is_resumed_with_its_context(tmp_path, monkeypatch, host, capsys, surface):
    require_peers("claude")
    mock = mock_anthropic.MockAnthropic([mock_anthropic.text_reply(t) for t in ("Noted: alpha.", "alpha")])
    mock.start()
    try:
        for key, value in claude_env(tmp_path / "home", mock.url).items():
            monkeypatch.setenv(key, value)
        project = tmp_path / "project"
        project.mkdir()
        let_go_and_resumed(host({"claude-code": (str(CLAUDE),)}), "idle1", "claude", str(project), capsys,
                           surface)
        second = mock_anthropic.message_text(mock.requests[-1])
        assert "remember the word alpha" in second and "Noted: alpha." in second
        assert "what word did I ask you to remember?" in second
    finally:
        mock.stop()


@needs("peers")
@pytest.mark.parametrize("surface", ["core", "panel"])
def test_codex_let_go_when_idle_is_resumed_with_its_context(tmp_path, monkeypatch, host, capsys, surface):
    require_peers("codex")
    mock = mock_openai.MockOpenAI([mock_openai.text_reply(t) for t in ("Noted: alpha.", "alpha")])
    mock.start()
    try:
        project = tmp_path / "project"
        project.mkdir()
        for key, value in codex_env(tmp_path / "home", mock.url, project_dirs=[project],
                                    approval_policy="never").items():
            monkeypatch.setenv(key, value)
        let_go_and_resumed(host({"codex": (str(CODEX),)}), "idle2", "codex", str(project), capsys, surface)
        second = mock_openai.message_text(mock.requests[-1])
        assert "remember the word alpha" in second and "Noted: alpha." in second
        assert "what word did I ask you to remember?" in second
    finally:
        mock.stop()

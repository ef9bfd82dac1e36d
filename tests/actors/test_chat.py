"""The Chat actor in-process, on the real Claude Code CLI: what the web layer cannot reach."""
from __future__ import annotations

import os
import uuid

import pytest

from actors.chat import Chat
from actors.harness import claude
from actors.registry import CoreClients
from storage.chat_store import ChatStore
from storage.history import EventHistory
from web.chat_socket import encode
from tests.sinks import Sink
from tests.mock_anthropic import MockAnthropic, text_reply
from tests.peers import CLAUDE, claude_env, require_peers
from tests.tiers import needs
from actors.messages import Send


@pytest.fixture
@needs("peers")
def claude_environment(tmp_path, monkeypatch):
    require_peers("claude")
    mock = MockAnthropic()
    mock.start()
    for key, value in claude_env(tmp_path / "home", mock.url).items():
        monkeypatch.setenv(key, value)  # the chat's CLI inherits the daemon's environment
    yield mock
    mock.stop()


def test_a_history_write_failure_stops_the_cli_and_reports_an_error(tmp_path, claude_environment):
    claude_environment.add(text_reply("never recorded"))
    project = tmp_path / "project"
    project.mkdir()
    failing = EventHistory(fd=os.open("/dev/full", os.O_RDWR))  # every write fails: ENOSPC
    ref = Chat.start(chat_id="history-test", harness=claude, cwd=str(project), command=(str(CLAUDE),),
                     model=None, store=ChatStore(str(tmp_path / "chats")), clients=CoreClients(), history=failing,
                     start_cli=True)
    chat = ref.proxy()
    try:
        sink = Sink(encode)
        subscriber = chat.attach(sink).get(timeout=10)[0]
        command_id = str(uuid.uuid4())
        chat.send(subscriber, Send(command_id, "hello", None), "")
        result = sink.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id)
        assert "could not write the event history" in result["error"]
        state = sink.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "error")
        assert "stopped the session's CLI" in state["session"]["error"]
        assert chat.cli_gone().get(timeout=10).wait(timeout=15), "the CLI was not stopped"
        assert not [f for f in sink.frames if f["type"] == "event"]  # nothing half-recorded went out
    finally:
        ref.stop(timeout=15)

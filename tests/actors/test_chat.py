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


def test_a_pages_send_during_a_settings_swap_waits_for_it_and_runs_under_the_new_mode(tmp_path, claude_environment):
    """B51 on the page's surface: the send is held (never given to the process that goes away),
    said once in a note, and dispatched to the new process after the turn and its request end."""
    from tests.mock_anthropic import tool_use_reply
    from web.core.wire import encode as core_encode
    mock = claude_environment
    project = tmp_path / "project"
    project.mkdir()
    mock.add(tool_use_reply("Write", {"file_path": str(project / "notes.txt"), "content": "one\n"}),
             text_reply("first done"), tool_use_reply("Bash", {"command": "touch later.txt", "description": "a file"}),
             text_reply("second done"))
    ref = Chat.start(chat_id="swap-test", harness=claude, cwd=str(project), command=(str(CLAUDE),), model=None,
                     store=ChatStore(str(tmp_path / "chats")), clients=CoreClients(), runtime_mode="supervised",
                     start_cli=True)
    chat = ref.proxy()
    try:
        page, core = Sink(encode), Sink(core_encode)
        subscriber = chat.attach(page).get(timeout=10)[0]
        chat.core_attach(core).get(timeout=10)
        items = lambda kind: [f["payload"]["event"]["item"] for f in core.frames  # noqa: E731
                              if f.get("event") == "chat.event" and f["payload"]["event"].get("type") == "item"
                              and f["payload"]["event"]["item"]["kind"] == kind]
        chat.send(subscriber, Send(str(uuid.uuid4()), "write it", None), "")
        core.wait_for(lambda f: any(a["decision"] == "pending" for a in items("approval")), "the Write's approval")
        [write] = items("approval")
        chat.configure(runtime_mode="full-access").get(timeout=10)  # only a new process has it
        second = str(uuid.uuid4())
        chat.send(subscriber, Send(second, "then touch it", None), "")
        core.wait_for(lambda f: any(n["id"].startswith("settings-wait-") for n in items("note")), "the wait note")
        assert not [f for f in page.frames if f["type"] == "command_result" and f["commandId"] == second]
        chat.approve(write["requestId"], "allow").get(timeout=10)
        page.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == second, "the held send's result")
        core.wait_for(lambda f: any(i["text"] == "second done" for i in items("assistant")), "the second turn's end")
        assert (project / "later.txt").exists()
        assert {a["requestId"] for a in items("approval")} == {write["requestId"]}  # the Bash asked nobody
        assert chat.info().get(timeout=10)["effectiveRuntimeMode"] == "full-access"
    finally:
        ref.stop(timeout=15)


def test_a_loaded_idle_chat_has_no_heartbeat_timer_and_a_turn_arms_it_until_it_ends(
        tmp_path, claude_environment, monkeypatch):
    """Nothing runs at rest: the heartbeat is a timer of a running turn, not a loop of every
    loaded chat. Made quick here, so an idle chat that still woke for it would be seen."""
    from actors.chat import actor as chat_actor
    from tests.mock_anthropic import tool_use_reply
    from web.core.wire import encode as core_encode
    import time
    monkeypatch.setattr(chat_actor, "HEARTBEAT_SECONDS", 0.2)
    mock = claude_environment
    project = tmp_path / "project"
    project.mkdir()
    mock.add(tool_use_reply("Write", {"file_path": str(project / "notes.txt"), "content": "one\n"}),
             text_reply("written"))
    ref = Chat.start(chat_id="beat-test", harness=claude, cwd=str(project), command=(str(CLAUDE),), model=None,
                     store=ChatStore(str(tmp_path / "chats")), clients=CoreClients(), runtime_mode="supervised")
    chat = ref.proxy()
    try:
        page, core = Sink(encode), Sink(core_encode)
        subscriber = chat.attach(page).get(timeout=10)[0]
        chat.core_attach(core).get(timeout=10)
        time.sleep(0.5)  # a loop would have beaten twice by now
        assert chat.heartbeat_armed().get(timeout=10) is False
        items = lambda kind: [f["payload"]["event"]["item"] for f in core.frames  # noqa: E731
                              if f.get("event") == "chat.event" and f["payload"]["event"].get("type") == "item"
                              and f["payload"]["event"]["item"]["kind"] == kind]
        chat.send(subscriber, Send(str(uuid.uuid4()), "write it", None), "")
        core.wait_for(lambda f: any(a["decision"] == "pending" for a in items("approval")), "the Write's approval")
        time.sleep(0.5)  # it beats while the turn waits, and stays armed
        assert chat.heartbeat_armed().get(timeout=10) is True
        [write] = items("approval")
        chat.approve(write["requestId"], "allow").get(timeout=10)
        core.wait_for(lambda f: any(i["text"] == "written" for i in items("assistant")), "the turn's answer")
        core.wait_for(lambda f: any(t["state"] == "done" for t in items("turn")), "the turn's end")
        assert chat.heartbeat_armed().get(timeout=10) is False
    finally:
        ref.stop(timeout=15)

"""Delegated work made visible and stoppable, on the real CLIs: a subagent's item with its own
tools grouped under it; a background shell that outlives its turn, listed in info.background,
ended by chat.stopTask with nothing left behind; chat.cancel {subagents}; the agent's own
conversation paged from the CLI's files. Codex's child agents need its ``multi_agent_v2``
feature (off by default in the pinned 0.169.0), which the Codex tests here turn on."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.integration.chats import items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import text_reply, tool_use_reply
from tests.mock_openai import shell_reply, spawn_agent_reply, wait_agent_reply
from tests.mock_openai import text_reply as codex_text
from tests.peers import codex_env
from devhostd.core_client import CoreConnection, CoreRequestError

SUB_PROMPT = "SUBAGENT-WORK: run echo sub-hello, then say SUB-DONE."
CHILD_TASK = "CHILD-WORK: run echo sub-hello, then say SUB-DONE."


@pytest.fixture
def codex_agents(daemon_env, openai, stack):
    """Codex with its multi-agent tools on (the model can spawn child agents)."""
    codex_env(daemon_env["HOME"], openai.url, approval_policy="on-request",
              project_dirs=(stack / "project", stack / "other"), features=("multi_agent_v2",))






def sleepers(marker: str) -> str:
    return subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.strip()


def test_a_subagent_is_an_item_with_its_tool_grouped_under_it_and_the_report_turn_follows(core, mock, stack):
    mock.add(tool_use_reply("Task", {"description": "say hello from a subagent", "prompt": SUB_PROMPT,
                                     "subagent_type": "general-purpose"}),
             text_reply("The agent is working on it."), text_reply("The agent said SUB-DONE."))
    mock.route(SUB_PROMPT, tool_use_reply("Bash", {"command": "echo sub-hello", "description": "Say hello"}),
               text_reply("SUB-DONE"))
    core.chats.create("deleg", provider="claude", cwd=str(stack / "project"))
    core.chats.send("deleg", "delegate the greeting")
    wait_until(lambda: any(i["text"] == "The agent said SUB-DONE." for i in items(core, "deleg", "assistant")),
               timeout=60, what="the turn Claude Code starts by itself to report")
    [agent] = items(core, "deleg", "subagent")
    assert agent["status"] == "done" and agent["description"] == "say hello from a subagent"
    [bash] = [t for t in items(core, "deleg", "tool") if t["name"] == "Bash"]
    assert bash["parentToolUseId"] == agent["toolUseId"] and bash["output"] == "sub-hello"
    turns = items(core, "deleg", "turn")
    assert [t.get("origin") for t in turns] == ["user", "cli"] and all(t["state"] == "done" for t in turns)
    assert core.chats.list()[0]["background"] == []


def test_a_background_shell_outlives_its_turn_and_chat_stop_task_ends_it(core, daemon, mock, stack):
    marker = "sleep 37.5"
    mock.add(tool_use_reply("Bash", {"command": f"{marker}; echo never", "description": "Long wait",
                                     "run_in_background": True}),
             text_reply("Started it."), text_reply("It was stopped."))
    core.chats.create("bg", provider="claude", cwd=str(stack / "project"))
    core.chats.send("bg", "run it in the background")
    wait_until(lambda: any(t["state"] == "done" for t in items(core, "bg", "turn")), timeout=60, what="the turn")
    [task] = items(core, "bg", "task")
    assert task["status"] == "running" and task["command"].startswith(marker)
    info = next(i for i in core.chats.list() if i["chatId"] == "bg")
    assert info["background"] == [{"taskId": task["taskId"], "kind": "task", "description": "Long wait"}]
    assert sleepers(marker)
    # The session says so too, and the agents list shows the row working, not idle.
    wait_until(lambda: next(s for s in daemon.sessions() if s["chatId"] == "bg").get("background") == 1,
               what="the session's record counting it")

    def owned_rows():
        status, value = daemon.request("GET", f"/__devhost__/agents?{daemon.query()}", host=daemon.host())
        return [row for row in value.get("agents", []) if row.get("isOwned")] if status == 200 else []
    wait_until(lambda: any(r.get("state") == "working" and r.get("background") == 1 for r in owned_rows()),
               timeout=30, what="the agents list showing the idle chat working in the background")
    core.chats.stop_task("bg", task["taskId"])
    wait_until(lambda: items(core, "bg", "task")[0]["status"] == "stopped", what="the task stopped")
    wait_until(lambda: not sleepers(marker), what="its process gone")
    wait_until(lambda: next(i for i in core.chats.list() if i["chatId"] == "bg")["background"] == [],
               what="nothing left in the background")
    with pytest.raises(CoreRequestError) as gone:
        core.chats.stop_task("bg", task["taskId"])
    assert gone.value.code == "task-not-found"


def test_chat_cancel_with_subagents_ends_the_agents_the_chat_opened(core, mock, stack):
    mock.add(tool_use_reply("Task", {"description": "a slow helper", "prompt": SUB_PROMPT,
                                     "subagent_type": "general-purpose"}),
             text_reply("It is on its way."), text_reply("Noted."))
    mock.route(SUB_PROMPT, text_reply(*["slow "] * 100, delay=0.2))
    core.chats.create("cancel", provider="claude", cwd=str(stack / "project"))
    core.chats.send("cancel", "delegate something slow")
    wait_until(lambda: any(a.get("taskId") for a in items(core, "cancel", "subagent")), timeout=60,
               what="the subagent running")
    core.chats.cancel("cancel", subagents=True)
    wait_until(lambda: items(core, "cancel", "subagent")[0]["status"] == "stopped", timeout=30,
               what="the subagent stopped")


def test_a_subagents_own_conversation_is_paged_from_the_clis_transcript_and_watched_as_it_grows(core, mock, stack):
    mock.add(tool_use_reply("Task", {"description": "a slow helper", "prompt": SUB_PROMPT,
                                     "subagent_type": "general-purpose"}),
             text_reply("It is on its way."), text_reply("It reported."))
    mock.route(SUB_PROMPT, tool_use_reply("Bash", {"command": "echo sub-hello", "description": "Say hello"}),
               text_reply(*["still working "] * 20, delay=0.1))
    core.chats.create("watched", provider="claude", cwd=str(stack / "project"))
    core.chats.send("watched", "delegate something slow")
    wait_until(lambda: any(a.get("taskId") for a in items(core, "watched", "subagent")), timeout=60,
               what="the subagent running")
    [agent] = items(core, "watched", "subagent")
    first = core.chats.subagent("watched", agent["id"], watch=True)
    assert first["subagentId"] == agent["id"]
    changed = core.wait_event(lambda e: e.get("event") == "chat.subagentChanged" and e["payload"]["items"],
                              timeout=60, what="the agent's transcript growing")
    assert changed["payload"]["subagentId"] == agent["id"]
    wait_until(lambda: items(core, "watched", "subagent")[0]["status"] == "done", timeout=60, what="the agent done")
    # The agent reads done a moment before its last words reach its transcript file.
    wait_until(lambda: any(i["kind"] == "assistant" for i in core.chats.subagent("watched", agent["id"])["items"]),
               timeout=30, what="the agent's last words in its transcript")
    whole = core.chats.subagent("watched", agent["id"], watch=False)  # and its watch released
    assert whole["source"] == "claude-transcript" and whole["live"] is False
    kinds = [i["kind"] for i in whole["items"]]
    assert [i["text"] for i in whole["items"] if i["kind"] == "user"] == [SUB_PROMPT]
    assert "tool" in kinds, whole
    assert any(i["kind"] == "tool" and i.get("output") == "sub-hello" for i in whole["items"]), whole
    page = core.chats.subagent("watched", agent["id"], limit=2)
    assert len(page["items"]) == 2 and page["nextCursor"] == 2 and page["total"] == whole["total"]
    rest = core.chats.subagent("watched", agent["id"], cursor=page["nextCursor"], limit=100)
    assert page["items"] + rest["items"] == whole["items"] and "nextCursor" not in rest
    with pytest.raises(CoreRequestError) as unknown:
        core.chats.subagent("watched", "no-such-agent")
    assert unknown.value.code == "subagent-not-found"


def _watched_on_the_clis_word(daemon_env, stack, provider: str, start, sub_output: str, last_words: str) -> None:
    """With the watch's fallback far beyond the test's time, the agent's transcript growing is
    said only because the CLI's frames about the agent told the watch: the agent's last words
    promptly after the chat's own item of the agent's tool ended (they follow it at once)."""
    env = {**daemon_env, "DEVHOSTD_SUBAGENT_FALLBACK_SECONDS": "600"}
    running = Daemon(env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(running.control_origin, token=running.core_token) as core:
            core.chats.create("word", provider=provider, cwd=str(stack / "project"))
            core.chats.attach("word")  # the chat's own items stream to this client: when the CLI spoke
            start(core)
            wait_until(lambda: any(a.get("taskId") and a["status"] == "running"
                                   for a in items(core, "word", "subagent")), timeout=60, what="the agent running")
            [agent] = items(core, "word", "subagent")
            first = core.chats.subagent("word", agent["id"], watch=True)
            said = lambda i: i["kind"] == "tool" and sub_output in (i.get("output") or "")  # noqa: E731
            assert not any(said(i) for i in first["items"]), "the agent's tool ended before the watch began"
            core.wait_event(lambda e: e.get("event") == "chat.event" and e["payload"]["event"].get("type") == "item"
                            and e["payload"]["event"]["item"].get("parentToolUseId") == agent["toolUseId"]
                            and said(e["payload"]["event"]["item"]), timeout=60, what="the agent's tool ending")
            ended = time.monotonic()
            # (Its transcript's tool item gets its output in place: the agent's next words are new items.)
            core.wait_event(lambda e: e.get("event") == "chat.subagentChanged"
                            and any(i["kind"] == "assistant" and last_words in i.get("text", "")
                                    for i in e["payload"]["items"]), timeout=30,
                            what="the watch saying the agent's transcript grew")
            assert time.monotonic() - ended < 6, "the watch followed the CLI's word late"
    finally:
        assert running.stop() == 0
        assert " bug: " not in running.log(), running.log()


def test_a_watched_subagents_transcript_is_read_on_the_clis_word_not_a_poll(stack, daemon_env, mock):
    mock.add(tool_use_reply("Task", {"description": "a slow helper", "prompt": SUB_PROMPT,
                                     "subagent_type": "general-purpose"}),
             text_reply("It is on its way."), text_reply("It reported."))
    mock.route(SUB_PROMPT, tool_use_reply("Bash", {"command": "sleep 4; echo sub-hello", "description": "Say hello"}),
               text_reply("SUB-DONE"))
    _watched_on_the_clis_word(daemon_env, stack, "claude", lambda core: core.chats.send("word", "delegate it"),
                              "sub-hello", "SUB-DONE")


# ---- Codex ------------------------------------------------------------------------------------

def test_codex_a_child_agent_is_a_subagent_item_with_its_items_under_it_and_its_rollout_pages(
        codex_agents, core, openai, stack):
    openai.add(spawn_agent_reply("greeter", CHILD_TASK), wait_agent_reply(), codex_text("The agent said SUB-DONE."))
    openai.route(CHILD_TASK, shell_reply("echo sub-hello"), codex_text("SUB-DONE"))
    core.chats.create("cx", provider="codex", cwd=str(stack / "project"))
    core.chats.send("cx", "delegate the greeting")
    wait_until(lambda: any(t["state"] == "done" for t in items(core, "cx", "turn")), timeout=60, what="the turn")
    [agent] = items(core, "cx", "subagent")
    assert agent["status"] == "done" and agent["description"] == "greeter"
    [shell] = [t for t in items(core, "cx", "tool") if t["name"] == "shell"]
    assert shell["parentToolUseId"] == agent["toolUseId"] and "sub-hello" in shell["output"]
    said = {i["text"]: i.get("parentToolUseId") for i in items(core, "cx", "assistant")}
    assert said == {"SUB-DONE": agent["toolUseId"], "The agent said SUB-DONE.": None}
    assert core.chats.list()[0]["background"] == []
    whole = core.chats.subagent("cx", agent["id"])  # from the child's own rollout
    assert whole["source"] == "codex-thread" and whole["live"] is False and whole["toolUseId"] == agent["toolUseId"]
    by_tool = core.request("chat.subagent", {"chatId": "cx", "toolUseId": agent["toolUseId"]})  # the seed's name
    assert by_tool["items"] == whole["items"]
    assert [i["text"] for i in whole["items"] if i["kind"] == "user"][0].startswith("Task from /root")
    assert any(i["kind"] == "tool" and "sub-hello" in (i.get("output") or "") for i in whole["items"]), whole
    assert [i["text"] for i in whole["items"] if i["kind"] == "assistant"] == ["SUB-DONE"]


def test_codex_stop_subagent_interrupts_the_child_agents_turn(codex_agents, core, openai, stack):
    openai.add(spawn_agent_reply("slowpoke", CHILD_TASK), wait_agent_reply(timeout_ms=3000),
               codex_text("The agent was stopped."))
    openai.route(CHILD_TASK, codex_text(*["slow "] * 200, delay=0.1))
    core.chats.create("cxs", provider="codex", cwd=str(stack / "project"))
    core.chats.send("cxs", "delegate something slow")
    wait_until(lambda: any(a["status"] == "running" for a in items(core, "cxs", "subagent"))
               and openai.open_streams, timeout=60, what="the child agent streaming")
    [agent] = items(core, "cxs", "subagent")
    info = next(i for i in core.chats.list() if i["chatId"] == "cxs")
    assert info["background"] == [{"taskId": agent["taskId"], "kind": "subagent", "description": "slowpoke"}]
    core.chats.stop_subagent("cxs", agent["id"])
    wait_until(lambda: items(core, "cxs", "subagent")[0]["status"] == "stopped", timeout=30,
               what="the child agent stopped")
    wait_until(lambda: any(t["state"] == "done" for t in items(core, "cxs", "turn")), timeout=60,
               what="the parent's turn going on to its end")
    assert [i["text"] for i in items(core, "cxs", "assistant") if not i.get("parentToolUseId")] == \
        ["The agent was stopped."]


def test_codex_chat_cancel_with_subagents_ends_the_turn_and_its_child_agents(codex_agents, core, openai, stack):
    openai.add(spawn_agent_reply("slowpoke", CHILD_TASK), wait_agent_reply(timeout_ms=60000))
    openai.route(CHILD_TASK, codex_text(*["slow "] * 200, delay=0.1))
    core.chats.create("cxc", provider="codex", cwd=str(stack / "project"))
    core.chats.send("cxc", "delegate something slow")
    wait_until(lambda: any(a["status"] == "running" for a in items(core, "cxc", "subagent"))
               and openai.open_streams, timeout=60, what="the child agent streaming")
    core.chats.cancel("cxc", subagents=True)
    wait_until(lambda: items(core, "cxc", "subagent")[0]["status"] == "stopped", timeout=30,
               what="the child agent stopped")
    wait_until(lambda: items(core, "cxc", "turn")[0]["state"] == "aborted", timeout=30, what="the turn stopped")
    wait_until(lambda: next(i for i in core.chats.list() if i["chatId"] == "cxc")["background"] == [],
               what="nothing left in the background")


def test_codex_a_command_that_outlives_its_turn_is_a_task_chat_stop_task_ends(core, daemon, openai, stack):
    marker = "sleep 37.6"
    openai.add(shell_reply(f"{marker}; echo never", yield_time_ms=500), codex_text("Started; it runs on."))
    core.chats.create("cxb", provider="codex", cwd=str(stack / "project"))
    core.chats.send("cxb", "run it in the background")
    wait_until(lambda: any(t["state"] == "done" for t in items(core, "cxb", "turn")), timeout=60, what="the turn")
    [task] = items(core, "cxb", "task")
    [tool] = items(core, "cxb", "tool")
    assert task["status"] == "running" and marker in task["command"] and tool["state"] == "done"
    info = next(i for i in core.chats.list() if i["chatId"] == "cxb")
    assert info["background"] == [{"taskId": task["taskId"], "kind": "task", "description": task["command"]}]
    assert sleepers(marker)
    wait_until(lambda: next(s for s in daemon.sessions() if s["chatId"] == "cxb").get("background") == 1,
               what="the session's record counting it")
    core.chats.stop_task("cxb", task["taskId"])
    wait_until(lambda: items(core, "cxb", "task")[0]["status"] == "stopped", what="the task stopped")
    wait_until(lambda: not sleepers(marker), what="its process gone")
    assert next(i for i in core.chats.list() if i["chatId"] == "cxb")["background"] == []
    with pytest.raises(CoreRequestError) as gone:
        core.chats.stop_task("cxb", task["taskId"])
    assert gone.value.code == "task-not-found" and task["taskId"] in gone.value.message


def last_message(request: dict) -> str:
    """What the person's newest message became in a request to the model."""
    return json.dumps([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def test_background_work_a_restart_stopped_is_named_to_the_agent_with_the_next_message(stack, daemon_env, mock):
    marker = "sleep 41.5"
    mock.add(tool_use_reply("Bash", {"command": f"{marker}; echo never", "description": "Long wait",
                                     "run_in_background": True}),
             text_reply("Started it."), text_reply("It was stopped: I will start it again."), text_reply("Fine."))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            core.chats.create("lost", provider="claude", cwd=str(stack / "project"))
            core.chats.send("lost", "run it in the background")
            wait_until(lambda: any(t["state"] == "done" for t in items(core, "lost", "turn")), timeout=60,
                       what="the turn")
            assert [t["status"] for t in items(core, "lost", "task")] == ["running"]
    finally:
        assert first.stop() == 0
    second = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(second.control_origin, token=second.core_token) as core:
            assert [t["status"] for t in items(core, "lost", "task")] == ["stopped"]
            held = next(i for i in core.chats.list() if i["chatId"] == "lost")
            assert held["backgroundStopped"] == [{"kind": "task", "description": "Long wait"}]
            core.chats.send("lost", "is it done?")
            wait_until(lambda: any("is it done?" in last_message(r) for r in mock.requests), timeout=60,
                       what="the message reaching the model")
            told = next(last_message(r) for r in mock.requests if "is it done?" in last_message(r))
            assert "will not report back" in told and "- a background task: Long wait" in told
            [user] = [u for u in items(core, "lost", "user") if "is it done?" in u["text"]]
            assert user["text"] == "is it done?"  # the note is the agent's, not the person's message
            assert "backgroundStopped" not in next(i for i in core.chats.list() if i["chatId"] == "lost")
            wait_until(lambda: all(t["state"] != "running" for t in items(core, "lost", "turn")), timeout=60,
                       what="that turn done")
            core.chats.send("lost", "and now?")
            wait_until(lambda: any("and now?" in last_message(r) for r in mock.requests), timeout=60,
                       what="the next message")
            assert "will not report back" not in next(last_message(r) for r in mock.requests
                                                      if "and now?" in last_message(r))  # told once
    finally:
        assert second.stop() == 0

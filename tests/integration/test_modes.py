"""Runtime modes on the real CLIs: which steps of a turn ask the person, in each mode.

Each turn is scripted on the mock: an edit of a file in the checkout, then a command. The test
answers every approval "allow" as it comes and records which step asked.
"""
from __future__ import annotations

import json

import pytest

from tests.integration.daemon import Daemon
from tests.mock_anthropic import text_reply, tool_use_reply
from tests.mock_openai import add_file_patch, patch_reply, shell_reply, text_reply as codex_text


def _item_event(ev, kind):
    return ev.get("type") == "item" and ev["item"]["kind"] == kind


def _turn_asking(core, chat_id: str, text: str, decide=None) -> list[str]:
    """Sends ``text``, answers every approval (``decide(item)`` -> chat.approve's keyword
    arguments; allow by default), and returns the tools that asked, in order."""
    seen = {e["payload"]["event"]["item"]["requestId"] for e in core.events if e["event"] == "chat.event"
            and _item_event(e["payload"]["event"], "approval")}
    turn = core.chats.send(chat_id, text)["turnId"]
    asked = []
    while True:
        event = core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id and (
            (_item_event(e["payload"]["event"], "approval") and e["payload"]["event"]["item"]["decision"] == "pending"
             and e["payload"]["event"]["item"]["requestId"] not in seen)
            or (e["payload"]["event"].get("type") == "item" and e["payload"]["event"]["item"]["id"] == turn
                and e["payload"]["event"]["item"]["state"] != "running")), timeout=60,
            what="an approval or the turn's end")["payload"]["event"]["item"]
        if event["id"] == turn:
            assert event["state"] == "done", event
            return asked
        seen.add(event["requestId"])
        asked.append(event["toolName"])
        core.chats.approve(chat_id, event["requestId"], **(decide(event) if decide else {"decision": "allow"}))


def _claude_turn(mock, project):
    mock.add(tool_use_reply("Write", {"file_path": str(project / "notes.txt"), "content": "one\n"}),
             tool_use_reply("Bash", {"command": "touch ran.txt", "description": "make a file"}),
             text_reply("done"))


def _codex_turn(openai):
    openai.add(patch_reply(add_file_patch("notes.txt", "one")), shell_reply("touch ran.txt"), codex_text("done"))


@pytest.mark.parametrize("mode, asked, effective", [
    ("supervised", ["Write", "Bash"], "supervised"),
    ("auto-accept-edits", ["Bash"], "auto-accept-edits"),
    ("auto", ["Bash"], "auto-accept-edits"),  # the CLI's own auto mode denies everything here
    ("full-access", [], "full-access"),
])
def test_claude_asks_exactly_what_the_mode_leaves_to_the_person(core, daemon, mock, stack, mode, asked, effective):
    project = stack / "project"
    _claude_turn(mock, project)
    info = core.chats.create("m", provider="claude", cwd=str(project), runtimeMode=mode)
    assert info["runtimeMode"] == mode and info["effectiveRuntimeMode"] == effective
    core.chats.attach("m")
    assert _turn_asking(core, "m", "edit, then run") == asked
    assert (project / "notes.txt").read_text() == "one\n" and (project / "ran.txt").exists()


@pytest.mark.parametrize("mode, asked", [
    ("supervised", ["apply_patch", "shell"]),
    ("auto-accept-edits", ["shell"]),
    ("full-access", []),
])
def test_codex_asks_exactly_what_the_mode_leaves_to_the_person(core, daemon, openai, stack, mode, asked):
    project = stack / "project"
    _codex_turn(openai)
    info = core.chats.create("m", provider="codex", cwd=str(project), runtimeMode=mode)
    assert info["effectiveRuntimeMode"] == mode
    core.chats.attach("m")
    assert _turn_asking(core, "m", "edit, then run") == asked
    assert (project / "notes.txt").read_text() == "one\n" and (project / "ran.txt").exists()


def test_claude_edits_outside_the_checkout_still_ask_under_auto_accept_edits(core, daemon, mock, stack):
    other = stack / "other"
    mock.add(tool_use_reply("Write", {"file_path": str(other / "far.txt"), "content": "x\n"}), text_reply("done"))
    core.chats.create("m", provider="claude", cwd=str(stack / "project"), runtimeMode="auto-accept-edits")
    core.chats.attach("m")
    assert _turn_asking(core, "m", "write elsewhere") == ["Write"]


def test_a_mode_change_holds_from_the_next_turn_on_both_clis(core, daemon, mock, openai, stack):
    project = stack / "project"
    core.chats.create("c", provider="claude", cwd=str(project), runtimeMode="supervised")
    core.chats.attach("c")
    mock.add(text_reply("hello"))
    assert _turn_asking(core, "c", "hi") == []  # the CLI runs
    # Supervised to auto-accept-edits: the running CLI takes it (devhostd's own answers change).
    assert core.chats.configure("c", runtimeMode="auto-accept-edits")["effectiveRuntimeMode"] == "auto-accept-edits"
    _claude_turn(mock, project)
    assert _turn_asking(core, "c", "edit, then run") == ["Bash"]
    # To full-access: only a new process has it, so it holds from the next message's turn.
    configured = core.chats.configure("c", runtimeMode="full-access")
    assert (configured["runtimeMode"], configured["effectiveRuntimeMode"]) == ("full-access", "auto-accept-edits")
    (project / "notes.txt").unlink()
    _claude_turn(mock, project)
    assert _turn_asking(core, "c", "again") == []
    assert core.chats.list()[0]["effectiveRuntimeMode"] == "full-access"

    core.chats.create("x", provider="codex", cwd=str(project), runtimeMode="full-access")
    core.chats.attach("x")
    openai.add(codex_text("hello"))
    assert _turn_asking(core, "x", "hi") == []
    assert core.chats.configure("x", runtimeMode="supervised")["effectiveRuntimeMode"] == "supervised"
    (project / "notes.txt").unlink()
    (project / "ran.txt").unlink()
    _codex_turn(openai)
    assert _turn_asking(core, "x", "edit, then run") == ["apply_patch", "shell"]


# ---- the settings swap: a change only a new process can take waits for the work -------------

def _pending_approval(core, chat_id: str, seen: set) -> dict:
    """The next approval asked that is not among ``seen`` (which it joins)."""
    item = core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                           and _item_event(e["payload"]["event"], "approval")
                           and e["payload"]["event"]["item"]["decision"] == "pending"
                           and e["payload"]["event"]["item"]["requestId"] not in seen,
                           timeout=60, what="an approval")["payload"]["event"]["item"]
    seen.add(item["requestId"])
    return item


def _notes(core, chat_id: str) -> list[dict]:
    return [e["payload"]["event"]["item"] for e in core.events if e["event"] == "chat.event"
            and e["payload"]["chatId"] == chat_id and _item_event(e["payload"]["event"], "note")]


def _turn_done(core, chat_id: str, turn_id: str) -> dict:
    return core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                           and e["payload"]["event"].get("type") == "item"
                           and e["payload"]["event"]["item"]["id"] == turn_id
                           and e["payload"]["event"]["item"]["state"] != "running",
                           timeout=60, what=f"the end of {turn_id}")["payload"]["event"]["item"]


def _supervised_turn_asking_to_write(core, mock, project) -> tuple[str, dict, set]:
    """A supervised Claude chat "c" whose turn waits on its Write's approval: (turn, approval, seen)."""
    core.chats.create("c", provider="claude", cwd=str(project), runtimeMode="supervised")
    core.chats.attach("c")
    _claude_turn(mock, project)
    seen: set = set()
    first = core.chats.send("c", "edit, then run")["turnId"]
    return first, _pending_approval(core, "c", seen), seen


def test_a_mode_only_a_new_process_has_waits_for_the_turn_and_a_send_meanwhile_is_queued(core, daemon, mock, stack):
    project = stack / "project"
    first, write, seen = _supervised_turn_asking_to_write(core, mock, project)
    assert write["toolName"] == "Write"
    # Full access needs a new process (other launch flags): not while this turn and its request live.
    assert core.chats.configure("c", runtimeMode="full-access")["effectiveRuntimeMode"] == "supervised"
    queued = core.chats.send("c", "and then this", delivery="steer")
    assert queued["queued"] is True  # not steered into the old process
    [note] = [n for n in _notes(core, "c") if n["id"].startswith("settings-wait-")]
    assert note["text"] == ("Your message is queued until the current work and open requests finish. "
                            "The changes to this chat will apply then.")
    core.chats.send("c", "a third one")
    assert len([n for n in _notes(core, "c") if n["id"].startswith("settings-wait-")]) == 1  # said once
    core.chats.approve("c", write["requestId"], "allow")
    bash = _pending_approval(core, "c", seen)  # the rest of the first turn is still supervised
    assert bash["toolName"] == "Bash"
    mock.add(tool_use_reply("Bash", {"command": "touch later.txt", "description": "another file"}),
             text_reply("later"), text_reply("third"))
    core.chats.approve("c", bash["requestId"], "allow")
    assert _turn_done(core, "c", first)["state"] == "done"
    # Then the new process, and the queued message's turn runs under full access: nothing asks.
    assert _turn_done(core, "c", queued["turnId"])["state"] == "done"
    assert (project / "later.txt").exists()
    info = core.chats.list()[0]
    assert (info["runtimeMode"], info["effectiveRuntimeMode"]) == ("full-access", "full-access")
    approvals = {e["payload"]["event"]["item"]["requestId"] for e in core.events if e["event"] == "chat.event"
                 and _item_event(e["payload"]["event"], "approval")}
    assert approvals == {write["requestId"], bash["requestId"]}
    third = core.wait_event(lambda e: e["event"] == "chat.event" and _item_event(e["payload"]["event"], "user")
                            and e["payload"]["event"]["item"]["text"] == "a third one", timeout=60,
                            what="the third message's turn")["payload"]["event"]["item"]
    assert _turn_done(core, "c", third["turnId"])["state"] == "done"  # and the queue went on after it


def test_switching_back_before_the_swap_cancels_it(core, daemon, mock, stack):
    project = stack / "project"
    first, write, seen = _supervised_turn_asking_to_write(core, mock, project)
    core.chats.configure("c", runtimeMode="full-access")
    queued = core.chats.send("c", "next")
    core.chats.configure("c", runtimeMode="supervised")  # back: no new process owed
    mock.add(tool_use_reply("Bash", {"command": "touch later.txt", "description": "another file"}),
             text_reply("later"))
    core.chats.approve("c", write["requestId"], "allow")
    core.chats.approve("c", _pending_approval(core, "c", seen)["requestId"], "allow")  # the first turn's Bash
    assert _turn_done(core, "c", first)["state"] == "done"
    later = _pending_approval(core, "c", seen)  # the queued message's turn, still supervised: it asks
    assert later["turnId"] == queued["turnId"] and later["toolName"] == "Bash"
    core.chats.approve("c", later["requestId"], "allow")
    assert _turn_done(core, "c", queued["turnId"])["state"] == "done"
    assert "session.restart" not in daemon.log()


# ---- plan mode (Claude Code's own) ------------------------------------------------------------

PLAN = "# Plan\n\n1. Write notes.txt\n2. Run touch ran.txt\n"


def _planning_chat(core, mock, project) -> None:
    from tests.mock_anthropic import PLAN_FILE
    core.chats.create("p", provider="claude", cwd=str(project), runtimeMode="supervised")
    core.chats.attach("p")
    info = core.chats.configure("p", plan=True)
    assert info["permissionMode"] == "plan" and info["runtimeMode"] == "supervised"
    mock.add(tool_use_reply("Write", {"file_path": str(project / "early.txt"), "content": "early\n"}),
             tool_use_reply("Write", {"file_path": PLAN_FILE, "content": PLAN}),  # its plan file: unasked
             tool_use_reply("ExitPlanMode", {}))


def test_plan_mode_proposes_a_plan_the_person_approves_into_the_mode_they_pick(core, daemon, mock, stack):
    project = stack / "project"
    _planning_chat(core, mock, project)
    _claude_turn(mock, project)  # the plan carried out, in the same turn
    plans = []

    def decide(item):
        if item["toolName"] == "Write" and item["input"]["file_path"].endswith("early.txt"):
            return {"decision": "deny", "message": "Plan first."}  # an edit while planning asks
        if item.get("plan") is not None:
            plans.append(item["plan"])
            return {"decision": "allow", "runtime_mode": "auto-accept-edits"}
        return {"decision": "allow"}
    assert _turn_asking(core, "p", "plan it, then do it", decide) == ["Write", "ExitPlanMode", "Bash"]
    assert plans[0]["text"] == PLAN and plans[0]["path"].endswith(".md")
    assert not (project / "early.txt").exists() and (project / "notes.txt").read_text() == "one\n"
    info = core.chats.list()[0]
    assert "permissionMode" not in info
    assert (info["runtimeMode"], info["effectiveRuntimeMode"]) == ("auto-accept-edits", "auto-accept-edits")


def test_a_plan_sent_back_keeps_the_chat_planning_and_the_agent_gets_the_persons_words(core, daemon, mock, stack):
    project = stack / "project"
    _planning_chat(core, mock, project)
    mock.add(text_reply("I will revise the plan."))

    def decide(item):
        if item.get("plan") is not None:
            return {"decision": "deny", "message": "Not yet: also update the README."}
        return {"decision": "deny", "message": "Plan first."}
    assert _turn_asking(core, "p", "plan it", decide) == ["Write", "ExitPlanMode"]
    assert "Not yet: also update the README." in json.dumps(mock.requests[-1]["messages"][-1])
    assert core.chats.list()[0]["permissionMode"] == "plan"


def test_codex_offers_no_plan_mode_that_would_still_edit(core, daemon, stack):
    core.chats.create("x", provider="codex", cwd=str(stack / "project"), runtimeMode="supervised")
    with pytest.raises(Exception, match="has no plan mode"):
        core.chats.configure("x", plan=True)


# ---- the panel's mode switch: a page socket's configure, the mode remembered per checkout ------

def test_a_page_socket_switches_its_sessions_mode_through_the_chats_configure(daemon, mock):
    record = daemon.create_session()
    assert (record["runtimeMode"], record["effectiveRuntimeMode"]) == ("supervised", "supervised")
    thread = daemon.connect_thread(record["id"])
    assert thread.snapshot["info"]["runtimeMode"] == "supervised"
    thread.send({"type": "configure", "runtimeMode": "auto", "plan": False})
    # Claude Code's own auto mode refuses every step here: the CLI runs as auto-accept-edits.
    state = thread.wait_for(lambda f: f["type"] == "state" and f["session"]["runtimeMode"] == "auto",
                            what="the session's record in the new mode")["session"]
    assert state["effectiveRuntimeMode"] == "auto-accept-edits"
    info = thread.wait_for(lambda f: f["type"] == "event" and f["event"]["type"] == "info"
                           and f["event"]["info"]["runtimeMode"] == "auto", what="the info")["event"]["info"]
    assert info["effectiveRuntimeMode"] == "auto-accept-edits"
    thread.send({"type": "configure", "runtimeMode": "everything"})
    refused = thread.wait_for(lambda f: f["type"] == "error", what="the refusal")
    assert "runtimeMode must be one of: supervised, auto-accept-edits, auto, full-access" in refused["message"]
    # The Chat API's own socket takes the same command, by the same path.
    native = daemon.connect(record["id"])
    native.send({"type": "configure", "runtimeMode": "full-access"})
    state = native.wait_for(lambda f: f["type"] == "state" and f["session"]["runtimeMode"] == "full-access",
                            what="the record in full-access")["session"]
    # Only a new process of Claude Code has full access: it holds from the next message on.
    assert state["effectiveRuntimeMode"] == "auto-accept-edits"
    native.send({"type": "configure", "runtimeMode": "Full access"})
    assert "runtimeMode must be one of" in native.wait_for(lambda f: f["type"] == "error")["message"]
    thread.close()
    native.close()


def test_a_new_conversation_starts_in_the_mode_last_picked_for_its_checkout_even_after_a_restart(
        daemon, mock, stack, daemon_env):
    status, answer = daemon.request("GET", f"/__devhost__/chat/mode?{daemon.query()}", origin=None)
    assert status == 200 and answer == {"runtimeMode": "supervised"}  # nothing picked yet
    first = daemon.create_session()
    thread = daemon.connect_thread(first["id"])
    thread.send({"type": "configure", "runtimeMode": "auto-accept-edits", "plan": False})
    thread.wait_for(lambda f: f["type"] == "state" and f["session"]["runtimeMode"] == "auto-accept-edits")
    thread.close()
    assert daemon.create_session()["runtimeMode"] == "auto-accept-edits"
    assert daemon.create_session(hostname="other.localhost")["runtimeMode"] == "supervised"  # its own checkout
    # Picked before any conversation is open (the panel's switch with no session).
    status, answer = daemon.request("PUT", f"/__devhost__/chat/mode?{daemon.query('other.localhost')}",
                                    {"runtimeMode": "full-access"}, host=daemon.host("other.localhost"))
    assert status == 200 and answer == {"runtimeMode": "full-access"}
    for bad in ({"runtimeMode": "plan"}, {"runtimeMode": "auto", "plan": True}, {}):
        status, answer = daemon.request("PUT", f"/__devhost__/chat/mode?{daemon.query()}", bad)
        assert status == 400 and "auto-accept-edits" in answer["error"], bad

    assert daemon.stop() == 0
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        assert again.create_session()["runtimeMode"] == "auto-accept-edits"
        assert again.create_session(hostname="other.localhost")["runtimeMode"] == "full-access"
    finally:
        assert again.stop() == 0

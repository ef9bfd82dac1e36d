"""The chat core end to end: /__devhost__/ws/core on a real devhostd, the real CLIs behind it.

Each test drives the seed's requests through the project's own client (devhostd/core_client.py).
"""
from __future__ import annotations

import json
import signal

import pytest

from tests.integration.daemon import Daemon, wait_until, write_manifest
from tests.mock_anthropic import message_text, text_reply, tool_use_reply
from tests.mock_openai import shell_reply, text_reply as codex_text
from devhostd.core_client import CoreConnection, CoreRequestError




def _items(core, chat_id):
    """The thread as a client rebuilds it from attach + events (what the chat looks like to it)."""
    return {item["id"]: item for item in core.chats.history(chat_id, limit=100)["items"]}


def _by_kind(core, chat_id, kind):
    return [item for item in _items(core, chat_id).values() if item["kind"] == kind]


def _event(core, predicate, what, timeout=60):
    return core.wait_event(lambda e: e["event"] == "chat.event" and predicate(e["payload"]["event"]),
                           timeout=timeout, what=what)["payload"]["event"]


def _turn_ended(core, turn_id, state=None, timeout=60):
    event = _event(core, lambda ev: ev.get("type") == "item" and ev["item"]["id"] == turn_id
                   and ev["item"]["state"] != "running", f"turn {turn_id} to end", timeout)
    if state:
        assert event["item"]["state"] == state, event["item"]
    return event["item"]


def _status(core, chat_id, status, timeout=60):
    return core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == chat_id
                           and e["payload"]["info"]["status"] == status, timeout=timeout,
                           what=f"status {status}")["payload"]["info"]


def test_a_claude_turn_builds_the_thread(core, daemon, mock, stack):
    mock.add(text_reply("Hello ", "from the core."))
    info = core.chats.create("c1", provider="claude", cwd=str(stack / "project"))
    assert info["chatId"] == "c1" and info["status"] == "idle" and info["running"] is False
    assert core.chats.attach("c1")["items"] == []
    sent = core.chats.send("c1", "hello")
    assert sent["queued"] is False
    _turn_ended(core, sent["turnId"], "done")
    kinds = [(i["kind"], i.get("text")) for i in _by_kind(core, "c1", "user") + _by_kind(core, "c1", "assistant")]
    assert ("user", "hello") in kinds and ("assistant", "Hello from the core.") in kinds
    info = _status(core, "c1", "idle")
    assert info["agentSessionId"] and info["usage"]["turns"] == 1 and info["activeTurnId"] is None
    assert [c["chatId"] for c in core.chats.list()] == ["c1"]


def test_a_codex_turn_builds_the_thread(core, daemon, openai, stack):
    openai.add(codex_text("Codex ", "says hi."))
    core.chats.create("x1", provider="codex", cwd=str(stack / "project"))
    core.chats.attach("x1")
    sent = core.chats.send("x1", "hello codex")
    _turn_ended(core, sent["turnId"], "done")
    assert [i["text"] for i in _by_kind(core, "x1", "assistant")] == ["Codex says hi."]


def test_queue_three_during_a_slow_turn_then_unqueue_one_and_send_another_now(core, daemon, mock, stack):
    mock.add(text_reply(*["slow "] * 80, delay=0.15), text_reply("answer to D"), text_reply("answer to B"))
    core.chats.create("q1", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("q1")
    first = core.chats.send("q1", "A: a long story")
    _event(core, lambda ev: ev.get("type") == "delta", "the story streaming")
    b = core.chats.send("q1", "B")
    c = core.chats.send("q1", "C")
    d = core.chats.send("q1", "D")
    assert all(r["queued"] for r in (b, c, d)) and len({b["turnId"], c["turnId"], d["turnId"]}) == 3
    info = core.wait_event(lambda e: e["event"] == "chat.status" and len(e["payload"]["info"]["queue"]) == 3
                           or (e["event"] == "chat.event" and e["payload"]["event"].get("type") == "info"
                               and len(e["payload"]["event"]["info"]["queue"]) == 3), what="three queued")
    queued = (info["payload"].get("info") or info["payload"]["event"]["info"])["queue"]
    assert [m["text"] for m in queued] == ["B", "C", "D"]
    c_id, d_id = queued[1]["id"], queued[2]["id"]
    assert core.chats.unqueue("q1", c_id)["message"]["text"] == "C"
    with pytest.raises(CoreRequestError) as gone:
        core.chats.unqueue("q1", c_id)
    assert gone.value.code == "request-not-found"
    core.chats.send_now("q1", d_id)
    _turn_ended(core, first["turnId"], "aborted")
    _turn_ended(core, d["turnId"], "done")
    _turn_ended(core, b["turnId"], "done")
    last_words = [message_text(r).split()[-1] for r in mock.requests]  # each request ends on its newest message
    assert last_words[1:] == ["D", "B"]  # D went first, B after it; C never went
    wait_until(lambda: next(c for c in core.chats.list() if c["chatId"] == "q1")["queue"] == [],
               what="the queue to be empty")


def _approval(core, chat_id):
    """The next approval the chat waits on (not one answered already)."""
    answered = {e["payload"]["event"]["item"]["requestId"] for e in core.events if e["event"] == "chat.event"
                and e["payload"]["event"].get("type") == "item" and e["payload"]["event"]["item"]["kind"] == "approval"
                and e["payload"]["event"]["item"]["decision"] != "pending"}
    event = _event(core, lambda ev: ev.get("type") == "item" and ev["item"]["kind"] == "approval"
                   and ev["item"]["decision"] == "pending" and ev["item"]["requestId"] not in answered, "an approval")
    status = core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == chat_id
                             and [r["requestId"] for r in e["payload"]["info"]["requests"]] == [
                                 event["item"]["requestId"]], what="needs-you for it")
    assert status["payload"]["info"]["status"] == "needs-you"
    return event["item"]


def test_approvals_allow_allow_always_and_deny(core, daemon, mock, stack):
    project = stack / "project"
    mock.add(tool_use_reply("Bash", {"command": "touch one.txt", "description": "one"}), text_reply("made one"),
             tool_use_reply("Bash", {"command": "touch two.txt", "description": "two"}), text_reply("made two"),
             tool_use_reply("Bash", {"command": "touch two.txt", "description": "two again"}), text_reply("again"),
             tool_use_reply("Bash", {"command": "touch three.txt", "description": "three"}), text_reply("ok"))
    core.chats.create("a1", provider="claude", cwd=str(project), runtimeMode="supervised")
    core.chats.attach("a1")

    turn = core.chats.send("a1", "make one")["turnId"]
    core.chats.approve("a1", _approval(core, "a1")["requestId"], "allow")
    _turn_ended(core, turn, "done")
    assert (project / "one.txt").exists()

    turn = core.chats.send("a1", "make two, always")["turnId"]
    approval = _approval(core, "a1")
    assert approval["canAllowAlways"] is True
    core.chats.approve("a1", approval["requestId"], "allow-always")
    _turn_ended(core, turn, "done")
    turn = core.chats.send("a1", "make two again")["turnId"]
    _turn_ended(core, turn, "done")  # the rule granted above: no approval this time
    assert len(_by_kind(core, "a1", "approval")) == 2

    turn = core.chats.send("a1", "make three")["turnId"]
    approval = _approval(core, "a1")
    core.chats.approve("a1", approval["requestId"], "deny", message="Not three.")
    _turn_ended(core, turn, "done")
    assert not (project / "three.txt").exists()
    assert "Not three." in message_text(mock.requests[-1])
    with pytest.raises(CoreRequestError) as settled:
        core.chats.approve("a1", approval["requestId"], "allow")
    assert settled.value.code == "request-not-found"


def test_a_codex_approval_through_the_core(core, daemon, openai, stack):
    openai.add(shell_reply("touch codex.txt", justification="needs to write"), codex_text("done"))
    core.chats.create("x2", provider="codex", cwd=str(stack / "project"), runtimeMode="supervised")
    core.chats.attach("x2")
    turn = core.chats.send("x2", "make a file")["turnId"]
    core.chats.approve("x2", _approval(core, "x2")["requestId"], "allow")
    _turn_ended(core, turn, "done")
    assert (stack / "project" / "codex.txt").exists()


def test_a_question_is_answered(core, daemon, mock, stack):
    question = {"questions": [{"question": "Which color?", "header": "Color", "multiSelect": False,
                               "options": [{"label": "Red", "description": "warm"},
                                           {"label": "Blue", "description": "cool"}]}]}
    mock.add(tool_use_reply("AskUserQuestion", question), text_reply("Blue it is."))
    core.chats.create("ask", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("ask")
    turn = core.chats.send("ask", "ask me a color")["turnId"]
    item = _event(core, lambda ev: ev.get("type") == "item" and ev["item"]["kind"] == "question",
                  "a question")["item"]
    assert item["questions"][0]["choices"][1]["label"] == "Blue"
    core.chats.answer("ask", item["requestId"], {item["questions"][0]["id"]: "Blue"})
    _turn_ended(core, turn, "done")
    assert "Blue" in message_text(mock.requests[1])
    [answered] = _by_kind(core, "ask", "question")
    assert answered["state"] == "answered" and answered["answers"] == {item["questions"][0]["id"]: "Blue"}


def test_cancel_clear_and_kill(core, daemon, mock, stack):
    mock.add(text_reply(*["slow "] * 80, delay=0.15), text_reply(*["slow "] * 80, delay=0.15))
    core.chats.create("k1", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("k1")
    turn = core.chats.send("k1", "long")["turnId"]
    _event(core, lambda ev: ev.get("type") == "delta", "streaming")
    core.chats.cancel("k1")
    _turn_ended(core, turn, "aborted")
    assert len(_by_kind(core, "k1", "user")) == 1  # the conversation is kept

    turn = core.chats.send("k1", "long again")["turnId"]
    _event(core, lambda ev: ev.get("type") == "delta" and ev.get("itemId", "").endswith(":0")
           and core.chats is not None, "streaming again")
    with pytest.raises(CoreRequestError) as busy:
        core.chats.clear("k1")
    assert busy.value.code == "chat-busy"
    core.chats.clear("k1", force=True)
    reset = _event(core, lambda ev: ev.get("type") == "reset", "the reset")
    assert reset["items"] == [] and reset["info"]["agentSessionId"] is None
    assert _items(core, "k1") == {}

    store = stack / "state" / "core" / "chats"
    assert any(p.name.startswith("c-k1.") for p in store.iterdir())
    core.chats.kill("k1")
    assert not any(p.name.startswith("c-k1.") for p in store.iterdir())
    with pytest.raises(CoreRequestError) as gone:
        core.chats.send("k1", "hello?")
    assert gone.value.code == "chat-not-found"


def test_a_chat_is_renamed_its_clients_told_and_a_bad_title_is_refused(core, daemon, stack):
    core.chats.create("r1", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("r1")
    assert core.chats.rename("r1", "  Fix   the cart  ") == {"title": "Fix the cart"}
    told = _event(core, lambda ev: ev.get("type") == "info" and ev["info"].get("suggestedTitle") == "Fix the cart",
                  "the info naming it")
    assert told["info"]["suggestedTitle"] == "Fix the cart"
    listed = [c for c in core.chats.list() if c["chatId"] == "r1"]
    assert listed[0]["suggestedTitle"] == "Fix the cart"
    for title, words in [("", "the new name"), ("x" * 121, "at most 120"), ("a\x07b", "control characters")]:
        with pytest.raises(CoreRequestError) as refused:
            core.chats.rename("r1", title)
        assert refused.value.code == "bad-request" and words in refused.value.message
    with pytest.raises(CoreRequestError) as gone:
        core.chats.rename("nope", "A name")
    assert gone.value.code == "chat-not-found"


def test_bad_requests_get_codes_not_crashes(core, daemon):
    for kind, payload, code in [("chat.nope", {}, "unknown-request"), ("chat.send", {"chatId": "x", "text": "hi"},
                                "chat-not-found"), ("chat.create", {}, "bad-request"),
                                ("chat.send", {"chatId": "x"}, "bad-request"),
                                ("chat.create", {"chatId": "p", "cwd": "relative/path"}, "bad-request")]:
        with pytest.raises(CoreRequestError) as refused:
            core.request(kind, payload)
        assert refused.value.code == code, kind
    status, answer = daemon.request("POST", "/__devhost__/core", raw=b"{nope", host=daemon.control_origin[7:],
                                    origin=daemon.control_origin)
    assert status == 200 and answer["ok"] is False and answer["error"]["code"] == "bad-request"
    status, answer = daemon.request("POST", "/__devhost__/core", {"id": "1", "type": "chat.list", "payload": {}},
                                    host=daemon.control_origin[7:], origin=daemon.control_origin)
    assert answer == {"id": "1", "ok": True, "result": {"chats": []}}
    status, _ = daemon.request("POST", "/__devhost__/core", {"id": "1", "type": "chat.list"})  # a routed hostname
    assert status == 403


def test_a_core_message_is_at_most_200000_characters(core, mock, stack):
    mock.add(text_reply("Read it all."))
    core.chats.create("long", provider="claude", cwd=str(stack / "project"))
    with pytest.raises(CoreRequestError) as refused:
        core.chats.send("long", "x" * 200_001)
    assert refused.value.code == "bad-request" and "at most 200,000 characters" in refused.value.message
    assert mock.requests == []
    core.chats.send("long", "y" * 200_000)
    mock.wait_for_requests(1, timeout=60)
    assert "y" * 200_000 in json.dumps(mock.requests[0]["messages"])


def _kill_hard(daemon):
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(timeout=30)


def test_a_daemon_killed_mid_turn_keeps_the_thread_and_aborts_the_turn_with_a_note(stack, daemon_env, mock):
    mock.add(text_reply(*["slow "] * 200, delay=0.1))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            core.chats.create("r1", provider="claude", cwd=str(stack / "project"))
            core.chats.attach("r1")
            turn = core.chats.send("r1", "a long one")["turnId"]
            core.chats.send("r1", "and this after")
            _event(core, lambda ev: ev.get("type") == "delta", "streaming")
        _kill_hard(first)
    finally:
        first.stop()
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(again.control_origin, token=again.core_token) as core:
            info = core.chats.create("r1")
            assert info["queuePaused"] is True and [m["text"] for m in info["queue"]] == ["and this after"]
            items = core.chats.attach("r1")["items"]
            turn_item = next(i for i in items if i["id"] == turn)
            assert turn_item["state"] == "aborted"
            notes = [i["text"] for i in items if i["kind"] == "note"]
            assert "This turn could not be resumed after the machine restarted: this machine does not resume turns" \
                in notes
            assert any(i["kind"] == "user" and i["text"] == "a long one" for i in items)
    finally:
        assert again.stop() == 0
    wait_until(lambda: not _leftover_cli(daemon_env), what="the first daemon's CLI to be gone")


def _leftover_cli(env):
    from tests.integration.daemon import processes_with_env
    return processes_with_env(f"HOME={env['HOME']}")


def test_with_resuming_on_a_turn_resumes_once_and_never_a_third_time(stack, daemon_env, mock):
    with open(stack / "devhost.toml", "a") as manifest:
        manifest.write("[core]\nresume_interrupted_turns = true\n")
    mock.add(text_reply(*["slow "] * 200, delay=0.1), text_reply(*["again "] * 200, delay=0.1))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            core.chats.create("r2", provider="claude", cwd=str(stack / "project"))
            core.chats.attach("r2")
            turn = core.chats.send("r2", "keep working")["turnId"]
            _event(core, lambda ev: ev.get("type") == "delta", "streaming")
            _status(core, "r2", "running")
            wait_until(lambda: _agent_session(core, "r2"), what="the CLI session")
        _kill_hard(first)
    finally:
        first.stop()
    second = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        mock.wait_for_requests(2, timeout=60)  # the resumed process asked the model again
        assert "Continue where you left off" in message_text(mock.requests[1])
        with CoreConnection(second.control_origin, token=second.core_token) as core:
            items = core.chats.attach("r2")["items"]
            assert next(i for i in items if i["id"] == turn)["attempt"] == 2
            assert any(i["kind"] == "note" and i["text"] == "Resumed after a restart" for i in items)
        wait_until(lambda: _resume_acknowledged(stack, turn), what="the resumed turn to be taken up")
        _kill_hard(second)
    finally:
        second.stop()
    third = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(third.control_origin, token=third.core_token) as core:
            items = core.chats.attach("r2")["items"]
            assert next(i for i in items if i["id"] == turn)["state"] == "aborted"
            assert any(i["kind"] == "note" and i["text"].endswith("it was already resumed after an earlier restart")
                       for i in items)
        assert len(mock.requests) == 2  # no third process worked on the turn
    finally:
        assert third.stop() == 0


def test_a_resume_after_a_restart_is_worded_as_the_chat_asked(stack, daemon_env, mock):
    with open(stack / "devhost.toml", "a") as manifest:
        manifest.write("[core]\nresume_interrupted_turns = true\n")
    mock.add(text_reply(*["slow "] * 200, delay=0.1), text_reply("going on"))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(first.control_origin, token=first.core_token) as core:
            core.chats.create("words", provider="claude", cwd=str(stack / "project"))
            core.chats.configure("words", resumeWords={"prompt": "The deploy restarted you. Carry on.",
                                                       "note": "Back after the deploy"})
            core.chats.attach("words")
            core.chats.send("words", "keep working")
            _event(core, lambda ev: ev.get("type") == "delta", "streaming")
            wait_until(lambda: _agent_session(core, "words"), what="the CLI session")
        _kill_hard(first)
    finally:
        first.stop()
    second = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        mock.wait_for_requests(2, timeout=60)
        assert "The deploy restarted you. Carry on." in message_text(mock.requests[1])
        with CoreConnection(second.control_origin, token=second.core_token) as core:
            notes = [i["text"] for i in core.chats.attach("words")["items"] if i["kind"] == "note"]
            assert "Back after the deploy" in notes
    finally:
        second.stop()


def _agent_session(core, chat_id):
    return any(e["event"] == "chat.event" and e["payload"]["event"].get("type") == "info"
               and e["payload"]["event"]["info"].get("agentSessionId") for e in core.events)


def _resume_acknowledged(stack, turn_id):
    log = stack / "state" / "core" / "chats" / "c-r2.log"
    if not log.exists():
        return False
    for line in log.read_text().splitlines():
        try:
            event = json.loads(line)["event"]
        except (ValueError, KeyError):
            continue
        if (event.get("type") == "item" and event["item"]["id"] == turn_id
                and event["item"].get("resumePending") is False):
            return True
    return False


def test_the_manifest_is_the_only_way_to_turn_resuming_on(tmp_path):
    write_manifest(tmp_path)
    from storage.manifest import load_manifest
    assert load_manifest(str(tmp_path / "devhost.toml")).resume_interrupted_turns is False


def test_attach_since_replays_the_log_and_history_pages_expire_on_a_clear(core, daemon, mock, stack):
    mock.add(text_reply("one"), text_reply("two"))
    core.chats.create("h1", provider="claude", cwd=str(stack / "project"))
    first = core.chats.attach("h1")
    turn = core.chats.send("h1", "first")["turnId"]
    _turn_ended(core, turn, "done")
    seen = [e["payload"]["seq"] for e in core.events if e["event"] == "chat.event" and e["payload"]["chatId"] == "h1"]
    middle = seen[len(seen) // 2]
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as other:
        again = other.chats.attach("h1", since=middle)
        assert again["items"] == [] and [e["type"] for e in again["events"]]
        assert len(again["events"]) == again["seq"] - middle  # exactly what came after `since`
        snapshot = other.chats.attach("h1", since=again["seq"] + 100)  # a future seq: a snapshot instead
        assert snapshot["items"] and "events" not in snapshot
    assert first["seq"] == 0

    page = core.chats.history("h1", limit=2)
    assert len(page["items"]) == 2 and page["history"]["cursor"]
    older = core.chats.history("h1", limit=2, cursor=page["history"]["cursor"])
    assert older["items"] and older["items"][-1]["id"] != page["items"][0]["id"]
    core.chats.clear("h1")
    with pytest.raises(CoreRequestError) as expired:
        core.chats.history("h1", cursor=page["history"]["cursor"])
    assert expired.value.code == "history-expired"


def test_configure_changes_the_model_of_the_next_message(core, daemon, mock, stack):
    mock.add(text_reply("first"), text_reply("second"))
    core.chats.create("m1", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("m1")
    _turn_ended(core, core.chats.send("m1", "one")["turnId"], "done")
    info = core.chats.configure("m1", selection={"model": "sonnet"})
    assert info["selection"]["model"] == "sonnet"
    _turn_ended(core, core.chats.send("m1", "two")["turnId"], "done")
    assert "sonnet" in mock.requests[1]["model"] and mock.requests[0]["model"] != mock.requests[1]["model"]


def test_a_steer_joins_the_running_turn_once_the_cli_takes_it_up(core, daemon, mock, stack):
    mock.add(text_reply(*["slow "] * 40, delay=0.1), text_reply("steered answer"))
    core.chats.create("s1", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("s1")
    turn = core.chats.send("s1", "a long story")["turnId"]
    _event(core, lambda ev: ev.get("type") == "delta", "streaming")
    steer = core.chats.send("s1", "and make it short", delivery="steer")
    assert steer == {"queued": False, "turnId": turn}  # answered once Claude Code took it up
    user = _event(core, lambda ev: ev.get("type") == "item" and ev["item"]["kind"] == "user"
                  and ev["item"]["text"] == "and make it short", "the steer taken up")["item"]
    assert user["turnId"] == turn
    _turn_ended(core, turn, "done")
    assert message_text(mock.requests[-1]).split()[-1] == "short"
    wait_until(lambda: next(c for c in core.chats.list() if c["chatId"] == "s1")["queue"] == [],
               what="the steer to leave the queue")


def test_a_cancel_right_after_a_send_stops_the_turn_before_the_cli_runs_it(core, daemon, mock, stack):
    mock.add(text_reply("must not be asked for"))
    core.chats.create("s2", provider="claude", cwd=str(stack / "project"))
    core.chats.attach("s2")
    turn = core.chats.send("s2", "hello")["turnId"]
    core.chats.cancel("s2")
    _turn_ended(core, turn, "aborted")
    after = core.chats.send("s2", "after the cancel")
    assert after["queued"] is False  # a send after the abort goes out at once, the queue resumes


def test_a_second_daemon_on_the_same_state_folder_is_refused(daemon, stack, daemon_env):
    import subprocess
    import sys
    from tests.integration.daemon import REPO
    second = subprocess.run([sys.executable, str(REPO / "bin" / "devhostd"), "--port", "0", "--state-dir",
                             str(stack / "state"), "--config", str(stack / "devhost.toml")],
                            env=daemon_env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 1 and "own --state-dir" in second.stderr

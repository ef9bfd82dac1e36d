"""Accounts on the real CLIs: two logins per CLI, each a config home of its own named in the
manifest, reach the model with their own keys (the setup measured in
tests/fixtures/record_modes.py ``claude_accounts`` / ``codex_accounts``).

The homes and their logins: tests/accounts.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from devhostd.core_client import CoreRequestError
from tests.accounts import NAMES, homes, turn_keys, without_api_key  # noqa: F401 - homes: a fixture
from tests.integration.chats import items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import message_text as anthropic_text, text_reply as anthropic_reply, tool_use_reply
from tests.mock_openai import text_reply as openai_reply


@pytest.fixture
def daemon_env(daemon_env, homes):
    return without_api_key(daemon_env)


def turn(core, chat_id: str, text: str) -> None:
    turn_id = core.chats.send(chat_id, text)["turnId"]
    item = core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                           and e["payload"]["event"].get("type") == "item"
                           and e["payload"]["event"]["item"]["id"] == turn_id
                           and e["payload"]["event"]["item"]["state"] != "running", timeout=90,
                           what=f"the end of {turn_id}")["payload"]["event"]["item"]
    assert item["state"] == "done", item


def test_two_claude_accounts_reach_the_model_with_their_own_logins(core, daemon, mock, stack, homes):
    mock.add(anthropic_reply("hello work"), anthropic_reply("hello personal"))
    for name in NAMES:
        info = core.chats.create(name, provider="claude", cwd=str(stack / "project"), account=name)
        assert info["account"] == name
        core.chats.attach(name)
        before = len(mock.log)
        turn(core, name, f"hi from {name}")
        assert set(turn_keys(mock, before)) == {f"Bearer sk-ant-oat01-{name}"}
    for name in NAMES:  # each conversation is kept under its own home only
        session = core.chats.attach(name)["info"]["agentSessionId"]
        other = homes["claude", "personal" if name == "work" else "work"]
        assert list(Path(homes["claude", name]).glob(f"projects/*/{session}.jsonl"))
        assert not list(Path(other).glob(f"projects/*/{session}.jsonl"))


def test_two_codex_accounts_reach_the_model_with_their_own_keys(core, daemon, openai, stack):
    openai.add(openai_reply("hello work"), openai_reply("hello personal"))
    for name in NAMES:
        core.chats.create(f"x-{name}", provider="codex", cwd=str(stack / "project"), account=name)
        core.chats.attach(f"x-{name}")
        before = len(openai.log)
        turn(core, f"x-{name}", f"hi from {name}")
        assert set(turn_keys(openai, before)) == {f"Bearer sk-{name}-key"}


def test_after_a_turn_the_account_changes_only_to_one_that_reads_its_transcripts(core, daemon, mock, stack):
    mock.add(anthropic_reply("hello"))
    core.chats.create("c", provider="claude", cwd=str(stack / "project"), account="personal")
    core.chats.configure("c", account="work")  # before the first turn: freely
    core.chats.attach("c")
    turn(core, "c", "hi")
    with pytest.raises(CoreRequestError) as refused:
        core.chats.configure("c", account="personal")
    assert (refused.value.code, refused.value.message) == ("account-incompatible", (
        "This conversation is kept by the account 'work', which 'personal' cannot read. "
        "Fork the chat to go on under 'personal'."))
    with pytest.raises(CoreRequestError) as unknown:
        core.chats.configure("c", account="home")
    assert unknown.value.code == "bad-request" and "the accounts there are: personal, work" in str(unknown.value)
    assert core.chats.attach("c")["info"]["account"] == "work"


def test_the_last_picked_account_and_each_chats_own_survive_a_restart(core, daemon, mock, stack, daemon_env):
    mock.add(anthropic_reply("I will remember otter."), anthropic_reply("It was otter."))
    core.chats.create("w", provider="claude", cwd=str(stack / "project"), account="work")
    core.chats.attach("w")
    turn(core, "w", "remember otter")
    core.chats.create("p", provider="claude", cwd=str(stack / "project"), account="personal")
    core.close()
    assert daemon.stop() == 0
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        from devhostd.core_client import CoreConnection
        with CoreConnection(again.control_origin, token=again.core_token) as host:
            assert host.chats.create("n", provider="claude", cwd=str(stack / "project"))["account"] == "personal"
            assert host.chats.create("m", provider="codex", cwd=str(stack / "project"))["account"] is None
            assert host.chats.attach("w")["info"]["account"] == "work"
            before = len(mock.log)
            turn(host, "w", "which animal?")  # resumed under its own home, with its own login
            assert set(turn_keys(mock, before)) == {"Bearer sk-ant-oat01-work"}
            assert "remember otter" in anthropic_text(mock.requests[-1])
    finally:
        assert again.stop() == 0


def test_provider_list_names_each_clis_accounts_and_whether_each_is_signed_in(core, daemon, stack, homes,
                                                                              daemon_env):
    core.chats.create("c", provider="codex", cwd=str(stack / "project"), account="personal")
    providers = {p["id"]: p for p in core.request("provider.list", {})["providers"]}
    assert providers["claude"]["available"] and providers["codex"]["available"]
    assert providers["claude"]["label"] == "Claude Code" and providers["codex"]["label"] == "Codex"
    assert providers["claude"]["accounts"] == [
        {"name": None, "configHome": f"{daemon_env['HOME']}/.claude", "signedIn": False, "default": True},
        {"name": "personal", "configHome": homes["claude", "personal"], "signedIn": True},
        {"name": "work", "configHome": homes["claude", "work"], "signedIn": True}]
    assert [(a["name"], a["configHome"], a["signedIn"]) for a in providers["codex"]["accounts"]] == [
        (None, daemon_env["CODEX_HOME"], False), ("personal", homes["codex", "personal"], True),
        ("work", homes["codex", "work"], True)]
    assert (providers["claude"]["lastAccount"], providers["codex"]["lastAccount"]) == (None, "personal")



def test_a_subagents_transcript_is_read_from_the_chats_account_home(core, daemon, mock, stack, homes):
    prompt = "SUBAGENT-WORK: run echo sub-hello, then say SUB-DONE."
    mock.add(tool_use_reply("Task", {"description": "a helper", "prompt": prompt, "subagent_type": "general-purpose"}),
             anthropic_reply("It is on its way."), anthropic_reply("It reported."))
    mock.route(prompt, anthropic_reply("SUB-DONE"))
    core.chats.create("s", provider="claude", cwd=str(stack / "project"), account="work")
    core.chats.send("s", "delegate something")
    wait_until(lambda: any(a["status"] == "done" for a in items(core, "s", "subagent")), timeout=90,
               what="the subagent done")
    [agent] = items(core, "s", "subagent")
    wait_until(lambda: any(i["kind"] == "user" for i in core.chats.subagent("s", agent["id"])["items"]), timeout=30,
               what="the agent's transcript")
    assert list(Path(homes["claude", "work"]).glob("projects/*/*/subagents/*.jsonl"))
    whole = core.chats.subagent("s", agent["id"])
    assert [i["text"] for i in whole["items"] if i["kind"] == "user"] == [prompt]


# ---- the panel's accounts: the Chat API's sessions and page sockets ---------------------------

def page_turn(thread, text: str) -> None:
    """One message from the page, to the end of its turn."""
    command_id = thread.send_message(text)
    thread.wait_item(lambda i: i["kind"] == "turn" and i["state"] == "done" and i.get("commandId", command_id)
                     == command_id, timeout=90, what=f"the end of the turn of {text!r}")


def test_a_page_session_runs_under_the_account_the_panel_picked_and_moves_while_it_can(daemon, mock, homes):
    status, answer = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}", origin=None)
    assert status == 200
    claude = next(h for h in answer["harnesses"] if h["id"] == "claude-code")
    # The default home (no login in the test's HOME) and the manifest's two, by name; no path.
    assert [(a["name"], a["signedIn"]) for a in claude["accounts"]] == [(None, False), ("personal", True),
                                                                          ("work", True)]
    assert claude["account"] is None  # nothing picked yet

    mock.add(anthropic_reply("hello personal"))
    record = daemon.create_session(account="work")
    assert record["account"] == "work"
    thread = daemon.connect_thread(record["id"])
    # The panel's picker on an open conversation: the chat core's configure, by the page socket.
    thread.send({"type": "configure", "account": "personal"})
    thread.wait_for(lambda f: f["type"] == "state" and f["session"]["account"] == "personal",
                    what="the session's record under the new account")
    before = len(mock.log)
    page_turn(thread, "hi from the page")
    assert set(turn_keys(mock, before)) == {"Bearer sk-ant-oat01-personal"}
    # Once the CLI keeps the conversation under personal's home, work's cannot read it: refused.
    thread.send({"type": "configure", "account": "work"})
    refused = thread.wait_for(lambda f: f["type"] == "error", what="the refusal")["message"]
    assert "work" in refused and "personal" in refused, refused
    assert daemon.sessions()[0]["account"] == "personal"
    thread.close()

    # The last pick is what the next conversation gets, and what the picker shows.
    assert daemon.create_session()["account"] == "personal"
    status, answer = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}", origin=None)
    assert next(h for h in answer["harnesses"] if h["id"] == "claude-code")["account"] == "personal"
    # A resume names the account its conversation was saved under: no pick, even when it fails.
    status, _ = daemon.request("POST", "/__devhost__/chat/sessions", {
        "harness": "claude-code", "pageURL": daemon.page(), "target": "project", "account": "work",
        "resumeId": "00000000-0000-4000-8000-000000000000"})
    assert status == 404
    status, answer = daemon.request("GET", f"/__devhost__/chat/harnesses?{daemon.query()}", origin=None)
    assert next(h for h in answer["harnesses"] if h["id"] == "claude-code")["account"] == "personal"


def test_a_page_asking_for_an_account_the_manifest_does_not_name_is_told_which_there_are(daemon, homes):
    body = {"harness": "claude-code", "pageURL": daemon.page(), "target": "project"}
    status, answer = daemon.request("POST", "/__devhost__/chat/sessions", {**body, "account": "wrok"})
    assert status == 400 and "personal, work" in answer["error"], answer
    for wrong in (["/etc"], "x" * 65):
        status, answer = daemon.request("POST", "/__devhost__/chat/sessions", {**body, "account": wrong})
        assert status == 400 and "`account` is the name of one of the manifest's" in answer["error"], answer
        assert len(answer["error"]) < 200  # a long name is not echoed back
    record = daemon.create_session(account="work")
    thread = daemon.connect_thread(record["id"])
    thread.send({"type": "configure", "account": 7})
    refused = thread.wait_for(lambda f: f["type"] == "error")["message"]
    assert "`account` is the name of one of the manifest's" in refused
    thread.send({"type": "configure", "account": "wrok"})
    assert "personal, work" in thread.wait_for(lambda f: f["type"] == "error" and "wrok" in f["message"])["message"]
    thread.close()


def test_a_clients_preferred_account_is_what_its_new_chats_get(core, daemon, stack):
    core.chats.set_preferences(accounts={"codex": "personal"})
    assert core.chats.create("p", provider="codex", cwd=str(stack / "project"))["account"] == "personal"
    assert core.chats.create("d", provider="codex", cwd=str(stack / "project"), account=None)["account"] is None
    assert core.chats.create("c", provider="claude", cwd=str(stack / "project"))["account"] is None
    # One the manifest does not name (another machine's, say) is passed over: the last picked holds.
    core.chats.set_preferences(accounts={"claude": "nobody"})
    core.chats.create("w", provider="claude", cwd=str(stack / "project"), account="work")
    assert core.chats.create("n", provider="claude", cwd=str(stack / "project"))["account"] == "work"

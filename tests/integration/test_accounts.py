"""Accounts on the real CLIs: two logins per CLI, each a config home of its own named in the
manifest, reach the model with their own keys (the setup measured in
tests/fixtures/record_modes.py ``claude_accounts`` / ``codex_accounts``).

Claude Code: each home has a ``.credentials.json`` OAuth login, and devhostd's environment has
no ANTHROPIC_API_KEY (the CLI would use it under every home). Codex: each CODEX_HOME has its own
``auth.json`` key and a provider that takes the login's key (``requires_openai_auth``).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from devhostd.core_client import CoreRequestError
from tests.integration.chats import items
from tests.integration.daemon import Daemon, wait_until
from tests.mock_anthropic import message_text as anthropic_text, text_reply as anthropic_reply, tool_use_reply
from tests.mock_openai import text_reply as openai_reply
from tests.peers import codex_env

NAMES = ("work", "personal")


@pytest.fixture
def homes(tmp_path, stack, openai):
    """{(provider, name): config home}, each with its own login."""
    made = {}
    for name in NAMES:
        claude_home = tmp_path / f"claude-{name}"
        claude_home.mkdir()
        (claude_home / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {
            "accessToken": f"sk-ant-oat01-{name}", "refreshToken": f"sk-ant-ort01-{name}",
            "expiresAt": 4102444800000, "scopes": ["user:inference", "user:profile"], "subscriptionType": "pro"}}))
        env = codex_env(tmp_path / f"codex-{name}", openai.url, approval_policy="on-request",
                        project_dirs=(stack / "project",))
        codex_home = tmp_path / f"codex-{name}" / ".codex"
        config = (codex_home / "config.toml").read_text()
        (codex_home / "config.toml").write_text(
            config.replace('env_key = "MOCK_OPENAI_API_KEY"', "requires_openai_auth = true"))
        (codex_home / "auth.json").write_text(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": f"sk-{name}-key"}))
        assert env["CODEX_HOME"] == str(codex_home)
        made["claude", name], made["codex", name] = str(claude_home), str(codex_home)
    with open(stack / "devhost.toml", "a") as manifest:
        for (provider, name), home in made.items():
            manifest.write(f"[accounts.{provider}.{name}]\nconfig_home = {json.dumps(home)}\n")
    return made


@pytest.fixture
def daemon_env(daemon_env, homes):
    """The usual environment, without the API key every Claude Code home would use."""
    return {key: value for key, value in daemon_env.items() if key != "ANTHROPIC_API_KEY"}


def turn(core, chat_id: str, text: str) -> None:
    turn_id = core.chats.send(chat_id, text)["turnId"]
    item = core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                           and e["payload"]["event"].get("type") == "item"
                           and e["payload"]["event"]["item"]["id"] == turn_id
                           and e["payload"]["event"]["item"]["state"] != "running", timeout=90,
                           what=f"the end of {turn_id}")["payload"]["event"]["item"]
    assert item["state"] == "done", item


def turn_keys(server, since: int = 0) -> list[str]:
    return [entry["headers"].get("authorization") or entry["headers"].get("x-api-key")
            for entry in server.log[since:] if entry["kind"] == "turn"]


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

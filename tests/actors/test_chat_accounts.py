"""Accounts in-process and fast: the Registry and its Chat actors on tests/fake_claude.py, run
through a shell that notes the CLAUDE_CONFIG_DIR each CLI process got.

A chat runs under the manifest's account it names (else the provider's last picked), keeps it on
disk, moves freely before its first turn and afterwards only to an account that reads the same
transcripts. The real CLIs reaching the mock with each account's own key: tests/integration/test_accounts.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from actors.errors import ChatError
from actors.registry import CoreClients, Registry
from tests.actors.shutdown import stop_registry
from tests.sinks import Sink
from web.core import wire

FAKE = (sys.executable, str(Path(__file__).resolve().parents[1] / "fake_claude.py"))
ASK = 10


@pytest.fixture
def homes(tmp_path):
    """Two homes, and ``alias``: another name (a symlink) for work's."""
    made = {name: tmp_path / f"claude-{name}" for name in ("work", "personal")}
    for home in made.values():
        home.mkdir()
    (tmp_path / "alias").symlink_to(made["work"])
    made["alias"] = tmp_path / "alias"
    return {name: str(home) for name, home in made.items()}


@pytest.fixture
def noted(tmp_path):
    return tmp_path / "homes.txt"


@pytest.fixture
def runtime(tmp_path, homes, noted):
    started = []
    command = ("/bin/sh", "-c", 'printf "%s\\n" "${CLAUDE_CONFIG_DIR:-default}" >> "$0"; exec "$@"', str(noted),
               *FAKE)

    def start():
        ref = Registry.start(str(tmp_path / "chats"), CoreClients(), commands=lambda: {"claude-code": command},
                             accounts=lambda: {"claude": dict(homes)}, chat_options={"ack_timeout": 0.5})
        started.append(ref)
        return ref.proxy()

    yield start
    for ref in started:
        stop_registry(ref, ASK)


def turn_done(chat, text: str) -> None:
    watcher = Sink(wire.encode)
    chat.core_attach(watcher).get(timeout=ASK)
    sent = chat.core_send(text).get(timeout=ASK)
    watcher.wait_for(lambda f: f["payload"].get("event", {}).get("item", {}).get("id") == sent["turnId"]
                     and f["payload"]["event"]["item"]["state"] == "done", "the turn done")


def refused(future) -> ChatError:
    with pytest.raises(ChatError) as caught:
        future.get(timeout=ASK)
    return caught.value


def test_a_chat_runs_its_cli_under_the_config_home_of_the_account_it_names(runtime, tmp_path, homes, noted):
    registry = runtime()
    info = registry.create_chat({"chatId": "w", "cwd": str(tmp_path), "account": "work"}).get(timeout=ASK)
    assert info["account"] == "work"
    turn_done(registry.chat("w").get(timeout=ASK), "hello")
    default = registry.create_chat({"chatId": "d", "cwd": str(tmp_path), "account": None}).get(timeout=ASK)
    assert default["account"] is None
    turn_done(registry.chat("d").get(timeout=ASK), "hello")
    assert noted.read_text().splitlines() == [homes["work"], "default"]


def test_an_account_the_manifest_does_not_name_is_refused_naming_those_it_does(runtime, tmp_path):
    registry = runtime()
    error = refused(registry.create_chat({"chatId": "x", "cwd": str(tmp_path), "account": "/etc"}))
    assert error.code == "bad-request"
    assert str(error) == ("The manifest has no claude account '/etc'; the accounts there are: alias, personal, work "
                          "(or null for the default)")
    assert registry.list_chats().get(timeout=ASK) == []


def test_a_new_chat_without_an_account_gets_the_last_picked_also_after_a_restart(runtime, tmp_path):
    first = runtime()
    assert first.create_chat({"chatId": "a", "cwd": str(tmp_path)}).get(timeout=ASK)["account"] is None
    first.create_chat({"chatId": "b", "cwd": str(tmp_path), "account": "personal"}).get(timeout=ASK)
    assert first.create_chat({"chatId": "c", "cwd": str(tmp_path)}).get(timeout=ASK)["account"] == "personal"
    first.chat("a").get(timeout=ASK).configure(account="work").get(timeout=ASK)  # a pick too
    stop_registry(first.actor_ref, ASK)
    again = runtime()
    assert again.create_chat({"chatId": "d", "cwd": str(tmp_path)}).get(timeout=ASK)["account"] == "work"
    # A chat on disk keeps its own account.
    assert again.chat("b").get(timeout=ASK).info().get(timeout=ASK)["account"] == "personal"
    assert again.create_chat({"chatId": "b", "cwd": str(tmp_path)}).get(timeout=ASK)["account"] == "personal"


def test_before_its_first_turn_a_chat_moves_freely_and_afterwards_only_where_its_transcripts_are(
        runtime, tmp_path, homes, noted):
    registry = runtime()
    registry.create_chat({"chatId": "c", "cwd": str(tmp_path), "account": "personal"}).get(timeout=ASK)
    chat = registry.chat("c").get(timeout=ASK)
    assert chat.configure(account="work").get(timeout=ASK)["account"] == "work"
    turn_done(chat, "hello")
    error = refused(chat.configure(model="opus", account="personal"))
    assert (error.code, str(error)) == ("account-incompatible", (
        "This conversation is kept by the account 'work', which 'personal' cannot read. "
        "Fork the chat to go on under 'personal'."))
    info = chat.info().get(timeout=ASK)
    assert info["account"] == "work" and info["selection"]["model"] is None  # a refusal changes nothing
    assert refused(chat.configure(account=None)).code == "account-incompatible"
    # The same home under another name reads the same transcripts: allowed, on a new process.
    assert chat.configure(account="alias").get(timeout=ASK)["account"] == "alias"
    turn_done(chat, "again")
    assert noted.read_text().splitlines() == [homes["work"], homes["alias"]]
    # A clear starts a new conversation: any account again.
    chat.clear(True).get(timeout=ASK)
    assert chat.configure(account="personal").get(timeout=ASK)["account"] == "personal"


def test_a_chat_whose_account_left_the_manifest_sends_nothing_and_says_what_to_do(tmp_path, homes):
    accounts = {"claude": dict(homes)}
    ref = Registry.start(str(tmp_path / "chats"), CoreClients(), commands=lambda: {"claude-code": FAKE},
                         accounts=lambda: accounts)
    registry = ref.proxy()
    try:
        registry.create_chat({"chatId": "c", "cwd": str(tmp_path), "account": "personal"}).get(timeout=ASK)
        chat = registry.chat("c").get(timeout=ASK)
        del accounts["claude"]["personal"]
        error = refused(chat.core_send("hello"))
        assert error.code == "bad-request" and "no longer names" in str(error)
        assert "[accounts.claude.personal]" in str(error)
        assert chat.info().get(timeout=ASK)["running"] is False  # no CLI ran under another home
    finally:
        stop_registry(ref, ASK)

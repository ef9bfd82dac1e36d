"""storage.accounts: the manifest's named logins per CLI, the rule for moving a chat between
them, and the account last picked per provider."""
import json
import os
import stat

import pytest

from storage.accounts import (AccountsError, LastPicked, account_env, change_refusal, default_home, home_of,
                              parse_accounts, unknown_account)
from storage.manifest import ManifestError, load_manifest

WHERE = "/stack/devhost.toml"


def refusal(table) -> str:
    with pytest.raises(AccountsError) as caught:
        parse_accounts(table, WHERE)
    return str(caught.value)


# ---- parsing -----------------------------------------------------------------------------------

def test_each_account_names_the_config_home_its_cli_reads(monkeypatch):
    monkeypatch.setenv("HOME", "/home/me")
    assert parse_accounts({"claude": {"work": {"config_home": "~/.claude-work"}},
                           "codex": {"personal": {"config_home": "/srv/codex//personal/"}}}, WHERE) == {
        "claude": {"work": "/home/me/.claude-work"}, "codex": {"personal": "/srv/codex/personal"}}


def test_no_accounts_table_is_no_named_account():
    assert parse_accounts(None, WHERE) == {}


def test_a_provider_devhostd_does_not_know_is_refused_naming_those_it_does():
    words = refusal({"claude-code": {"work": {"config_home": "/x"}}})
    assert "[accounts.claude-code]" in words and "claude and codex" in words and "rename the table" in words


@pytest.mark.parametrize("name", ["with space", "a" * 65, "dot.ted", "", "ü"])
def test_an_account_name_outside_letters_digits_underscore_and_dash_is_refused(name):
    words = refusal({"claude": {name: {"config_home": "/x"}}})
    assert "1..64 letters, digits, '_' or '-'" in words and "rename it" in words


@pytest.mark.parametrize("home", ["relative/home", "./here", "~other/x", "", 3, None])
def test_a_config_home_must_be_absolute_or_under_the_home_folder(home):
    table = {"config_home": home} if home is not None else {}
    words = refusal({"codex": {"work": table}})
    assert "[accounts.codex.work]" in words and "absolute path or one under ~" in words
    assert '"~/.codex-work"' in words  # what to write instead


def test_an_unknown_key_in_an_account_is_refused():
    assert "unknown key 'api_key'" in refusal({"claude": {"work": {"config_home": "/x", "api_key": "sk"}}})


def test_the_manifest_refuses_a_broken_accounts_table_with_its_words(tmp_path):
    path = tmp_path / "devhost.toml"
    path.write_text('name = "s"\n[services.app]\nhost = "app.localhost"\n'
                    '[accounts.claude.work]\nconfig_home = "rel"\n')
    with pytest.raises(ManifestError, match=r"\[accounts.claude.work\]: `config_home` must be an absolute path"):
        load_manifest(str(path))
    path.write_text('name = "s"\n[services.app]\nhost = "app.localhost"\n'
                    '[accounts.claude.work]\nconfig_home = "/homes/work"\n')
    assert load_manifest(str(path)).accounts == {"claude": {"work": "/homes/work"}}


# ---- homes and environments -------------------------------------------------------------------

ACCOUNTS = {"claude": {"work": "/homes/claude-work"}, "codex": {"personal": "/homes/codex-personal"}}


def test_a_named_account_gives_its_cli_the_variable_of_its_home_and_the_default_gives_none():
    assert account_env(ACCOUNTS, "claude", "work") == {"CLAUDE_CONFIG_DIR": "/homes/claude-work"}
    assert account_env(ACCOUNTS, "codex", "personal") == {"CODEX_HOME": "/homes/codex-personal"}
    assert account_env(ACCOUNTS, "claude", None) == {}  # devhostd's own environment, as before accounts
    assert account_env(ACCOUNTS, "claude", "personal") == {}  # not the manifest's: never a guessed path


def test_the_default_accounts_home_is_the_clis_own_default():
    assert default_home("claude", {"HOME": "/home/me"}) == "/home/me/.claude"
    assert default_home("codex", {"HOME": "/home/me", "CODEX_HOME": "/elsewhere"}) == "/elsewhere"
    assert home_of(ACCOUNTS, "claude", None, {"CLAUDE_CONFIG_DIR": "/c"}) == "/c"
    assert home_of(ACCOUNTS, "claude", "work", {}) == "/homes/claude-work"
    assert home_of(ACCOUNTS, "codex", "work", {}) is None


def test_an_unknown_name_is_refused_naming_the_accounts_there_are():
    assert unknown_account(ACCOUNTS, "claude", "home") == \
        "The manifest has no claude account 'home'; the accounts there are: work (or null for the default)"
    words = unknown_account({}, "codex", "work")
    assert "it names none" in words and "[accounts.codex.work]" in words


# ---- moving a chat between accounts -----------------------------------------------------------

def test_before_its_first_turn_a_chat_may_move_to_any_account():
    assert change_refusal("claude", None, "/a", "work", "/b", conversation=False) is None


def test_after_a_turn_a_chat_moves_only_to_an_account_that_reads_the_same_transcripts(tmp_path):
    same = tmp_path / "home"
    same.mkdir()
    (tmp_path / "link").symlink_to(same)
    assert change_refusal("claude", None, str(same), "work", str(tmp_path / "link"), conversation=True) is None
    assert change_refusal("claude", "work", "/a", "work", "/a", conversation=True) is None
    assert change_refusal("claude", None, "/a", "work", "/b", conversation=True) == (
        "This conversation is kept by the account 'default', which 'work' cannot read. "
        "Fork the chat to go on under 'work'.")
    assert change_refusal("codex", "work", "/b", None, "/a", conversation=True) == (
        "This conversation is kept by the account 'work', which 'default' cannot read. "
        "Fork the chat to go on under 'default'.")


def test_an_account_gone_from_the_manifest_reads_no_one_elses_transcripts():
    assert change_refusal("claude", "old", None, "work", "/b", conversation=True) is not None


# ---- the last picked ------------------------------------------------------------------------------

def test_the_last_picked_account_per_provider_survives_a_restart_in_a_private_file(tmp_path):
    picked = LastPicked(str(tmp_path / "core"))
    assert picked.get("claude") is None
    assert picked.pick("claude", "work") and picked.pick("codex", None)
    assert not picked.pick("claude", "work")  # nothing new to write
    picked.save()
    again = LastPicked(str(tmp_path / "core"))
    assert again.get("claude") == "work" and again.get("codex") is None
    assert stat.S_IMODE(os.stat(again.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "core").st_mode) == 0o700


@pytest.mark.parametrize("text", ["not json", "[1]", json.dumps({"claude": "../etc", "pi": "x", "codex": 3})])
def test_an_unreadable_or_odd_file_of_picks_starts_every_provider_from_its_default(tmp_path, text):
    (tmp_path / "last-accounts.json").write_text(text)
    picked = LastPicked(str(tmp_path))
    assert picked.get("claude") is None and picked.get("codex") is None

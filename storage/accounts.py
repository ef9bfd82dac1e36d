"""A person's named logins per CLI (the manifest's ``[accounts.<provider>.<name>]``), and the
account a new chat of each provider gets when it names none (the last one picked).

devhostd stores no keys: an account is only which config home the CLI reads (Claude Code's
``CLAUDE_CONFIG_DIR``, Codex's ``CODEX_HOME``); the CLI keeps its own login there. The default
account (no name, ``None``) is the CLI's own default home, as devhostd's environment gives it.
Only the manifest names a home: a request names an account, never a path.
"""
from __future__ import annotations

import json
import os
import re

from storage import atomic

# The core's provider names -> the variable that moves the CLI's config home.
HOME_VARIABLES = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME"}
DEFAULT_HOMES = {"claude": ".claude", "codex": ".codex"}  # under HOME, when the variable is unset
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
LAST_PICKED = "last-accounts.json"


class AccountsError(ValueError):
    """The manifest's accounts cannot be used; the message says what to change."""


def parse_accounts(table, where: str) -> dict[str, dict[str, str]]:
    """``[accounts]`` → {provider: {name: absolute config home}}; ``where`` names the file."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise AccountsError(f"{where}: [accounts] must be a table of [accounts.<provider>.<name>] tables")
    accounts: dict[str, dict[str, str]] = {}
    for provider, named in table.items():
        if provider not in HOME_VARIABLES:
            raise AccountsError(f"{where}: [accounts.{provider}]: devhostd knows the providers "
                                f"{' and '.join(HOME_VARIABLES)}; rename the table to one of them")
        if not isinstance(named, dict):
            raise AccountsError(f"{where}: [accounts.{provider}] must hold [accounts.{provider}.<name>] tables")
        accounts[provider] = {}
        for name, account in named.items():
            here = f"{where}: [accounts.{provider}.{name}]"
            if not _NAME.fullmatch(name):
                raise AccountsError(f"{here}: an account's name is 1..64 letters, digits, '_' or '-'; rename it")
            if not isinstance(account, dict):
                raise AccountsError(f"{here} must be a table with `config_home`")
            extra = sorted(set(account) - {"config_home"})
            if extra:
                raise AccountsError(f"{here}: unknown key {extra[0]!r}; an account has only `config_home`")
            home = account.get("config_home")
            if not isinstance(home, str) or not (home.startswith("/") or home == "~" or home.startswith("~/")):
                raise AccountsError(f"{here}: `config_home` must be an absolute path or one under ~, "
                                    f"such as \"~/.{provider}-{name}\"")
            accounts[provider][name] = os.path.normpath(os.path.expanduser(home))
    return accounts


def default_home(provider: str, env) -> str:
    """The CLI's own config home: its variable in devhostd's environment, else ~/.claude or ~/.codex."""
    return env.get(HOME_VARIABLES[provider]) or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                             DEFAULT_HOMES[provider])


def home_of(accounts: dict, provider: str, name: str | None, env) -> str | None:
    """An account's config home (the default's for ``None``), or None when the manifest has no
    such account."""
    if name is None:
        return default_home(provider, env)
    return (accounts.get(provider) or {}).get(name)


def account_env(accounts: dict, provider: str, name: str | None) -> dict[str, str]:
    """What a CLI of that account gets in its environment: its home's variable (nothing for the
    default account, which reads devhostd's own environment)."""
    home = (accounts.get(provider) or {}).get(name) if name is not None else None
    return {HOME_VARIABLES[provider]: home} if home else {}


def label(name: str | None) -> str:
    return name if name is not None else "default"


def unknown_account(accounts: dict, provider: str, name: str) -> str:
    """A refusal's words for an account name the manifest does not have."""
    there = sorted((accounts.get(provider) or {}))
    have = f"the accounts there are: {', '.join(there)} (or null for the default)" if there else \
        "it names none: add one as [accounts.{0}.{1}] with config_home, or leave `account` out".format(provider, name)
    return f"The manifest has no {provider} account {name!r}; {have}"


def change_refusal(provider: str, from_name: str | None, from_home: str | None, to_name: str | None,
                   to_home: str | None, conversation: bool) -> str | None:
    """Why a chat cannot move from one account to another (None: it can). Before the chat has a
    conversation it may move freely; afterwards only to an account that reads the same
    transcripts, i.e. the same config home (measured: --resume and thread/resume under another
    home fail; tests/fixtures/modes/README.md "Accounts and skills")."""
    if not conversation or from_name == to_name:
        return None
    if from_home is not None and to_home is not None and os.path.realpath(from_home) == os.path.realpath(to_home):
        return None
    return (f"This conversation is kept by the account '{label(from_name)}', which '{label(to_name)}' cannot read. "
            f"Fork the chat to go on under '{label(to_name)}'.")


class LastPicked:
    """The account last picked per provider, in ``<folder>/last-accounts.json`` (0600, written
    atomically): a new chat that names none gets it, also after a restart of devhostd."""

    def __init__(self, folder: str):
        self.path = os.path.join(folder, LAST_PICKED)
        self._picked = self._read()

    def _read(self) -> dict:
        try:
            with open(self.path, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: every provider starts from its default account
        return {provider: name for provider, name in value.items()
                if provider in HOME_VARIABLES and (name is None or (isinstance(name, str) and _NAME.fullmatch(name)))} \
            if isinstance(value, dict) else {}

    def get(self, provider: str) -> str | None:
        return self._picked.get(provider)

    def pick(self, provider: str, name: str | None) -> bool:
        """Remembers a pick; True when it changed what is kept (the caller writes it: ``save``)."""
        if provider in self._picked and self._picked[provider] == name:
            return False
        self._picked[provider] = name
        return True

    def save(self) -> None:
        atomic.write_json_atomically(self.path, dict(self._picked))

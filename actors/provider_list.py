"""``provider.list``: each CLI devhostd drives, whether it is found, and its accounts (the
default one and the manifest's), each with its config home and whether it looks signed in.

Plain file work, run on the hub's threadpool: whether the executable is on PATH, whether a
login file is there. No CLI is run, and no secret is kept (a credentials file's shape only).
"""
from __future__ import annotations

from actors.harness.claude import files as claude_files
from actors.harness.codex import files as codex_files
from actors.harness_catalog import executable_for
from storage.accounts import default_home

LABELS = {"claude": "Claude Code", "codex": "Codex"}


def signed_in(provider: str, home: str, env, default_account: bool) -> bool:
    if provider == "claude":
        return claude_files.signed_in(home, env, default_account)
    return codex_files.signed_in(home)


def account_entry(provider: str, name: str | None, home: str, env) -> dict:
    entry = {"name": name, "configHome": home, "signedIn": signed_in(provider, home, env, name is None)}
    if name is None:
        entry["default"] = True  # the CLI's own default home (devhostd's environment)
    return entry


def provider_list(accounts: dict, last: dict, commands: dict, env, agents: dict | None = None) -> list[dict]:
    """``accounts``: the manifest's {provider: {name: home}}; ``last``: {provider: name}, the
    account last picked; ``commands``: {provider: argv} as devhostd runs each CLI and agent;
    ``agents``: {provider: label} of the manifest's ACP agents."""
    agents = agents or {}
    listed = []
    for provider, label in LABELS.items():
        named = sorted((accounts.get(provider) or {}).items())
        listed.append({"id": provider, "label": label, "available": executable_for(commands[provider], env) is not None,
                       "accounts": [account_entry(provider, None, default_home(provider, env), env)]
                       + [account_entry(provider, name, home, env) for name, home in named],
                       "lastAccount": last.get(provider)})
    for provider, label in agents.items():
        # An ACP agent keeps its sign-in its own way: devhostd has no file to look at (signedIn
        # null: not known), and the manifest gives it no accounts.
        listed.append({"id": provider, "label": label,
                       "available": executable_for(commands[provider], env) is not None,
                       "accounts": [{"name": None, "configHome": None, "signedIn": None, "default": True}],
                       "lastAccount": None})
    return listed

"""The ACP agents a manifest names: ``[devtools.chat.<id>]`` tables with ``protocol = "acp"``.

    [devtools.chat.gemini]
    protocol = "acp"
    command = ["gemini", "--experimental-acp"]
    label = "Gemini CLI"

The table's name is the harness id (the Chat API's ``harness``, the core's ``provider``); the
command is run as the person wrote it, its executable found on the daemon's PATH. Nothing from a
browser names one: only the manifest, which the person edits, does.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

ACP_KEYS = ("protocol", "command", "label")
# The two CLIs' own tables, and the core's names for them: an agent may take none of these ids.
RESERVED_IDS = ("claude-code", "codex", "claude")
_ID = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


class AgentTableError(ValueError):
    """A [devtools.chat.<id>] table cannot be used; the message says what to change."""


@dataclass(frozen=True)
class AcpAgent:
    """An ACP agent the manifest names: its harness id, the command that starts it, its label."""

    id: str
    command: tuple[str, ...]
    label: str


def parse_command(value, where: str, base: str) -> tuple[str, ...]:
    """A table's ``command``: a string or a non-empty list of strings; a relative path with a
    slash in its executable is the manifest's folder's."""
    command = [value] if isinstance(value, str) else value
    if not (isinstance(command, list) and command and all(isinstance(p, str) and p for p in command)):
        raise AgentTableError(f"{where} `command` must be a string or a list of strings")
    command = list(command)
    if "/" in command[0] and not os.path.isabs(command[0]):
        command[0] = os.path.normpath(os.path.join(base, command[0]))
    return tuple(command)


def acp_tables(chat: dict) -> list[str]:
    """The names of [devtools.chat] sub-tables that say ``protocol``: the agents' tables."""
    return [name for name, table in chat.items() if isinstance(table, dict) and "protocol" in table]


def parse_acp_agents(chat: dict, path: str, base: str) -> tuple[AcpAgent, ...]:
    agents = []
    for name in acp_tables(chat):
        table, where = chat[name], f"{path}: [devtools.chat.{name}]"
        if table["protocol"] != "acp":
            raise AgentTableError(f"{where} `protocol` must be \"acp\" (the one protocol an agent's table may name; "
                                  "Claude Code and Codex have tables of their own without it)")
        if name in RESERVED_IDS:
            raise AgentTableError(f"{where}: `{name}` is taken by a built-in harness; give the agent another name")
        if not _ID.fullmatch(name):
            raise AgentTableError(f"{where}: an agent's name is its harness id: 1 to 40 lower-case letters, digits "
                                  "and dashes, starting with a letter, such as \"gemini\" or \"open-code\"")
        if "command" not in table:
            raise AgentTableError(f"{where} needs `command`: how the agent is started in ACP mode, such as "
                                  "[\"opencode\", \"acp\"]")
        label = table.get("label", name)
        if not isinstance(label, str) or not label.strip() or len(label) > 60:
            raise AgentTableError(f"{where} `label` must be a short name for the picker (1 to 60 characters)")
        agents.append(AcpAgent(name, parse_command(table["command"], where, base), label.strip()))
    return tuple(agents)

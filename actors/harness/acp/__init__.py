"""Agents that speak ACP (the Agent Client Protocol), as devhost drives them: one package for any
of them. The harness id is not fixed: the manifest names each agent
(``[devtools.chat.<id>] protocol = "acp"``, ``command = [...]``, ``label = ...``), and
``harness(AcpSpec(...))`` makes the harness module face for it — the same names claude/ and
codex/ export (``HARNESS_ID``, ``LABEL``, ``DEFAULT_COMMAND``, ``Driver``, ``Projection``,
``command_line``, ``mode_settings``, ...), bound to that agent.

- ``protocol``: the driver (JSON-RPC frames in and out; pure translation, no I/O);
- ``projection``: session/update and permission requests as thread items;
- ``abilities``: what the agent advertised in ``initialize`` (and what it then did).

ACP agents keep their conversations in their own stores, which devhost does not read: there are
no ``files``, ``saved`` or ``records`` here; a saved conversation is reopened by session/load.
"""
from __future__ import annotations

from actors.harness.lazy import lazy_names
import json
import types
from dataclasses import dataclass, field

from actors.harness import configure_agents

PROTOCOL = "acp"

# The driver, its projection and the abilities are imported at their first use (PEP 562), as the
# built-in CLIs' faces are: the daemon's start reads the manifest (agents_configured) but needs them
# only for an agent the manifest names, and they and the effects they import cost ~11 ms to import.
_FACE = {
    "abilities": ("actors.harness.acp.abilities", None),
    "Projection": ("actors.harness.acp.projection", "AcpProjector"),
    "AcpDriver": ("actors.harness.acp.protocol", "AcpDriver"),
    "AcpSettings": ("actors.harness.acp.protocol", "AcpSettings"),
    "CLIENT_CAPABILITIES": ("actors.harness.acp.protocol", "CLIENT_CAPABILITIES"),
    "CLIENT_INFO": ("actors.harness.acp.protocol", "CLIENT_INFO"),
    "PLAN_MODE": ("actors.harness.acp.protocol", "PLAN_MODE"),
    "PROTOCOL_VERSION": ("actors.harness.acp.protocol", "PROTOCOL_VERSION"),
    "command_line": ("actors.harness.acp.protocol", "command_line"),
    "mode_settings": ("actors.harness.acp.protocol", "mode_settings"),
}


__getattr__ = lazy_names(globals(), _FACE)


@dataclass(frozen=True)
class AcpSpec:
    """One ACP agent as the manifest names it. ``tested_version``: the version the tests pin,
    for `devhostd doctor` (None: not one devhost's tests drive)."""
    id: str
    label: str
    command: tuple[str, ...]
    tested_version: str | None = None
    environment: dict = field(default_factory=dict)  # what the agent's process gets (ASKING_ENVIRONMENT)


def find_conversation_cwd(resume_id: str, environ=None) -> str:
    """Where a saved conversation began. ACP agents keep them in their own stores, unread by
    devhost: the answer is "" (known to exist, folder unknown), never None, so the link asks
    the agent itself (session/load), and a conversation it cannot load starts anew there."""
    return ""


def listing_command_line(command: tuple[str, ...]) -> list[str]:
    return list(command)


def listing_requests() -> list[dict]:
    from actors.harness.acp.protocol import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
    return [{"jsonrpc": "2.0", "id": "devhost-init", "method": "initialize",
             "params": {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": CLIENT_CAPABILITIES,
                        "clientInfo": CLIENT_INFO}}]


def listing_reply(frame: dict) -> list[dict] | None:
    """ACP names models only per session (session/new's answer): the catalog would have to open
    a session in the agent's store to learn them, so it learns none ([]); a running session
    reports its own (ModelInUse, ``AcpDriver.abilities.models``)."""
    if frame.get("id") != "devhost-init" or "method" in frame:
        return None
    if "error" in frame:
        error = frame["error"] if isinstance(frame["error"], dict) else {}
        raise ValueError(f"the agent refused to initialize: {error.get('message') or 'no reason given'}")
    return []


def harness(spec: AcpSpec) -> types.ModuleType:
    """The harness module face for one ACP agent (what HARNESSES maps its id to)."""
    from actors.harness.acp import abilities
    from actors.harness.acp.projection import AcpProjector as Projection
    from actors.harness.acp.protocol import PLAN_MODE, AcpDriver, command_line, mode_settings
    driver = type(f"AcpDriver_{spec.id}", (AcpDriver,), {"harness_id": spec.id, "label": spec.label})
    face = types.ModuleType(f"actors.harness.acp[{spec.id}]", f"{spec.label}, an ACP agent (actors/harness/acp/)")
    face.__dict__.update(
        HARNESS_ID=spec.id, LABEL=spec.label, DEFAULT_COMMAND=tuple(spec.command), TESTED_VERSION=spec.tested_version,
        PROTOCOL=PROTOCOL, PLAN_MODE=PLAN_MODE, Driver=driver, Projection=Projection, command_line=command_line,
        mode_settings=mode_settings, find_conversation_cwd=find_conversation_cwd,
        listing_command_line=listing_command_line, listing_requests=listing_requests, listing_reply=listing_reply,
        abilities=abilities, spec=spec, AGENT_ENVIRONMENT=dict(spec.environment))
    return face


# Agents whose own rules can make them ask before they act, by executable name -> what devhostd
# puts in their environment for it. An agent that never sends session/request_permission cannot
# be held to a runtime mode (ACP has no way to make it ask), and OpenCode's default asks nothing:
# with this it asks devhostd before every edit, command and fetch, and devhostd's mode answers
# (allows_itself) or the person does. Measured with opencode-ai 1.18.33.
ASKING_ENVIRONMENT = {"opencode": {"OPENCODE_PERMISSION": json.dumps(
    {"edit": "ask", "bash": "ask", "webfetch": "ask", "external_directory": "ask"})}}

# Gemini CLI needs no entry: its own default mode ("default", "Prompts for approval") asks
# session/request_permission before every command and edit (measured with 0.61.0).

# The agents devhost's tests drive, by executable name -> the version they pin (tests/peers.sh):
# what `devhostd doctor` compares an installed one with.
TESTED_VERSIONS = {"opencode": "1.18.33", "gemini": "0.61.0"}


def spec_for(agent) -> AcpSpec:
    """The spec of an agent the manifest names (storage/manifest_agents.AcpAgent)."""
    name = agent.command[0].rsplit("/", 1)[-1]
    return AcpSpec(agent.id, agent.label, tuple(agent.command), TESTED_VERSIONS.get(name),
                   dict(ASKING_ENVIRONMENT.get(name, {})))


def agents_configured(manifest) -> None:
    """A manifest came into use (storage/manifest.ManifestSource ``on_change``): its ACP agents
    are the harnesses beside the two CLIs from now on."""
    configure_agents([harness(spec_for(agent)) for agent in manifest.agents])


__all__ = ["TESTED_VERSIONS", "AcpDriver", "AcpSettings", "AcpSpec", "PLAN_MODE", "PROTOCOL", "Projection",
           "abilities", "agents_configured", "command_line", "find_conversation_cwd", "harness", "listing_command_line",
           "listing_reply", "listing_requests", "mode_settings", "spec_for"]

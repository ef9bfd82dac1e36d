"""The CLIs devhost drives, by harness id: one package per harness (claude/, codex/), each
holding the CLI's protocol, its files and transcripts, and what the agents scanner needs of its
formats; and the ACP agents the manifest names (acp/: one package serves them all). None of it
is an actor.

``HARNESSES`` maps each harness id to its face: a built-in CLI's package, imported at its first
use (a harness's protocol and projection are most of the daemon's code, and nothing needs them
to start: the daemon's first answer comes before any CLI is run), or an ACP agent's face. The
tables here are kept in place (``configure_agents`` changes their contents, never the objects):
modules hold them by name, and a manifest edited while devhostd runs adds or takes away an
agent for every one of them at once.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping

# Each built-in package's HARNESS_ID -> its name here; in this order wherever harnesses are listed.
BUILT_IN = {"claude-code": "claude", "codex": "codex"}
PROVIDERS = {"claude": "claude-code", "codex": "codex"}  # the core's provider names -> harness ids
HARNESS_PROVIDERS = {harness: provider for provider, harness in PROVIDERS.items()}


class _Harnesses(Mapping):
    """harness id -> its face: the built-in CLIs first (each package imported when first looked
    up), then the manifest's ACP agents in the manifest's order."""

    def __init__(self):
        self.agents: dict = {}

    def __getitem__(self, harness_id: str):
        if harness_id in BUILT_IN:
            return importlib.import_module(f"actors.harness.{BUILT_IN[harness_id]}")
        return self.agents[harness_id]

    def __iter__(self):
        return iter([*BUILT_IN, *self.agents])

    def __len__(self) -> int:
        return len(BUILT_IN) + len(self.agents)


HARNESSES = _Harnesses()


def provider_of(harness_id: str) -> str:
    """The core's name of a harness (what chat.create takes): claude, codex, or an agent's id."""
    return HARNESS_PROVIDERS.get(harness_id, harness_id)


def agents_configured(manifest) -> None:
    """A manifest came into use (storage/manifest.ManifestSource ``on_change``): its ACP agents
    are harnesses from now on (actors/harness/acp ``agents_configured``). The ACP package is
    imported only once a manifest names an agent: most stacks name none, and start without it."""
    if manifest.agents or HARNESSES.agents:
        from actors.harness import acp
        acp.agents_configured(manifest)


def configure_agents(faces) -> None:
    """The manifest's ACP agents (each a face made by actors/harness/acp ``harness``) become
    harnesses beside the two CLIs, and providers of the core under the same id; those it no
    longer names go. A chat already open on one keeps the face it holds until it closes."""
    for harness_id in list(HARNESSES.agents):
        PROVIDERS.pop(harness_id, None)
        HARNESS_PROVIDERS.pop(harness_id, None)
    HARNESSES.agents.clear()
    for face in faces:
        HARNESSES.agents[face.HARNESS_ID] = face
        PROVIDERS[face.HARNESS_ID] = face.HARNESS_ID
        HARNESS_PROVIDERS[face.HARNESS_ID] = face.HARNESS_ID

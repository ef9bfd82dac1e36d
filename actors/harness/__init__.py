"""The CLIs devhost drives, by harness id: one package per harness (claude/, codex/), each
holding the CLI's protocol, its files and transcripts, and what the agents scanner needs of its
formats; and the ACP agents the manifest names (acp/: one package serves them all). None of it
is an actor.

The three tables below are kept in place (``configure_agents`` changes their contents, never
the objects): modules hold them by name, and a manifest edited while devhostd runs adds or
takes away an agent for every one of them at once.
"""
from actors.harness import claude, codex

BUILT_IN = {claude.HARNESS_ID: claude, codex.HARNESS_ID: codex}
HARNESSES = dict(BUILT_IN)  # harness id -> its face (a module, or an ACP agent's AcpHarness)
PROVIDERS = {"claude": claude.HARNESS_ID, "codex": codex.HARNESS_ID}  # the core's provider names -> harness ids
HARNESS_PROVIDERS = {harness: provider for provider, harness in PROVIDERS.items()}


def provider_of(harness_id: str) -> str:
    """The core's name of a harness (what chat.create takes): claude, codex, or an agent's id."""
    return HARNESS_PROVIDERS.get(harness_id, harness_id)


def configure_agents(faces) -> None:
    """The manifest's ACP agents (each an AcpHarness, actors/harness/acp) become harnesses beside
    the two CLIs, and providers of the core under the same id; those it no longer names go. A
    chat already open on one keeps the face it holds until it closes."""
    for harness_id in [h for h in HARNESSES if h not in BUILT_IN]:
        del HARNESSES[harness_id]
        PROVIDERS.pop(harness_id, None)
        HARNESS_PROVIDERS.pop(harness_id, None)
    for face in faces:
        HARNESSES[face.HARNESS_ID] = face
        PROVIDERS[face.HARNESS_ID] = face.HARNESS_ID
        HARNESS_PROVIDERS[face.HARNESS_ID] = face.HARNESS_ID

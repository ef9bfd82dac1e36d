"""The CLIs devhost drives, by harness id: one package per harness (claude/, codex/), each
holding the CLI's protocol, its files and transcripts, and what the agents scanner needs of its
formats. None of it is an actor.

``HARNESSES`` maps each harness id to its package, imported at its first use: a harness's
protocol and projection are most of the daemon's code, and nothing needs them to start (the
daemon's first answer comes before any CLI is run)."""
from __future__ import annotations

import importlib
from collections.abc import Mapping


class _Harnesses(Mapping):
    """harness id -> its package, each imported when first looked up."""

    # Each package's HARNESS_ID -> its name here; in this order wherever harnesses are listed.
    PACKAGES = {"claude-code": "claude", "codex": "codex"}

    def __getitem__(self, harness_id: str):
        return importlib.import_module(f"actors.harness.{self.PACKAGES[harness_id]}")

    def __iter__(self):
        return iter(self.PACKAGES)

    def __len__(self) -> int:
        return len(self.PACKAGES)


HARNESSES = _Harnesses()

"""What each ACP agent was measured to do, in ``<core folder>/agent-abilities.json`` (written
atomically): by harness id, the abilities its last session reported (what it advertised in
``initialize`` and ``session/new``, and what it was then seen doing: actors/harness/acp/
abilities.py), with when they were measured.

Kept across restarts because a listing of the harnesses cannot learn an agent's models without
opening a session in the agent's own store (ACP names models per session), and `devhostd
doctor` reports what the agent did, not only what it said: both read what earlier sessions
measured.
"""
from __future__ import annotations

import json
import os
import time

from storage import atomic

FILE = "agent-abilities.json"


class AgentAbilities:
    def __init__(self, folder: str):
        self.path = os.path.join(folder, FILE)
        self._known = self._read()

    def _read(self) -> dict:
        try:
            with open(self.path, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return {}  # none measured yet, or unreadable: measured again by the next session
        return {key: entry for key, entry in value.items() if isinstance(entry, dict)} \
            if isinstance(value, dict) else {}

    def get(self, harness_id: str) -> dict | None:
        return self._known.get(harness_id)

    def all(self) -> dict:
        return dict(self._known)

    def measured(self, harness_id: str, abilities: dict) -> bool:
        """A session reported ``abilities``; True when that changed what is kept (the caller
        writes it: ``save``). What was seen is joined with what earlier sessions saw: one
        session that never cancelled does not forget that another's cancel was honoured."""
        before = self._known.get(harness_id) or {}
        seen = {**(before.get("seen") or {}), **(abilities.get("seen") or {})}
        entry = {**abilities, "seen": seen}
        if {k: v for k, v in before.items() if k != "measuredAt"} == entry:
            return False
        self._known[harness_id] = {**entry, "measuredAt": int(time.time() * 1000)}
        return True

    def save(self) -> None:
        atomic.write_json_atomically(self.path, dict(self._known))

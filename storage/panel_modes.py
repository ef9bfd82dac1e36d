"""The runtime mode a person last picked in the panel, one file per checkout under the state directory.

A new panel conversation of a checkout starts in it (actors/registry.py), so the person picks a
mode once per checkout, not once per conversation; it outlives the daemon. Kept like the
panel's position (storage/panel.py): 0600 files in a 0700 folder, written atomically, one per
checkout (named by a digest of its path, which the file repeats), so two checkouts never share a
write. What is stored is checked against the modes this daemon knows on every load: a file
from another version, or edited by hand, names none and the caller's default holds.
"""
from __future__ import annotations

import hashlib
import json
import os

from storage.atomic import write_json_atomically


class PanelModes:
    def __init__(self, state_dir: str, modes: tuple[str, ...]):
        self._folder = os.path.join(state_dir, "panel-modes")
        self._modes = modes  # the runtime modes a stored one must be (actors/harness/modes.py)

    def _file_for(self, root: str) -> str:
        digest = hashlib.sha256(root.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        return os.path.join(self._folder, f"{digest}.json")

    def load(self, root: str) -> str | None:
        """The mode last picked for the checkout ``root``, or None when none was (or the file
        cannot be read: the default is narrower than anything picked, never wider)."""
        try:
            with open(self._file_for(root), encoding="utf-8") as handle:
                stored = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("root") != root:
            return None  # a digest shared with another checkout's path: not this one's pick
        mode = stored.get("runtimeMode")
        return mode if mode in self._modes else None

    def save(self, root: str, mode: str) -> None:
        if mode not in self._modes:
            raise ValueError(f"runtimeMode must be one of: {', '.join(self._modes)}")
        write_json_atomically(self._file_for(root), {"root": root, "runtimeMode": mode})

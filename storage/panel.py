"""Chat panel positions, one file per manifest under the state directory.

Browser storage is separate for every hostname, so the daemon keeps the position for all the
routed pages of one stack. Files are 0600 in a 0700 folder, written atomically.
"""
from __future__ import annotations

import hashlib
import json
import math
import os

from storage.atomic import write_json_atomically

POSITION_LIMIT = 1_000_000  # CSS pixels; anything past this is a bug in the sender


class PanelError(ValueError):
    """A position the daemon refuses; the message says what a valid one looks like."""


def validate_position(body) -> dict | None:
    if not isinstance(body, dict) or set(body) != {"position"}:
        raise PanelError('send {"position": {"left": <px>, "top": <px>}} or {"position": null}')
    position = body["position"]
    if position is None:
        return None
    if not isinstance(position, dict) or set(position) != {"left", "top"}:
        raise PanelError("position must be null or an object with exactly `left` and `top`")
    clean = {}
    for key in ("left", "top"):
        value = position[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise PanelError(f"position.{key} must be a finite number of CSS pixels")
        if abs(value) > POSITION_LIMIT:
            raise PanelError(f"position.{key} must be within ±{POSITION_LIMIT} CSS pixels")
        clean[key] = value
    return clean


class PanelPositions:
    def __init__(self, state_dir: str):
        self._folder = os.path.join(state_dir, "panel")

    def _file_for(self, manifest_path: str) -> str:
        digest = hashlib.sha256(manifest_path.encode()).hexdigest()[:24]
        return os.path.join(self._folder, f"{digest}.json")

    def load(self, manifest_path: str) -> dict | None:
        try:
            with open(self._file_for(manifest_path), encoding="utf-8") as handle:
                stored = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("manifest") != manifest_path:
            return None
        try:
            return validate_position({"position": stored.get("position")})
        except PanelError:
            return None  # an outdated or hand-edited file falls back to the default place

    def save(self, manifest_path: str, position: dict | None) -> None:
        write_json_atomically(self._file_for(manifest_path), {"manifest": manifest_path, "position": position})

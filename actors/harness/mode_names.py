"""devhostd's runtime modes by name, and the mode a chat read from disk runs under.

Apart from actors/harness/modes.py (what each mode means on each CLI's settings) so that what
names them at start (the registry, the panel's stored modes, the routes) does not define the
CLIs' settings classes at every start.
"""
from __future__ import annotations

# Narrowest to widest.
RUNTIME_MODES = ("supervised", "auto-accept-edits", "auto", "full-access")
CORE_DEFAULT = "full-access"  # the seed's default for a core chat that names none
SESSION_DEFAULT = "supervised"  # a panel conversation until the person picks a mode


def stored_mode(info: dict) -> str:
    """The mode a chat read from disk runs under. One saved before modes were enforced (its info
    has no effectiveRuntimeMode) ran under the CLI's own settings, which ask before edits and
    commands, whatever its runtimeMode said (then only a default nobody chose): it goes on
    supervised, so no record widens what an agent may do."""
    if "effectiveRuntimeMode" not in info:
        return "supervised"
    mode = info.get("runtimeMode")
    return mode if mode in RUNTIME_MODES else "supervised"

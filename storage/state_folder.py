"""Where devhostd keeps its state when ``--state-dir`` does not say: the XDG state folder."""
from __future__ import annotations

import os


def default_state_dir() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "devhostd")

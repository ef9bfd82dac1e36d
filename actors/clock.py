"""The wall clock in the milliseconds the activity stream stamps its events with.

Apart from actors/agents/ so that the web layer can take the stream's opening moment
(web/agents.py) without importing the agents package at the daemon's start.
"""
from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the epoch, as JavaScript's Date.now()."""
    return int(time.time() * 1000)

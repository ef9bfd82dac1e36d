"""What the checkpoint store raises: a conflict the person can override, or a failure they cannot."""
from __future__ import annotations


class CheckpointError(Exception):
    """git failed, or a request names something the turn's changes do not hold (a path outside
    the checkout, an unknown hunk): the message says what to do."""


class CheckpointConflict(Exception):
    """Files to revert changed on disk since the turn ended: reverting would lose that work.
    ``paths``: the files in question (relative, '/'); a revert with force=True overrides."""

    def __init__(self, paths):
        self.paths = sorted(paths)
        super().__init__("these files changed since the turn: " + ", ".join(self.paths))

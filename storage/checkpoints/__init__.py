"""Per-turn checkpoints of a checkout, in a bare git repository of devhostd's own (issue 28)."""
from storage.checkpoints.errors import CheckpointConflict, CheckpointError
from storage.checkpoints.snapshot import MAX_FILE_BYTES, SNAPSHOT_SECONDS, Snapshot
from storage.checkpoints.store import CheckpointStore

__all__ = ["CheckpointStore", "Snapshot", "CheckpointConflict", "CheckpointError", "MAX_FILE_BYTES",
           "SNAPSHOT_SECONDS"]

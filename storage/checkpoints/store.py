"""The checkpoint store of one checkout: snapshots before and after each turn, what a turn
changed, and putting it back (the contract: docs of issue 28, storage/checkpoints/)."""
from __future__ import annotations

import os

from storage.checkpoints import patch, revert, snapshot
from storage.checkpoints.errors import CheckpointError
from storage.checkpoints.git_store import GitStore, checked_commit
from storage.checkpoints.snapshot import Snapshot


class CheckpointStore:
    """``state_root``: devhostd's folder for all stores; this checkout's is a subfolder of it."""

    def __init__(self, state_root: str, checkout: str, max_file_bytes: int = snapshot.MAX_FILE_BYTES,
                 snapshot_seconds: float = snapshot.SNAPSHOT_SECONDS):
        self.git = GitStore(state_root, checkout)
        self.max_file_bytes = max_file_bytes
        self.snapshot_seconds = snapshot_seconds

    @property
    def path(self) -> str:
        return self.git.path

    def snapshot(self, index: str, ref: str) -> Snapshot:
        """A commit of the checkout's files now, kept at refs/devhostd/<ref>; never raises for
        git's sake (``error`` says why there is no ``commit``)."""
        return snapshot.take(self.git, index, ref, self.max_file_bytes, self.snapshot_seconds)

    def changes(self, before: str, after: str) -> dict:
        entries, skipped = self._diff(before, after)
        return {"files": patch.described(entries), "skipped": skipped}

    def revert(self, before: str, after: str, paths=None, hunks=None, force: bool = False,
               ref: str | None = None) -> dict:
        """``ref``: where to keep the new `after` commit (refs/devhostd/<ref>), so it outlives
        a later cleanup; None keeps it unnamed."""
        entries, skipped = self._diff(before, after)
        return revert.revert(self.git, before, after, entries, skipped, paths=paths, hunks=hunks,
                             force=bool(force), ref=ref)

    def keep(self, commit: str, ref: str) -> None:
        """Names ``commit`` refs/devhostd/<ref>: kept for as long as the ref lives."""
        self.git.update_ref(ref, commit)

    def forget(self, prefix: str, index: str | None = None) -> list[str]:
        """Deletes the refs under refs/devhostd/<prefix> (and the index named, if any)."""
        names = self.git.delete_refs(prefix)
        if index is not None:
            for leftover in (self.git.index_path(index), self.git.index_path(index) + ".lock"):
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass
        return names

    def _diff(self, before: str, after: str) -> tuple[list[patch.FileDiff], list[str]]:
        before, after = checked_commit(before), checked_commit(after)
        common = ("diff-tree", "-r", "-M", "--no-color", "--no-ext-diff", "--no-textconv")
        raw = self.git.git(*common, "--raw", "-z", before, after)
        text = self.git.git(*common, "-p", "-U3", before, after)
        try:
            entries = patch.parse(raw, text)
        except ValueError as error:
            raise CheckpointError(f"the turn's changes could not be read: {error}") from error
        skipped = sorted(set(snapshot.skipped_of(self.git, before)) | set(snapshot.skipped_of(self.git, after)))
        left_out = set(skipped)
        # A file over the limit on one side only looks added or deleted; it is neither.
        entries = [e for e in entries if e.path not in left_out and e.old_path not in left_out
                   and patch.GITLINK not in (e.old_mode, e.new_mode)]
        return entries, skipped

"""Taking a snapshot: the checkout's files, as the person's git would see them (not ignored),
minus files over the size limit, into a commit of the store, within a deadline.

The index is the store's own, one per chat, kept between snapshots: git then re-reads only the
files whose stat changed, which makes a snapshot after a turn about as cheap as `git status`.
Files over the limit are found before anything is hashed (`ls-files -o -m` lists only what is
new or changed since the last snapshot; only those are stat'ed) and kept out by an exclude
pathspec rather than ignore lines: a `!pattern` in the checkout's .gitignore cannot bring them
back, and because they stay untracked, the next snapshot lists them again — a file that shrank
under the limit is back in without any state kept aside. Which files were left out is written
in the commit's message (``skipped_of`` reads it).
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass

from storage.checkpoints.errors import CheckpointError
from storage.checkpoints.git_store import Deadline, GitStore, ref_name
from storage.checkpoints.ignores import exclude_lines, global_excludes_file

MAX_FILE_BYTES = 8 * 1024 * 1024
SNAPSHOT_SECONDS = 10.0
WHOLE_TREE_ADD = 1000  # more changed paths than this: `add -A .` (matching many pathspecs costs more)
MESSAGE = b"devhostd snapshot\n\n"

_locks: dict[str, threading.Lock] = {}  # (gevent's lock under the patch) one snapshot per index at a time


@dataclass(frozen=True)
class Snapshot:
    commit: str | None
    skipped: tuple[str, ...] = ()
    error: str | None = None
    took: float = 0.0
    timed_out: bool = False  # the deadline passed: the tree is too large to snapshot in time


def take(store: GitStore, index: str, ref: str, max_bytes: int, seconds: float) -> Snapshot:
    ref_name(ref)  # a bad name is refused before any work
    index_file = store.index_path(index)
    lock = _locks.setdefault(index_file, threading.Lock())
    start = time.perf_counter()
    with lock:
        skipped: tuple[str, ...] = ()
        try:
            skipped, commit = _take(store, index, ref, max_bytes, start + seconds)
        except Deadline:
            _remove_stale_lock(index_file)
            return Snapshot(None, skipped, f"the checkout is too large to snapshot in {seconds:g} s: "
                                           "this turn has no checkpoint", time.perf_counter() - start, timed_out=True)
        except CheckpointError as error:
            return Snapshot(None, skipped, str(error), time.perf_counter() - start)
        except OSError as error:  # the store's folder: full disk, permissions
            return Snapshot(None, skipped, f"the checkpoint could not be written: {error}",
                            time.perf_counter() - start)
        return Snapshot(commit, skipped, None, time.perf_counter() - start)


def _take(store: GitStore, index: str, ref: str, max_bytes: int, deadline: float) -> tuple[tuple[str, ...], str]:
    def left() -> float:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise Deadline("before git")
        return remaining

    _sync_exclude(store)
    fresh = not _seed_index(store, index)
    ignore = global_excludes_file()
    config = ("-c", f"core.excludesFile={ignore}") if ignore else ()
    listed = store.git(*config, "ls-files", "-z", "-o", "-m", "--exclude-standard", index=index, timeout=left())
    skipped = tuple(sorted(_too_big(store.checkout, listed, max_bytes)))
    if skipped:
        # A file that grew over the limit since the last snapshot leaves the index too.
        store.git("update-index", "-z", "--force-remove", "--stdin", index=index, timeout=left(),
                  data=b"".join(os.fsencode(p) + b"\0" for p in skipped))
    changed = [raw for raw in dict.fromkeys(listed.split(b"\0")) if raw and os.fsdecode(raw) not in skipped]
    if fresh or len(changed) > WHOLE_TREE_ADD:
        # No index to go by yet, or most of the tree is new: add everything but the skipped.
        spec = b".\0" + b"".join(b":(exclude,literal)" + os.fsencode(p) + b"\0" for p in skipped)
    else:
        # What ls-files found is all that changed: naming it spares `add` a second walk of the
        # tree (a deleted file named this way leaves the index too).
        spec = b"".join(b":(literal)" + raw + b"\0" for raw in changed)
    if spec:
        store.git(*config, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", index=index, data=spec,
                  timeout=left())
    tree = store.git("write-tree", index=index, timeout=left()).decode().strip()
    message = MESSAGE + json.dumps({"skipped": list(skipped)}).encode() + b"\n"
    commit = store.git("commit-tree", tree, data=message, timeout=left()).decode().strip()
    store.update_ref(ref, commit)
    return skipped, commit


def _seed_index(store: GitStore, index: str) -> bool:
    """A chat's first snapshot starts from the newest index another chat of this checkout left:
    its stat data holds for the same files, so git re-reads only what changed since, not all.
    False when there is no index at all yet."""
    target = store.index_path(index)
    if os.path.exists(target):
        return True
    folder = os.path.dirname(target)
    others = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.startswith(".") or name.endswith(".lock") or not os.path.isfile(path):
            continue
        others.append((os.path.getmtime(path), path))
    if others:
        # git replaces an index by renaming a finished one over it: a copy is never half-written
        temp = f"{target}.seed-{os.getpid()}"
        shutil.copyfile(max(others)[1], temp)
        os.replace(temp, target)
        return True
    return False


def _too_big(checkout: str, listed: bytes, max_bytes: int) -> set[str]:
    found = set()
    for raw in listed.split(b"\0"):
        if not raw:
            continue
        try:
            info = os.lstat(os.path.join(os.fsencode(checkout), raw))
        except OSError:  # `-m` lists deleted files too
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            found.add(os.fsdecode(raw))
    return found


def _sync_exclude(store: GitStore) -> None:
    wanted = exclude_lines(store.checkout)
    path = os.path.join(store.path, "info", "exclude")
    try:
        with open(path, "rb") as handle:
            if handle.read() == wanted:
                return
    except OSError:
        pass
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}"
    with open(temp, "wb") as handle:
        handle.write(wanted)
    os.replace(temp, path)


def _remove_stale_lock(index_file: str) -> None:
    # The git we killed held it; left there, it would fail every later snapshot of this chat.
    try:
        os.unlink(index_file + ".lock")
    except FileNotFoundError:
        pass


def skipped_of(store: GitStore, commit: str) -> list[str]:
    """The paths a snapshot left out (from its commit's message)."""
    body = store.git("cat-file", "commit", commit)
    _, _, message = body.partition(b"\n\n")
    if not message.startswith(MESSAGE):
        return []
    try:
        return list(json.loads(message[len(MESSAGE):]).get("skipped", []))
    except ValueError:
        return []

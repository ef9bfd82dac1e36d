"""Putting files of a turn back as they were before it: whole files, or chosen hunks of one.

Nothing is written until every file to revert is checked: each must be on disk exactly as the
turn left it (same bytes, a symlink still a symlink; absent where the turn removed it) — else
the person (or the agent since) changed it and a revert would lose that work: CheckpointConflict,
unless forced. Then bytes and exec bit come from the `before` blobs, files the turn added go
(with the folders it created, once empty), and a new `after` commit is built in a temporary
index — `after` with the reverted paths as they are now — so the turn's remaining changes are
changes(before, new_after), and another hunk of a half-reverted file is no conflict.
"""
from __future__ import annotations

import json
import os
import stat
import uuid

from storage.checkpoints import hunks as hunk_edit
from storage.checkpoints.errors import CheckpointConflict, CheckpointError
from storage.checkpoints.git_store import GitStore
from storage.checkpoints.patch import SYMLINK, FileDiff, Hunk
from storage.checkpoints.snapshot import MESSAGE

RELOAD = "is no longer in the turn's changes: reload them"
_ZERO = "0" * 40


def checked_path(path) -> str:
    """A path from a request: relative, '/'-separated, never out of the checkout."""
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/") or "\\" in path:
        raise CheckpointError(f"{path!r} is no path of the checkout: give it relative, with '/'")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise CheckpointError(f"{path!r} is no path of the checkout: no '..', '.' or empty parts")
    return path


def revert(store: GitStore, before: str, after: str, entries: list[FileDiff], skipped: list[str],
           paths=None, hunks=None, force: bool = False, ref: str | None = None) -> dict:
    whole, partial = _chosen(entries, paths, hunks)
    blobs = _blobs(store, {e.new_id for e in whole + [p[0] for p in partial] if e.after_path}
                   | {e.old_id for e in whole if e.before_path})
    touched = whole + [entry for entry, _ in partial]
    for entry in touched:
        for path in filter(None, (entry.before_path, entry.after_path)):
            _inside(store.checkout, path)
    if not force:
        changed = [e.path for e in touched if not _as_left(store.checkout, e, blobs)]
        if changed:
            raise CheckpointConflict(changed)

    updates: list[bytes] = []  # --index-info lines for the new `after`
    removed = []
    for entry in whole:
        if entry.after_path and entry.after_path != entry.before_path:
            _remove(store.checkout, entry.after_path)
            removed.append(entry.after_path)
            updates.append(_index_line("0", _ZERO, entry.after_path))
    _prune(store, before, removed)
    for entry in whole:
        if entry.before_path:
            _write(store.checkout, entry.before_path, blobs[entry.old_id], entry.old_mode)
            updates.append(_index_line(entry.old_mode, entry.old_id, entry.before_path))
    for entry, chosen in partial:
        try:
            content = hunk_edit.revert(blobs[entry.new_id], chosen)
        except hunk_edit.Mismatch as error:
            raise CheckpointError(f"that hunk ({error}) {RELOAD}") from error
        _write(store.checkout, entry.path, content, entry.new_mode)
        blob = store.git("hash-object", "-w", "--no-filters", "--stdin", data=content).decode().strip()
        updates.append(_index_line(entry.new_mode, blob, entry.path))

    new_after = _commit(store, after, updates, skipped)
    if ref is not None:
        store.update_ref(ref, new_after)
    return {"reverted": sorted({e.path for e in touched}), "after": new_after}


def _chosen(entries: list[FileDiff], paths, hunks) -> tuple[list[FileDiff], list[tuple[FileDiff, list[Hunk]]]]:
    if paths is None and hunks is None:
        return list(entries), []
    by_path = {}
    for entry in entries:
        by_path[entry.path] = entry
        if entry.old_path:
            by_path.setdefault(entry.old_path, entry)
    whole: dict[str, FileDiff] = {}
    for path in paths or ():
        entry = by_path.get(checked_path(path))
        if entry is None:
            raise CheckpointError(f"{path} {RELOAD}")
        whole[entry.path] = entry
    partial: dict[str, tuple[FileDiff, list[Hunk]]] = {}
    for item in hunks or ():
        if not isinstance(item, dict) or not isinstance(item.get("header"), str):
            raise CheckpointError("a hunk is given as {\"path\": ..., \"header\": \"@@ -a,b +c,d @@\"}")
        entry = by_path.get(checked_path(item.get("path")))
        found = [h for h in (entry.hunks if entry else ()) if h.header == item["header"].strip()]
        if not found:
            raise CheckpointError(f"that hunk of {item.get('path')} {RELOAD}")
        if entry.path in whole:
            continue
        if entry.letter in "ADT" or entry.binary:  # one hunk is the whole file there
            whole[entry.path] = entry
            continue
        chosen = partial.setdefault(entry.path, (entry, []))[1]
        if found[0] not in chosen:
            chosen.append(found[0])
    return list(whole.values()), [p for path, p in partial.items() if path not in whole]


def _blobs(store: GitStore, ids: set[str]) -> dict[str, bytes]:
    ids = sorted(ids)
    if not ids:
        return {}
    out = store.git("cat-file", "--batch", data="".join(f"{i}\n" for i in ids).encode())
    blobs, position = {}, 0
    for blob_id in ids:
        end = out.index(b"\n", position)
        name, kind, size = out[position:end].decode().split(" ")
        if name != blob_id or kind != "blob":
            raise CheckpointError(f"the checkpoint lacks {blob_id}")
        blobs[blob_id] = out[end + 1:end + 1 + int(size)]
        position = end + 2 + int(size)
    return blobs


def _inside(checkout: str, path: str) -> None:
    # A folder on the way replaced by a symlink since the snapshot would lead the write elsewhere.
    # (checked on the nearest folder that exists: the write creates the missing ones below it)
    existing = os.path.dirname(os.path.join(checkout, path))
    while not os.path.lexists(existing) and existing != checkout:
        existing = os.path.dirname(existing)
    if os.path.realpath(existing) != os.path.normpath(existing):
        raise CheckpointError(f"{path} is now behind a symlink: it is not reverted")


def _as_left(checkout: str, entry: FileDiff, blobs: dict[str, bytes]) -> bool:
    """Whether the disk holds what the turn left at this entry's paths."""
    for path in filter(None, (entry.before_path, entry.after_path)):
        full = os.path.join(checkout, path)
        if path != entry.after_path:
            if os.path.lexists(full):
                return False
            continue
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return False
        wanted = blobs[entry.new_id]
        if entry.new_mode == SYMLINK:
            if not stat.S_ISLNK(info.st_mode) or os.fsencode(os.readlink(full)) != wanted:
                return False
        elif not stat.S_ISREG(info.st_mode) or info.st_size != len(wanted) or _read(full) != wanted:
            return False
    return True


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _remove(checkout: str, path: str) -> None:
    full = os.path.join(checkout, path)
    try:
        if os.path.isdir(full) and not os.path.islink(full):
            raise CheckpointError(f"{path} is a folder now: it is not removed")
        os.unlink(full)
    except FileNotFoundError:
        pass


def _prune(store: GitStore, before: str, removed: list[str]) -> None:
    """Removes the now-empty folders, above removed files, that `before` did not have."""
    folders = {os.path.dirname(path) for path in removed}
    for path in list(folders):
        while path:
            folders.add(path)
            path = os.path.dirname(path)
    folders.discard("")
    if not folders:
        return
    listed = store.git("ls-tree", "-r", "-d", "--name-only", "-z", before, "--",
                       *(f":(literal){f}" for f in sorted(folders)))
    kept = {os.fsdecode(n) for n in listed.split(b"\0") if n}
    for folder in sorted(folders - kept, key=lambda f: f.count("/"), reverse=True):
        try:
            os.rmdir(os.path.join(store.checkout, folder))
        except OSError:  # not empty (files the turn did not make), or gone
            pass


def _write(checkout: str, path: str, content: bytes, mode: str) -> None:
    full = os.path.join(checkout, path)
    folder = os.path.dirname(full)
    os.makedirs(folder, exist_ok=True)
    temp = os.path.join(folder, f".devhostd-{uuid.uuid4().hex}")
    try:
        if mode == SYMLINK:
            os.symlink(os.fsdecode(content), temp)
        else:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
            os.chmod(temp, _permissions(full, mode == "100755"))
        os.replace(temp, full)
    except IsADirectoryError as error:
        raise CheckpointError(f"{path} is a folder now: it is not reverted") from error
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)


def _permissions(full: str, executable: bool) -> int:
    try:
        info = os.lstat(full)
        bits = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    except FileNotFoundError:
        bits = None
    if bits is None:
        bits = 0o666 & ~_umask()
    bits &= ~0o111
    return bits | ((bits & 0o444) >> 2) if executable else bits


def _umask() -> int:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _index_line(mode: str, blob: str, path: str) -> bytes:
    return f"{mode} {blob}\t".encode() + os.fsencode(path) + b"\0"


def _commit(store: GitStore, after: str, updates: list[bytes], skipped: list[str]) -> str:
    index_file = os.path.join(store.path, "indexes", f".revert-{uuid.uuid4().hex}")
    try:
        store.git("read-tree", after, index_file=index_file)
        if updates:
            store.git("update-index", "-z", "--index-info", index_file=index_file, data=b"".join(updates))
        tree = store.git("write-tree", index_file=index_file).decode().strip()
    finally:
        for leftover in (index_file, index_file + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    message = MESSAGE + json.dumps({"skipped": skipped, "revertOf": after}).encode() + b"\n"
    return store.git("commit-tree", tree, "-p", after, data=message).decode().strip()


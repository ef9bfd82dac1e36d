"""Shared set-up of the checkpoint tests: a person's git repository that must stay untouched."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from storage.checkpoints import CheckpointStore


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="p", GIT_AUTHOR_EMAIL="p@x", GIT_COMMITTER_NAME="p", GIT_COMMITTER_EMAIL="p@x")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env).stdout.decode()


def write(root: Path, files: dict) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def person_repo(root: Path, files: dict) -> Path:
    """A git repository with ``files`` committed, a stash, and a hook that leaves a marker if
    anything ever runs it."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    write(root, {"stashed.txt": "s\n"})
    git(root, "add", "stashed.txt")
    git(root, "stash", "-q")
    marker = root.parent / "hook-ran"
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-index-change", "pre-auto-gc"):
        path = root / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        path.chmod(0o755)
    return root


def repo_state(root: Path) -> dict:
    """What of the person's repository a checkpoint must never change."""
    hooks = root / ".git" / "hooks"
    index = hashlib.sha256((root / ".git" / "index").read_bytes()).hexdigest()  # before status may refresh it
    return {"index": index,
            "status": git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all", "--ignored"),
            "refs": git(root, "rev-parse", "--all"), "stash": git(root, "stash", "list"),
            "hooks": sorted((p.name, p.read_bytes()) for p in hooks.iterdir()),
            "hooks that ran": _read(root.parent / "hook-ran")}


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def store_for(tmp_path: Path, checkout: Path, **limits) -> CheckpointStore:
    return CheckpointStore(str(tmp_path / "state"), str(checkout), **limits)


def turn(store: CheckpointStore, change, chat: str = "c1", number: int = 1) -> tuple[str, str]:
    """Snapshots before and after ``change()``: the commits of one turn."""
    before = store.snapshot(f"chat-{chat}", f"{chat}/t{number}/before")
    change()
    after = store.snapshot(f"chat-{chat}", f"{chat}/t{number}/after")
    assert before.error is None and after.error is None, (before.error, after.error)
    return before.commit, after.commit


def tree_of(root: Path) -> dict:
    """Every file under ``root`` (not .git): bytes, exec bit, symlink target."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path))
            else:
                found[relative] = (path.read_bytes(), os.access(path, os.X_OK))
    return found


def folders_of(root: Path) -> set:
    return {str(Path(f).relative_to(root)) for f, dirs, _ in os.walk(root) if ".git" not in Path(f).parts} - {"."}

"""The files of a checkout, for the panel's @-mentions: what git tracks (and untracked files it
does not ignore) in a git checkout, else a bounded walk. The web edge runs ``git_names`` in its
greenlet (gevent's subprocess waits cooperatively; its child watcher lives on the hub's loop,
not in a threadpool thread), then ``listed`` (plain file work) on the hub's threadpool.

Paths are relative to the checkout, ``/``-separated, sorted; at most MAX_FILES (``truncated``
says when more were left out). The walk skips dependency and tool folders (SKIPPED) and any
hidden folder, and follows no link; ``git`` gets GIT_TIMEOUT seconds, then the walk answers.
"""
from __future__ import annotations

import os
import subprocess

MAX_FILES = 5000
GIT_TIMEOUT = 10.0
SKIPPED = frozenset({"node_modules", ".git", "__pycache__", ".venv", "venv", "dist", "build", ".cache"})


def listed(root: str, git: list[str] | None, limit: int = MAX_FILES) -> dict:
    """``{files: [...], truncated: bool, source: "git" | "walk"}`` for the checkout at ``root``;
    ``git``: what ``git_names`` gave (None: no git checkout, or git could not say)."""
    if git is not None:
        # A file git still tracks but that is deleted is no file to mention.
        files, source = [n for n in git if os.path.isfile(os.path.join(root, n))], "git"
    else:
        files, source = _walk(root, limit + 1), "walk"
    files = sorted(files)
    return {"files": files[:limit], "truncated": len(files) > limit, "source": source}


def git_names(root: str) -> list[str] | None:
    """What git lists in the checkout at ``root``, or None where it is none (or git fails)."""
    # No `.git` test: a service in a monorepo's folder (packages/app) is inside a git checkout
    # too, and git lists from there (paths relative to it); outside any, git fails and the walk answers.
    # --others --exclude-standard: new files the person has not added yet, but nothing ignored.
    try:
        done = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [n for n in dict.fromkeys(done.stdout.decode("utf-8", "surrogateescape").split("\0")) if n]


def _walk(root: str, most: int) -> list[str]:
    found: list[str] = []
    for folder, dirs, names in os.walk(root):  # followlinks=False: never out of the checkout
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
        relative = os.path.relpath(folder, root)
        for name in sorted(names):
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            found.append(name if relative == "." else f"{relative}/{name}".replace(os.sep, "/"))
            if len(found) >= most:
                return found
    return found

"""Which ignore rules a snapshot follows: those the person's git follows for the checkout.

The checkout's own .gitignore files git reads by itself (they are in the work tree). What lives
outside it is copied or named: the person's repository's info/exclude (found through a `.git`
*file* too, for a worktree: its `gitdir:` and `commondir`), the person's global ignore file
(git's default place; the global config is off for the store's git), and — for a checkout that
is a folder of a larger repository (a monorepo's package) — the unanchored lines of the
.gitignore files above it (`node_modules/`, `*.log`: they apply at any depth, so they mean the
same here; anchored ones would need rewriting and are left out).
"""
from __future__ import annotations

import os


def person_git_dir(checkout: str) -> tuple[str | None, str | None]:
    """(the person's repository's top folder, its common git dir), or (None, None)."""
    folder = checkout
    while True:
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            return folder, dot
        if os.path.isfile(dot):
            return folder, _common_dir(_gitdir_of(dot))
        parent = os.path.dirname(folder)
        if parent == folder:
            return None, None
        folder = parent


def _gitdir_of(dot_file: str) -> str | None:
    try:
        with open(dot_file, "rb") as handle:
            line = handle.readline().strip()
    except OSError:
        return None
    if not line.startswith(b"gitdir:"):
        return None
    target = os.fsdecode(line[len(b"gitdir:"):].strip())
    return os.path.normpath(os.path.join(os.path.dirname(dot_file), target))


def _common_dir(git_dir: str | None) -> str | None:
    if git_dir is None:
        return None
    try:  # a worktree's git dir names the main repository's through `commondir`
        with open(os.path.join(git_dir, "commondir"), "rb") as handle:
            return os.path.normpath(os.path.join(git_dir, os.fsdecode(handle.read().strip())))
    except OSError:
        return git_dir


def exclude_lines(checkout: str) -> bytes:
    """What the store's info/exclude holds for this checkout (see the module's comment)."""
    top, common = person_git_dir(checkout)
    parts = [b"# written by devhostd at each snapshot: the person's rules, copied\n"]
    if common is not None:
        parts.append(_read(os.path.join(common, "info", "exclude")))
    if top is not None and top != checkout:
        folder = os.path.dirname(checkout)
        above = []
        while True:
            above.append(folder)
            if folder == top or os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        for folder in reversed(above):  # outermost first: deeper lines win, as in git
            parts.extend(line + b"\n" for line in _read(os.path.join(folder, ".gitignore")).split(b"\n")
                         if _unanchored(line))
    return b"".join(p if p.endswith(b"\n") or not p else p + b"\n" for p in parts)


def _unanchored(line: bytes) -> bool:
    pattern = line.rstrip(b"\r").rstrip(b" ")
    if not pattern or pattern.startswith(b"#"):
        return False
    pattern = pattern[1:] if pattern.startswith(b"!") else pattern
    if pattern.startswith(b"**/"):
        pattern = pattern[3:]
    return b"/" not in pattern.rstrip(b"/")


def global_excludes_file() -> str | None:
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = os.path.join(xdg, "git", "ignore")
    return path if os.path.isfile(path) else None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""

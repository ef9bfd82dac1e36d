"""Finding a CLI's own files by an id: shared by every harness package.

An id names one file: anything path-like is refused, never globbed, and what goes into a
pattern is escaped, so no id can match a file it does not name.
"""
from __future__ import annotations

import os


def glob_escape(path: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def plain_id(value: str) -> bool:
    return bool(value) and not any(c in value for c in "/\\") and not value.startswith(".")


def home_folder(env: dict, variable: str, default: str) -> str:
    """A CLI's own folder: ``variable`` when the environment sets it, else ``~/<default>``."""
    return env.get(variable) or os.path.join(env.get("HOME") or os.path.expanduser("~"), default)


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or under it (both as given: resolve them first)."""
    return bool(folder) and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep))

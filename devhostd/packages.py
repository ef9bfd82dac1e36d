"""Whether ``web``, ``actors`` and ``storage`` are devhostd's own: they install as top-level
packages, and ``web`` is also what the ``web.py`` distribution installs. devhostd refuses to
start when one resolves elsewhere, or was overwritten in place, instead of failing later on
someone else's code. Read without importing any of them (their files are only looked at).
"""
from __future__ import annotations

import importlib.util
import os

PACKAGES = ("web", "actors", "storage")
MARKER = "DEVHOSTD_PACKAGE"  # in web/__init__.py: another distribution's web/ does not say it
HOME = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def foreign() -> list[tuple[str, str]]:
    """(package, where it resolves) for each package that is not devhostd's."""
    found = []
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        if origin is None or not os.path.isfile(origin):
            found.append((name, "nowhere" if spec is None else "a namespace package"))
        elif os.path.dirname(os.path.dirname(os.path.realpath(origin))) != HOME or (
                name == "web" and not _marked(origin)):
            found.append((name, origin))
    return found


def _marked(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return MARKER in handle.read(65536)
    except OSError:
        return False


def refusal() -> str | None:
    """What devhostd says instead of starting when a package is not its own, or None."""
    found = foreign()
    if not found:
        return None
    named = "; ".join(f"`import {name}` resolves to {where}" for name, where in found)
    return (f"devhostd: {named}, which is not devhostd's ({HOME} holds devhostd): another distribution "
            f"installed a package of the same name (`web` is also web.py's). Install devhostd into an "
            f"environment of its own: python3 -m venv ~/.devhostd && ~/.devhostd/bin/pip install "
            f"<devhostd checkout>, then run ~/.devhostd/bin/devhostd (or run bin/devhostd from the checkout)")

"""The chat core API's secret: ``<state-dir>/core-token``, made at the first start.

Pages never see it (they use the Chat API, whose boundary is the origin); programs of the
person's own (an integration, ``devhostd visual publish`` run by hand, the Python client) read
it from this file and send it as ``Authorization: Bearer <token>``. No route serves it and no
CLI gets it in its environment: an agent gets a token of its own chat instead
(actors/agent_tokens.py).
"""
from __future__ import annotations

import os
import secrets

from storage.atomic import write_bytes_atomically

FILE_NAME = "core-token"


def token_path(state_dir: str) -> str:
    return os.path.join(state_dir, FILE_NAME)


def load_or_create(state_dir: str) -> str:
    """The daemon's secret: the one already kept, else a new one written 0600 (in a 0700 folder).
    A kept file that others may read is made private again (its secret is kept: programs the
    person set up go on working)."""
    path = token_path(state_dir)
    token = read(state_dir)
    if token is None:
        token = secrets.token_urlsafe(32)
        write_bytes_atomically(path, token.encode() + b"\n")
    elif os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    return token


def read(state_dir: str) -> str | None:
    """The kept secret, or None when there is none (or it is empty)."""
    try:
        with open(token_path(state_dir), encoding="ascii") as handle:
            token = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None

"""Atomic, private file writes: temp file + fsync + rename, 0600 files in 0700 folders."""
from __future__ import annotations

import json
import os
import tempfile


def write_json_atomically(path: str, value) -> int:
    """Writes ``value`` as JSON; returns the bytes written."""
    return write_bytes_atomically(path, json.dumps(value, separators=(",", ":")).encode())


def write_bytes_atomically(path: str, data: bytes) -> int:
    """Writes ``data`` whole or not at all; returns its length."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)  # mkstemp creates 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash
    finally:
        os.close(dir_fd)
    return len(data)

"""A small disk for tests of what a full one does: a tmpfs of its own (root only), filled with
one file and freed again by removing it.

    with small_disk(tmp_path / "state") as disk:
        disk.fill()   # every byte taken: the next write that needs a page fails with ENOSPC
        disk.free()   # room again
"""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess

import pytest


class SmallDisk:
    def __init__(self, path: str):
        self.path = path
        self.filler = os.path.join(path, "filler")

    def fill(self, leave: int = 0) -> int:
        """Takes every free byte with one file but ``leave`` (about: tmpfs counts in pages);
        returns the file's size."""
        chunk = b"\0" * 4096
        with open(self.filler, "ab", buffering=0) as handle:
            while True:
                try:
                    if handle.write(chunk) < len(chunk):
                        break  # the last page was taken in part: nothing is left
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
            if leave:
                os.ftruncate(handle.fileno(), max(0, os.path.getsize(self.filler) - leave))
        return os.path.getsize(self.filler)

    def free(self) -> None:
        os.unlink(self.filler)


@contextlib.contextmanager
def small_disk(path, size: str = "1m"):
    """A tmpfs of ``size`` mounted on ``path`` (made if missing), unmounted whatever happens."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root (mount -t tmpfs)")
    path = str(path)
    os.makedirs(path, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"could not mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", path], check=False)

"""The pinned Vite (tests/peers.sh) as a dev server for a test: ``vite_port`` (a free port, and the
``vite`` marker) and ``run_vite``, which serves a project on it until its block ends."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.peers import PEERS_BIN
from tests.tiers import needs

VITE = PEERS_BIN.parent / "vite" / "bin" / "vite.js"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
@needs("vite")
def vite_port():
    if not VITE.exists():
        pytest.fail(f"Vite is not installed at {VITE}: run bash tests/peers.sh")
    return free_port()


@contextlib.contextmanager
def run_vite(project: Path, port: int, log_path: Path, ready_path: str = "/"):
    """Vite's dev server on ``project`` at 127.0.0.1:``port``, once ``ready_path`` answers."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(["node", str(VITE), str(project), "--host", "127.0.0.1", "--port", str(port),
                                 "--strictPort", "--logLevel", "warn"], cwd=project, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{ready_path}", timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise AssertionError(f"Vite did not start: {log_path.read_text()[-800:]}") from None
                    time.sleep(0.2)
            yield project
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

"""How long devhostd takes to start, against the import floor (issue 29: start-up <= 1.5x it).

    python3 bench/startup.py [--rounds 7]

The floor: a fresh ``python3 -c "import gevent, pykka, bottle, msgpack"``, spawn to exit. The
start-up: ``bin/devhostd --port 0`` (in a temporary folder, its own state folder, no manifest),
spawn to the moment its control origin answers ``GET /__devhost__/config.json``; then it is sent
SIGTERM and waited for. Alternating, after one untimed run of each (a warm disk cache for both).
Prints the p50 of each and their ratio; nothing is asserted.

Both run with bytecode, as an installed devhostd does (pip compiles what it installs): where
the environment says PYTHONDONTWRITEBYTECODE (some sandboxes do), a checkout's modules would
be compiled anew at every start while the floor's installed packages have theirs, and the
ratio would measure the compiler. So the bench lifts it and keeps the checkout's bytecode in a
folder of its own (PYTHONPYCACHEPREFIX), written by the untimed first run.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BYTECODE = tempfile.mkdtemp(prefix="devhostd-bench-pyc-")
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPYCACHEPREFIX": BYTECODE}
FLOOR = [sys.executable, "-c", "import gevent, pykka, bottle, msgpack"]


def floor_once() -> float:
    started = time.perf_counter()
    subprocess.run(FLOOR, check=True, env=ENV)
    return time.perf_counter() - started


def daemon_once() -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, os.path.join(ROOT, "bin", "devhostd"), "--port", "0",
                                    "--state-dir", os.path.join(folder, "state")],
                                   cwd=folder, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            line = process.stdout.readline()
            match = re.search(r"control origin (http://\S+)", line)
            if not match:
                raise RuntimeError(f"devhostd said {line!r}, not its control origin")
            with urllib.request.urlopen(match.group(1) + "/__devhost__/config.json", timeout=10) as answer:
                answer.read()
            took = time.perf_counter() - started
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
        return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    floor_once(), daemon_once()  # warm-up, untimed
    floors, starts = [], []
    for i in range(rounds):
        pair = (floor_once, daemon_once) if i % 2 == 0 else (daemon_once, floor_once)
        for run in pair:
            (floors if run is floor_once else starts).append(run())
    floor, start = statistics.median(floors), statistics.median(starts)
    print(f"import floor (gevent, pykka, bottle, msgpack): p50 {floor * 1000:7.1f} ms  "
          f"[{', '.join(f'{t * 1000:.0f}' for t in floors)}]")
    print(f"devhostd start-up to its first answer:         p50 {start * 1000:7.1f} ms  "
          f"[{', '.join(f'{t * 1000:.0f}' for t in starts)}]")
    print(f"start-up / floor: {start / floor:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(BYTECODE, ignore_errors=True)

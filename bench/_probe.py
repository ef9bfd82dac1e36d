"""The daemon's hub seen from another process: a tiny request (a 404 the web app answers on the
hub) again and again on a connection of its own, until its stdin closes; then it prints its
slowest answer, in seconds. In a process of its own because a probe in the bench's process
waits on the bench itself: a greenlet reading a 3 MB frame whose bytes are already there never
yields, and the probe's figure would be the bench's, not the daemon's.

    python3 bench/_probe.py HOST PORT ROUTED_HOST
"""
from __future__ import annotations

import http.client
import sys
import threading
import time


def main(host: str, port: int, routed: str) -> None:
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    connection, slowest = http.client.HTTPConnection(host, port, timeout=30), 0.0
    print("ready", flush=True)
    while not done.is_set():
        start_at = time.perf_counter()
        connection.request("GET", "/__devhost__/no-such-route", headers={"Host": routed})
        connection.getresponse().read()
        slowest = max(slowest, time.perf_counter() - start_at)
        time.sleep(0.002)
    print(slowest, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])

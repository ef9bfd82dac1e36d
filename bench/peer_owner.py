"""What telling a connection's owner costs a fresh connection, against none, in one run.

    python3 bench/peer_owner.py [connections]   (default: 2000)

A gevent server on 127.0.0.1 accepts ``connections`` fresh connections, one after another, each
answered with one byte, and the client times connect-to-answer. Three servers, interleaved in
rounds so the machine's drift falls on all alike: bare (no lookup), sock_diag (devhostd's
``web/peer_owner.owner_of``: one netlink request for the peer's four-tuple) and /proc (reading
and parsing ``/proc/net/tcp`` whole, the other way to find the owner). Prints p50 / p99 per
connection and the extra cost of each lookup over bare. The goal: a fresh connection costs at
most 0.2 ms more.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import os  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
from gevent.server import StreamServer  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from web import peer_owner  # noqa: E402

LOOKUPS = {"bare": None, "sock_diag": peer_owner.owner_of, "/proc": peer_owner.owner_from_proc}


def serve(lookup):
    def handle(sock, _address):
        if lookup is not None and lookup(sock) != os.geteuid():
            sock.close()
            return
        sock.sendall(b"!")
    server = StreamServer(("127.0.0.1", 0), handle)
    server.start()
    return server


def timed_connections(port: int, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            if sock.recv(1) != b"!":
                raise SystemExit("the server refused its own user")
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    servers = {name: serve(lookup) for name, lookup in LOOKUPS.items()}
    times = {name: [] for name in servers}
    rounds = 10
    for _ in range(rounds):
        for name, server in servers.items():
            times[name] += timed_connections(server.server_port, count // rounds)
    for server in servers.values():
        server.stop()
    sockets = sum(1 for _ in open("/proc/net/tcp")) + sum(1 for _ in open("/proc/net/tcp6")) - 2
    print(f"{count} fresh connections each, {os.cpu_count()} cores, {sockets} TCP sockets on the machine")
    bare = statistics.median(times["bare"])
    print(f"{'lookup':<10} {'p50 ms':>8} {'p99 ms':>8} {'extra p50 ms':>13} {'ratio':>7}")
    for name, found in times.items():
        found.sort()
        p50, p99 = statistics.median(found), found[int(len(found) * 0.99)]
        print(f"{name:<10} {p50 * 1e3:8.3f} {p99 * 1e3:8.3f} {(p50 - bare) * 1e3:13.3f} {p50 / bare:6.2f}x")


if __name__ == "__main__":
    gevent.spawn(main).join()

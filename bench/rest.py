"""Nothing runs at rest: the daemon's CPU over a quiet minute, against an idle gevent process.

    python3 bench/rest.py [--seconds 60] [--chats 20] [--pages 5] [--clients 2] [--turns 1]

A real devhostd (bin/devhostd, port 0, a stack of its own in a temporary folder) with the real
Claude Code CLI against tests/mock_anthropic.py: ``chats`` chats made over the chat core, each
given ``turns`` turns (its CLI stays up after them, as a person's would), then ``pages`` pages
open the sockets the panel opens (a chat socket and a thread socket of one chat each, the log
socket, the page socket), beside ``clients`` chat-core clients attached to every chat. Once
that settled, the daemon's CPU time (utime + stime of /proc/<pid>/stat) is taken over
``seconds``, and, over the same window, that of an idle ``python -c "import gevent;
gevent.sleep(N)"`` (the floor: an interpreter and a hub doing nothing). Both print as % of one
core; the goal is the daemon at ≤ 0.5 %. (The kernel counts CPU time in clock ticks, 10 ms
here: a quiet daemon's figure is coarse, so how often it woke is printed too.) The CLIs' own
CPU is not the daemon's and is not counted.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websocket  # noqa: E402

from devhostd.core_client import CoreConnection  # noqa: E402
from tests.integration.daemon import Daemon, wait_until, write_manifest  # noqa: E402
from tests.mock_anthropic import MockAnthropic, text_reply  # noqa: E402
from tests.peers import claude_env, require_peers  # noqa: E402

GOAL = 0.5  # % of one core
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def wakes(pid: int) -> int:
    """Voluntary context switches of every thread of a process: how often it slept and woke."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("voluntary_ctxt_switches"))
        except (OSError, StopIteration):
            continue  # a thread that ended meanwhile
    return total


def open_page(daemon: Daemon, session_id: str) -> list[websocket.WebSocket]:
    """The sockets one open panel holds: its chat's chat and thread sockets, the log, the page's."""
    host = daemon.host()
    options = {"host": host, "origin": f"http://{host}", "timeout": 30}
    base = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws"
    query = daemon.query()
    return [websocket.create_connection(f"{base}/chat?sessionId={session_id}&{query}", **options),
            websocket.create_connection(f"{base}/thread?sessionId={session_id}&{query}", **options),
            websocket.create_connection(f"{base}/log?{query}", **options),
            websocket.create_connection(f"{base}/page?{query}", **options)]


def turns_done(core, chat_id: str) -> int:
    return sum(1 for i in core.chats.history(chat_id, limit=100)["items"]
               if i["kind"] == "turn" and i["state"] == "done")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds of quiet before measuring")
    args = parser.parse_args()
    require_peers("claude")
    mock = MockAnthropic()
    mock.start()
    root = Path(tempfile.mkdtemp(prefix="devhostd-rest-"))
    write_manifest(root)
    daemon = Daemon(claude_env(root / "home", mock.url), cwd=root, config=root / "devhost.toml",
                    state_dir=root / "state")
    sockets, clients = [], []
    try:
        clients = [CoreConnection(daemon.control_origin, token=daemon.core_token).__enter__()
                   for _ in range(max(1, args.clients))]
        core = clients[0]
        chat_ids = [f"rest-{n}" for n in range(args.chats)]
        for chat_id in chat_ids:
            core.chats.create(chat_id, provider="claude", cwd=str(root / "project"))
        for turn in range(args.turns):
            mock.add(*[text_reply(f"answer {turn}") for _ in chat_ids])
            for chat_id in chat_ids:
                core.chats.send(chat_id, f"message {turn}")
            for chat_id in chat_ids:
                wait_until(lambda c=chat_id: turns_done(core, c) > turn, timeout=120, what=f"{chat_id}'s turn")
        for client in clients[:args.clients]:
            for chat_id in chat_ids:
                client.chats.attach(chat_id)
        for page in range(args.pages):
            sockets += open_page(daemon, chat_ids[page % len(chat_ids)])
        print(f"devhostd pid {daemon.proc.pid}: {args.chats} chats ({args.turns} turn(s) each), {args.pages} pages "
              f"({len(sockets)} sockets), {args.clients} core clients; settling {args.settle:.0f}s", flush=True)
        time.sleep(args.settle)
        idle = subprocess.Popen([sys.executable, "-c", f"import gevent; gevent.sleep({args.seconds + 30})"])
        time.sleep(2.0)  # its imports done: only its rest is measured
        before = time.monotonic(), cpu_seconds(daemon.proc.pid), cpu_seconds(idle.pid), wakes(daemon.proc.pid), \
            wakes(idle.pid)
        time.sleep(args.seconds)
        after = time.monotonic(), cpu_seconds(daemon.proc.pid), cpu_seconds(idle.pid), wakes(daemon.proc.pid), \
            wakes(idle.pid)
        idle.kill()
        idle.wait()
        wall = after[0] - before[0]
        daemon_pct = 100 * (after[1] - before[1]) / wall
        idle_pct = 100 * (after[2] - before[2]) / wall
        print(f"over {wall:.1f}s  devhostd: {daemon_pct:.3f}% of one core ({after[1] - before[1]:.2f}s CPU)   "
              f"idle gevent: {idle_pct:.3f}% ({after[2] - before[2]:.2f}s)   clock tick {1 / TICKS:.3f}s")
        print(f"wakes (voluntary context switches, every thread): devhostd {after[3] - before[3]}, "
              f"idle gevent {after[4] - before[4]}")
        print(f"goal <= {GOAL}%: {'met' if daemon_pct <= GOAL else 'NOT met'}")
        return 0 if daemon_pct <= GOAL else 1
    finally:
        for ws in sockets:
            ws.close()
        for client in clients:
            client.close()
        daemon.stop()
        mock.stop()


if __name__ == "__main__":
    sys.exit(main())

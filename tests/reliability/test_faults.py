"""Faults on the real CLIs, each checked for what matters: no message lost (every send gets its
answer), no process left behind, no approval left waiting under a finished turn; resources
flat over many connections; every client of every session gets every event once, in order."""
from __future__ import annotations

import os
import signal
import time

import pytest
import requests

from tests.integration.daemon import Daemon, processes_with_env, tagged_processes, wait_until
from tests.mock_anthropic import text_reply, tool_use_reply

CYCLES = 2000  # connect/disconnect cycles in CI; --long: 10,000


def approvals_pending(thread_items) -> list[dict]:
    return [i for i in thread_items if i["kind"] == "approval" and i.get("decision") == "pending"]


def test_a_cli_killed_while_an_approval_waits_loses_no_message_and_leaves_nothing_waiting(daemon, mock, daemon_env):
    mock.add(tool_use_reply("Bash", {"command": "touch never.txt", "description": "Make it"}), text_reply("later"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    thread = daemon.connect_thread(record["id"])
    first = sock.send_message("make the file")
    thread.wait_item(lambda i: i["kind"] == "approval" and i["decision"] == "pending", what="the approval")
    second = sock.send_message("and then this")
    cli = next(pid for pid in tagged_processes(record["chatId"])
               if open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0].endswith(b"claude"))
    os.kill(cli, signal.SIGKILL)
    # Every send gets its answer: taken by the CLI before it died, or refused saying why.
    for command_id in (first, second):
        assert sock.result_for(command_id)["commandId"] == command_id
    thread.wait_item(lambda i: i["kind"] == "turn" and i["state"] != "running", what="the turn's end")
    assert approvals_pending(thread.items().values()) == []
    wait_until(lambda: not tagged_processes(record["chatId"]), what="nothing of the CLI left")
    sock.close()
    thread.close()


def test_a_daemon_killed_while_an_approval_waits_restarts_with_nothing_waiting_and_no_orphan(stack, daemon_env, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch never.txt", "description": "Make it"}))
    first = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        record = first.create_session()
        thread = first.connect_thread(record["id"])
        thread.send_message("make the file")
        thread.wait_item(lambda i: i["kind"] == "approval" and i["decision"] == "pending", what="the approval")
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        first.stop()
    # The CLI dies with the daemon (it is told to, by the kernel, when its parent goes).
    wait_until(lambda: not processes_with_env(f"HOME={daemon_env['HOME']}"), what="no orphan CLI")
    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        [listed] = again.sessions()
        thread = again.connect_thread(listed["id"])
        items = thread.snapshot["items"]
        assert approvals_pending(items) == []
        assert [i["state"] for i in items if i["kind"] == "turn"] == ["aborted"]
        assert [i["text"] for i in items if i["kind"] == "user"] == ["make the file"]
        thread.close()
    finally:
        assert again.stop() == 0


@pytest.fixture
def cycles(long_mode) -> int:
    return CYCLES * 5 if long_mode else CYCLES


def _fds_and_rss(pid: int) -> tuple[int, int]:
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as handle:
        rss = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
    return fds, rss * 1024


def test_connecting_and_disconnecting_thousands_of_times_leaves_fds_and_memory_flat(daemon, mock, cycles):
    import websocket
    record = daemon.create_session()
    host = daemon.host()
    url = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/thread?sessionId={record['id']}&{daemon.query()}"
    session = requests.Session()

    def cycle():
        ws = websocket.create_connection(url, host=host, origin=f"http://{host}", timeout=10)
        ws.recv()  # its snapshot
        ws.close()
        requests.get(f"http://127.0.0.1:{daemon.port}/__devhost__/config.json", headers={"Host": host}, timeout=10)

    for _ in range(200):  # warm-up: caches, pools and the allocator settle
        cycle()
    time.sleep(0.5)
    fds_before, rss_before = _fds_and_rss(daemon.proc.pid)
    for _ in range(cycles):
        cycle()
    time.sleep(1)
    fds_after, rss_after = _fds_and_rss(daemon.proc.pid)
    session.close()
    print(f"{cycles} cycles: fds {fds_before} -> {fds_after}, RSS {rss_before >> 20} -> {rss_after >> 20} MiB")
    assert fds_after <= fds_before + 4
    assert rss_after - rss_before < 16 * 1024 * 1024


def test_every_client_of_every_session_gets_every_event_once_in_order(daemon, mock):
    sessions, clients = 4, 3
    mock.add(*[text_reply(*[f"part {n} "] * 30) for n in range(sessions)])
    records = [daemon.create_session() for _ in range(sessions)]
    sockets = {r["id"]: [daemon.connect(r["id"]) for _ in range(clients)] for r in records}
    for record in records:
        sockets[record["id"]][0].send_message("go")
    for record in records:
        for sock in sockets[record["id"]]:
            sock.wait_event(lambda p: p["type"] == "result", timeout=120)
    for record in records:
        seen = [[f["sequence"] for f in sock.frames if f["type"] == "event"] for sock in sockets[record["id"]]]
        for sequence in seen:
            assert sequence == list(range(1, len(sequence) + 1)), "every event once, in order"
        assert len({len(s) for s in seen}) == 1  # every client of a session got the same events
        for sock in sockets[record["id"]]:
            sock.close()

"""How long one agent scan takes with many agents and large transcripts, measured in one run.

    python3 bench/scan.py [--agents 200] [--size-mib 8]

Starts ``--agents`` fake agents, a quarter of each harness, laid out as the reference records
them (copies of /bin/sleep named claude / codex / pi / opencode, each in its own folder, with a
Claude registry file, a Codex rollout held open, pi session files and one OpenCode database),
each transcript ``--size-mib`` large with lines of 64 KiB and more near its end. Then prints:

- the first scan (every transcript read from its end) and a repeated scan (unchanged files
  cost a stat), in ms, and per agent;
- the same with tiny transcripts: the ratio says whether transcript size matters (it should
  not: ~1.0x);
- a bare /proc pass (reading every process's stat) as the floor a scan cannot go below.

The goal is a scan of 200 agents under 100 ms. Nothing is asserted; every process started is
ended before it exits.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from actors.agents import procs  # noqa: E402
from actors.agents.scan import Scanner  # noqa: E402
from tests.agent_fakes import (Agents, append_jsonl, claude_record, claude_registry, claude_transcript, iso,  # noqa: E402
                               opencode_db, opencode_insert, opencode_rows, pi_header, pi_message, pi_session_path,
                               wait_for_comm)

HARNESSES = ("claude", "codex", "pi", "opencode")


def filler(size: int) -> bytes:
    """History: bookkeeping lines of 1 KiB and 70 KiB (Claude writes 60 KB attachments)."""
    small = json.dumps({"type": "attachment", "attachment": {"type": "environment", "x": "a" * 1000}}).encode()
    large = json.dumps({"type": "api-request-shape", "shape": "b" * 70_000}).encode()
    block = b"\n".join([small] * 60 + [large]) + b"\n"
    return block * max(1, size // len(block))


def tail(harness: str, cwd: Path, session: str) -> list[dict]:
    """A turn ending the transcript, with a 64 KiB+ tool output in it."""
    big = "c" * 80_000
    if harness == "claude":
        return [claude_record("user", text="run the tests", cwd=str(cwd), session_id=session),
                claude_record("assistant", tool="Bash", input={"command": "make test"}, cwd=str(cwd)),
                claude_record("user", tool="toolu_1", text=big, cwd=str(cwd)),
                claude_record("assistant", text="All green.", cwd=str(cwd))]
    if harness == "codex":
        return [{"timestamp": iso(), "type": "event_msg", "payload": {"type": "task_started"}},
                {"timestamp": iso(), "type": "response_item", "payload": {"type": "function_call_output",
                                                                           "call_id": "c", "output": big}},
                {"timestamp": iso(), "type": "event_msg", "payload": {"type": "task_complete",
                                                                       "last_agent_message": "done"}}]
    return [pi_message("user", text="run the tests"), pi_message("toolResult", text=big, tool="bash"),
            pi_message("assistant", text="All green.")]


def lay_out(root: Path, count: int, size: int, agents: Agents) -> None:
    home = root / "home"
    history = filler(size) if size else b""
    db = opencode_db(home)
    for n in range(count):
        harness = HARNESSES[n % len(HARNESSES)]
        cwd = root / "work" / f"agent-{n:03d}"
        cwd.mkdir(parents=True)
        session = str(uuid.uuid4())
        if harness == "claude":
            proc = agents.fake("claude", cwd, home)
            claude_registry(home, proc.pid, session, cwd, status="idle")
            path = claude_transcript(home, cwd, session)
            path.write_bytes(history)
            append_jsonl(path, *tail(harness, cwd, session))
        elif harness == "codex":
            folder = home / ".codex" / "sessions" / time.strftime("%Y/%m/%d")
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S')}-{session}.jsonl"
            append_jsonl(path, {"timestamp": iso(), "type": "session_meta",
                                "payload": {"id": session, "cwd": str(cwd), "source": "exec",
                                            "base_instructions": "i" * 20_000}})
            with open(path, "ab") as handle:
                handle.write(history)
            append_jsonl(path, *tail(harness, cwd, session))
            # The native codex holds its rollout open: a sleep named codex, fd 3 inherited.
            binary = agents.executable("codex")
            proc = agents.start(["/bin/bash", "-c", 'exec 3<"$0"; exec "$1" 3600', path, binary], cwd,
                                {"HOME": str(home), "PATH": "/usr/bin:/bin"})
            wait_for_comm(proc.pid, "codex")
        elif harness == "pi":
            agents.fake("pi", cwd, home)
            path = pi_session_path(home, cwd)
            append_jsonl(path, pi_header(cwd))
            with open(path, "ab") as handle:
                handle.write(history)
            append_jsonl(path, *tail(harness, cwd, session))
        else:
            agents.fake("opencode", cwd, home)
            rows = opencode_rows("run-mode-session.db-rows.jsonl", cwd,
                                 shift_ms=int(time.time() * 1000) - 1796045547000)
            for row in rows:
                for key in ("id", "session_id", "aggregate_id"):
                    if isinstance(row.get(key), str) and row[key].startswith("ses_"):
                        row[key] = f"{row[key]}-{n}"
                if row["table"] in ("message", "part", "event"):
                    row["id"] = f"{row['id']}-{n}"
                if row["table"] == "part":
                    row["message_id"] = f"{row['message_id']}-{n}"
            opencode_insert(db, rows)


def measure(scanner: Scanner, rounds: int = 5) -> tuple[float, float, int]:
    start = time.perf_counter()
    first = scanner.scan()
    cold = time.perf_counter() - start
    warm = []
    for _ in range(rounds):
        start = time.perf_counter()
        scanner.scan()
        warm.append(time.perf_counter() - start)
    return cold, sorted(warm)[len(warm) // 2], len(first.agents)


def run(count: int, size: int) -> tuple[float, float, int, float, int]:
    root = Path(tempfile.mkdtemp(prefix="devhost-bench-scan-"))
    agents = Agents(root)
    try:
        lay_out(root, count, size, agents)
        os.sync()
        cold, warm, found = measure(Scanner())
        start = time.perf_counter()
        table = procs.read_table()
        return cold, warm, found, time.perf_counter() - start, len(table.procs)
    finally:
        agents.stop_all()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--size-mib", type=float, default=8.0, help="size of each transcript (default 8)")
    args = parser.parse_args()
    size = int(args.size_mib * 1024 * 1024)

    cold, warm, found, bare, processes = run(args.agents, size)
    tiny_cold, tiny_warm, *_ = run(args.agents, 0)

    print(f"agents: {args.agents} started, {found} found; transcripts ~{args.size_mib:g} MiB each; "
          f"{processes} processes on the machine")
    print(f"first scan:    {cold * 1000:7.1f} ms  ({cold / args.agents * 1000:.3f} ms per agent)")
    print(f"repeated scan: {warm * 1000:7.1f} ms  ({warm / args.agents * 1000:.3f} ms per agent)")
    print(f"large / tiny transcripts: first scan {cold / tiny_cold:.2f}x, repeated {warm / tiny_warm:.2f}x")
    print(f"repeated / first scan: {warm / cold:.2f}x")
    print(f"scan / bare /proc pass ({bare * 1000:.1f} ms): {warm / bare:.1f}x")
    print(f"goal: 200 agents under 100 ms -> {'met' if warm < 0.1 * args.agents / 200 else 'missed'} "
          f"(repeated), {'met' if cold < 0.1 * args.agents / 200 else 'missed'} (first)")


if __name__ == "__main__":
    main()

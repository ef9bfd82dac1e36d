"""How fast devhostd relays a CLI's output to chat sockets, against a bare relay, in one run.

    python3 bench/relay.py [frames ...]        (default: 10000 100000 1000000)

For each count, four measurements, each with fresh processes:

- devhostd x1: a real devhostd (bin/devhostd on 127.0.0.1, port 0) runs bench/fake_claude.py
  as Claude Code; one chat socket attaches to a new session and sends one message; the fake
  CLI answers with a turn of ``frames`` text deltas (~365 bytes each, as fast as it can write
  them) and 12 other frames;
- bare x1: bench/_bare_relay.py does the same with no actors: the same fake CLI on a pipe, one
  gevent greenlet reading a line at a time and writing each as a WebSocket text frame with a
  sendall of its own (the plain relay: the baseline the goals are set against);
- batched bare x1: the same, but the frames of one pipe read go out with one write, as devhostd
  does: no JSON decoding, no history, no actors; the ceiling, printed for reference;
- devhostd x10: ten chat sockets on the session; the last to attach sends (in all servers);
- bare fan-out x10 / batched bare fan-out x10: one pipe written to ten sockets.

Each is timed from just before the send until the last socket has the turn's last event. The
sinks are raw sockets in this process, a greenlet each, that parse frame headers in bulk and
check every event's sequence number (complete, in order); a sink whose recv got little naps a
millisecond so that it reads in bulk and costs less than the server it measures. Servers run
in processes of their own, so both sides of a comparison have the same processes and pipes.
On a shared machine a run can be slowed by others: counts up to 100k are measured three
times, interleaved, and the fastest of each kind is kept.

Prints, per count, frames/s per client for each of the four, then the verdict as ratios
(absolute rates depend on the machine): 1 client devhostd/bare, and 10 clients per-client
devhostd/bare-fanout; 1.00x is as fast as the bare relay, 0.50x half as fast. The sinks' CPU
load is printed too: near 100% would mean this process, not the server, set the pace.
"""
from __future__ import annotations

# _harness first: gevent patches the process before anything else is imported.
from _harness import (DeliveryError, bare_relay, connect_sinks, devhostd, frames_per_turn,
                      machine_line, run_sinks, send_message, stop_on_sigterm)

import sys
import time
from dataclasses import dataclass

DEFAULT_COUNTS = (10_000, 100_000, 1_000_000)
CLIENTS = 10


def rounds_for(frames: int) -> int:
    return 3 if frames <= 100_000 else 1  # a 1M run takes long enough to even out noise itself


def timeout_for(frames: int, clients: int) -> float:
    return 60 + frames * clients / 5_000  # far beyond any plausible run: a stall, not a slow run


@dataclass
class Run:
    """One measurement: seconds from the send to the last event, and the sinks' CPU share."""
    frames: int
    seconds: float
    sink_load: float

    @property
    def rate(self) -> float:
        return frames_per_turn(self.frames) / self.seconds  # frames/s per client


def measure_devhostd(frames: int, clients: int) -> Run:
    with devhostd(frames) as daemon:
        session = daemon.create_session()
        daemon.wait_idle(session)
        return timed(connect_sinks(clients, daemon.port, daemon.host, daemon.chat_path(session), daemon.origin,
                                   frames_per_turn(frames)), frames)


def measure_bare(frames: int, clients: int, mode: str) -> Run:
    with bare_relay(clients, frames, mode=mode) as port:
        return timed(connect_sinks(clients, port, f"127.0.0.1:{port}", "/", None, frames_per_turn(frames)), frames)


def timed(sinks, frames: int) -> Run:
    """One turn, started by the last socket's message; every socket is closed after."""
    try:
        cpu = time.process_time()
        seconds = run_sinks(sinks, lambda: send_message(sinks[-1].sock), timeout_for(frames, len(sinks)))
        return Run(frames, seconds, (time.process_time() - cpu) / seconds)
    finally:
        for sink in sinks:
            sink.close()


def measure_count(frames: int) -> dict[str, Run]:
    """The fastest of each kind over the rounds; the kinds interleave so noise hits all alike."""
    best: dict[str, Run] = {}
    for _ in range(rounds_for(frames)):
        for clients in (1, CLIENTS):
            keep(best, f"devhostd x{clients}", measure_devhostd(frames, clients))
            plain = "bare x1" if clients == 1 else f"bare fan-out x{clients}"
            keep(best, plain, measure_bare(frames, clients, "per-frame"))
            keep(best, f"batched {plain}", measure_bare(frames, clients, "batched"))
    return best


def keep(best: dict, name: str, run: Run) -> None:
    if name not in best or run.seconds < best[name].seconds:
        best[name] = run


def main(counts) -> None:
    print(f"frames/s per client; a turn is the given count of text deltas + 12 other frames {machine_line()}")
    for frames in counts:
        runs = measure_count(frames)
        rounds = rounds_for(frames)
        for name, run in runs.items():
            print(f"  {frames:>9,} frames  {name:<25} {run.rate:>9,.0f} frames/s  ({run.seconds:6.2f} s"
                  f"{', best of %d' % rounds if rounds > 1 else ''}; sinks' CPU {run.sink_load:.0%})")
        for prefix in ("", "batched "):
            single = runs["devhostd x1"].rate / runs[f"{prefix}bare x1"].rate
            fanout = runs[f"devhostd x{CLIENTS}"].rate / runs[f"{prefix}bare fan-out x{CLIENTS}"].rate
            print(f"{frames:>11,} frames: 1 client devhostd/{prefix}bare {single:.2f}x; "
                  f"{CLIENTS} clients per-client devhostd/{prefix}bare-fanout {fanout:.2f}x", flush=True)


if __name__ == "__main__":
    stop_on_sigterm()
    try:
        main([int(arg) for arg in sys.argv[1:]] or DEFAULT_COUNTS)
    except DeliveryError as error:  # a finding, not a crash: say what went missing
        sys.exit(f"{sys.argv[0]}: {error}")
    except KeyboardInterrupt:  # every process started is stopped by now (the context managers)
        sys.exit(130)

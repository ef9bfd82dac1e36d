"""How long a CLI's output takes to reach the chat sockets, against a bare relay, in one run.

    python3 bench/latency.py [events] [--rate 500] [--clients 10] [--rounds 2]   (default: 2000 events)

A real devhostd (bin/devhostd on 127.0.0.1, port 0) runs bench/fake_claude.py as Claude Code.
Ten chat sockets attach to one session; the last to attach sends the message that starts the
turn (so it is also the last the daemon pushes each frame to). The fake CLI then writes
``events`` text deltas at ``rate`` a second, each stamped with time.time_ns() just before its
write to stdout. Then the same with bench/_bare_relay.py (the same fake CLI on a pipe, one
gevent greenlet writing each read to every socket: no actors), its last socket sending. Each
server runs ``rounds`` turns, interleaved with the other's, fresh processes each time; the
figures pool them.

Latency is, per event and socket, the time the event's bytes were queued on the client socket
by the kernel (SO_TIMESTAMPNS, CLOCK_REALTIME like the stamp) minus the stamp. Taking the
kernel's time rather than the moment a sink greenlet gets to read keeps the clients out of the
measurement: all ten sinks share this process, and whichever is read last would otherwise be
charged for the others' turns, which no server can help. (When one recv holds several events,
all get the time of its last packet: late, never early.) How long the sinks took to read after
the kernel had the data is printed separately, to show they kept up.

Prints p50 / p99 / max over every event on every socket and the sending socket's own, for
devhostd and the bare relay, then the verdict as ratios devhostd/bare (absolute times depend on
the machine; 1.0x is as fast as the bare relay).
"""
from __future__ import annotations

# _harness first: gevent patches the process before anything else is imported.
from _harness import (DeliveryError, bare_relay, connect_sinks, devhostd, frames_per_turn,
                      machine_line, run_sinks, send_message, stop_on_sigterm)

import argparse
import sys


def percentile(values: list[int], fraction: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Latencies:
    """Per-event latencies (ns) of every socket and of the sending one, pooled over rounds."""

    def __init__(self):
        self.all: list[int] = []
        self.sender: list[int] = []
        self.wakeups: list[int] = []  # how long after the kernel the sinks read (ns)

    def add(self, sinks, sender, events: int) -> None:
        for sink in sinks:
            stamped = [received - sent for _, sent, received in sink.reader.stamps]
            if len(stamped) != events:
                raise DeliveryError(f"a socket got {len(stamped)} stamped events of {events}")
            self.all += stamped
            if sink is sender:
                self.sender += stamped
            self.wakeups += sink.wakeups

    @staticmethod
    def line(values: list[int]) -> str:
        return (f"p50 {percentile(values, 0.5) / 1e6:7.3f} ms  p99 {percentile(values, 0.99) / 1e6:7.3f} ms  "
                f"max {max(values) / 1e6:7.3f} ms")


def measure_devhostd(into: Latencies, events: int, rate: float, clients: int) -> None:
    with devhostd(events, rate) as daemon:
        session = daemon.create_session()
        daemon.wait_idle(session)
        measure(into, connect_sinks(clients, daemon.port, daemon.host, daemon.chat_path(session), daemon.origin,
                                    frames_per_turn(events), kernel_stamps=True), events, rate)


def measure_bare(into: Latencies, events: int, rate: float, clients: int) -> None:
    with bare_relay(clients, events, rate) as port:
        measure(into, connect_sinks(clients, port, f"127.0.0.1:{port}", "/", None, frames_per_turn(events),
                                    kernel_stamps=True), events, rate)


def measure(into: Latencies, sinks, events: int, rate: float) -> None:
    sender = sinks[-1]  # the bare relay, too, waits for its last socket's message
    try:
        run_sinks(sinks, lambda: send_message(sender.sock), timeout=60 + 3 * events / rate)
        into.add(sinks, sender, events)
    finally:
        for sink in sinks:
            sink.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("events", type=int, nargs="?", default=2000, help="events per turn")
    parser.add_argument("--rate", type=float, default=500.0, help="events a second from the CLI")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="turns of each server, interleaved")
    args = parser.parse_args()
    print(f"{args.rounds} x {args.events} events at {args.rate:g}/s to {args.clients} sockets (the last one sent "
          f"the message); CLI stdout to client socket {machine_line()}")
    results = {"devhostd": Latencies(), "bare": Latencies()}
    for _ in range(args.rounds):  # interleaved, so a busy spell on the machine hits both alike
        measure_devhostd(results["devhostd"], args.events, args.rate, args.clients)
        measure_bare(results["bare"], args.events, args.rate, args.clients)
    for name, result in results.items():
        print(f"  {name:<8} all sockets  {result.line(result.all)}")
        print(f"  {name:<8} sender       {result.line(result.sender)}")
    for name, result in results.items():
        if result.wakeups:
            print(f"  ({name}: the sinks read p50 {percentile(result.wakeups, 0.5) / 1e3:.0f} us, "
                  f"p99 {percentile(result.wakeups, 0.99) / 1e3:.0f} us after the kernel had the data)")
    ours, bare = results["devhostd"], results["bare"]
    print(f"devhostd/bare: all sockets p50 {percentile(ours.all, 0.5) / percentile(bare.all, 0.5):.1f}x, "
          f"p99 {percentile(ours.all, 0.99) / percentile(bare.all, 0.99):.1f}x; "
          f"sender p99 {percentile(ours.sender, 0.99) / percentile(bare.sender, 0.99):.1f}x")


if __name__ == "__main__":
    stop_on_sigterm()
    try:
        main()
    except DeliveryError as error:  # a finding, not a crash: say what went missing
        sys.exit(f"{sys.argv[0]}: {error}")
    except KeyboardInterrupt:  # every process started is stopped by now (the context managers)
        sys.exit(130)

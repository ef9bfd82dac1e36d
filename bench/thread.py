"""What the panel's thread socket costs against the native chat socket, in one run.

    python3 bench/thread.py [frames ...]        (default: 1000 10000 100000)

For each count, a real devhostd runs bench/fake_claude.py as Claude Code, which answers one
message with a turn of ``frames`` text deltas (~365 bytes each, as fast as it writes them):

- native: one chat socket (/__devhost__/ws/chat) on a fresh session, timed from the send until
  it has the turn's last native event (the baseline: every CLI frame, as the CLI wrote it);
- thread: one thread socket (/__devhost__/ws/thread, what the panel reads) on another fresh
  session of the same daemon, timed from the send until the turn's item says it is done: the
  same frames, projected into items (deltas joined for 16 ms) and logged to the chat's disk log.

Each is measured three times, interleaved; the fastest is kept. Prints the seconds of each and
the verdict as a ratio thread/native (1.00x: the panel sees the whole reply as soon as a
native client; 2.00x: twice as late), and how many frames each socket received.
"""
from __future__ import annotations

# _harness first: gevent patches the process before anything else is imported.
from _harness import (connect_sinks, devhostd, frames_per_turn, machine_line, open_websocket,
                      run_sinks, send_message, stop_on_sigterm)

import struct
import sys
import time

DEFAULT_COUNTS = (1_000, 10_000, 100_000)
ROUNDS = 3
DONE = b'"kind":"turn","state":"done"'  # the turn item's end, as the thread socket encodes it


def native(daemon, frames: int) -> tuple[float, int]:
    session = daemon.create_session()
    daemon.wait_idle(session)
    sinks = connect_sinks(1, daemon.port, daemon.host, daemon.chat_path(session), daemon.origin,
                          frames_per_turn(frames))
    try:
        seconds = run_sinks(sinks, lambda: send_message(sinks[0].sock), 60 + frames / 1000)
        return seconds, sinks[0].reader.next_sequence - 1
    finally:
        for sink in sinks:
            sink.close()


def thread(daemon, frames: int) -> tuple[float, int]:
    session = daemon.create_session()
    daemon.wait_idle(session)
    path = f"/__devhost__/ws/thread?sessionId={session}&{daemon.query}"
    sock, buffer = open_websocket(daemon.port, daemon.host, path, daemon.origin)
    buffer = bytearray(buffer)
    try:
        count = 0
        started = time.perf_counter()
        send_message(sock)
        deadline = started + 60 + frames / 1000
        while True:
            count, done = _frames(buffer, count)
            if done:
                return time.perf_counter() - started, count
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the turn did not end on the thread socket ({count} frames)")
            more = sock.recv(1 << 20)
            if not more:
                raise RuntimeError("the thread socket closed")
            buffer += more
    finally:
        sock.close()


def _frames(buffer: bytearray, count: int) -> tuple[int, bool]:
    """Takes the whole frames off the buffer; (frames so far, whether the turn ended)."""
    done = False
    while len(buffer) >= 2:
        length, head = buffer[1] & 0x7F, 2
        if length == 126:
            if len(buffer) < 4:
                break
            length, head = struct.unpack_from("!H", buffer, 2)[0], 4
        elif length == 127:
            if len(buffer) < 10:
                break
            length, head = struct.unpack_from("!Q", buffer, 2)[0], 10
        if len(buffer) < head + length:
            break
        done = done or DONE in buffer[head:head + length]
        del buffer[:head + length]
        count += 1
    return count, done


def main(counts) -> None:
    stop_on_sigterm()
    print(machine_line())
    print(f"{'deltas':>8}  {'native s':>9}  {'thread s':>9}  {'thread/native':>13}  {'frames native':>13}  "
          f"{'frames thread':>13}")
    for frames in counts:
        best = {"native": (float("inf"), 0), "thread": (float("inf"), 0)}
        with devhostd(frames) as daemon:
            for _ in range(ROUNDS):
                for name, measure in (("native", native), ("thread", thread)):
                    run = measure(daemon, frames)
                    if run[0] < best[name][0]:
                        best[name] = run
        (n_s, n_frames), (t_s, t_frames) = best["native"], best["thread"]
        print(f"{frames:>8}  {n_s:>9.3f}  {t_s:>9.3f}  {t_s / n_s:>12.2f}x  {n_frames:>13}  {t_frames:>13}", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or DEFAULT_COUNTS)

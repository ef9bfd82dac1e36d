"""The CliProcess actor: one running CLI, its stdin writer and its output pumps.

It owns the subprocess (in a process group of its own, tagged through its environment so
every descendant can be found again) and tells its owner the decoded stdout frames, in order,
in batches of whatever lines one read brought (``on_cli_frames``), then exactly one
``on_cli_exit``. Upward calls are tells (actors/tell.py): the owner never waits on this actor,
and no future is built per frame.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal

import gevent
import gevent.queue
import orjson
import pykka
from gevent import subprocess

from actors import proctree
from actors.chatlog import daemon_log
from actors.guard import guarded, spawn_logged
from actors.tell import tell

STDERR_TAIL_BYTES = 4096
READ_BYTES = 64 * 1024  # one read of stdout: every complete line in it goes up as one batch
# The longest stdout line taken (one frame: a reply, a tool's output, an image read). A longer
# one is not dropped but ends the CLI with an error: a lost frame could be a result or a
# request the turn then waits on for ever, and the stream has no way to skip to the next frame.
# 64 MiB is four times a page's largest message, as much as devhost resumes of a transcript.
MAX_LINE_BYTES = 64 * 1024 * 1024
EXIT_GRACE = 0.25  # seconds a CLI whose stdin broke has to exit on its own (its exit says more)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: if devhostd is killed outright, the CLI gets SIGKILL too.
    (What the CLI started itself is swept by tag when devhostd next starts.)"""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


# Variables of the daemon's own environment that a CLI never inherits: an agent's shell reads
# its environment, and these would let it act as someone else (the person, another chat).
HIDDEN_FROM_CLI = frozenset({"DEVHOSTD_TOKEN", "DEVHOSTD_CHAT"})


class CliProcess(pykka.ThreadingActor):
    def __init__(self, owner, process_serial: int, argv: list[str], cwd: str, tag: tuple[str, str], label: str,
                 agent_env: dict[str, str] | None = None, session_id: str = ""):
        super().__init__()
        self._agent_env = agent_env or {}
        self._owner = owner  # its chat (a ref or proxy): on_cli_frames / on_cli_exit / on_cli_failed
        # Its link's count at its start (actors/cli_link.py): on everything it tells, so its chat
        # can tell a retired process's last words from the current one's.
        self._process_serial = process_serial
        self._argv = argv
        self._cwd = cwd
        self._tag = tag  # (name, value) for the environment; see proctree.make_tag
        self._label = label
        self.log_subject = f"session {session_id}"  # every daemon line about this CLI names it
        self._proc = None
        self._stderr_tail = b""
        self._terminating = False
        self._exit_reported = False
        self._pumps = []
        self._outgoing = gevent.queue.Queue()
        self._writer = None
        self._stdin_broken = False

    def on_start(self) -> None:
        env = {name: value for name, value in os.environ.items() if name not in HIDDEN_FROM_CLI}
        env[self._tag[0]] = self._tag[1]
        # For `devhostd visual publish` run by the agent: its chat and that chat's token
        # (DEVHOSTD_URL, the control origin, comes from the daemon's own environment).
        env.update(self._agent_env)
        try:
            self._proc = subprocess.Popen(
                self._argv, cwd=self._cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, close_fds=True, preexec_fn=_die_with_parent)
        except OSError as exc:
            self._report_exit(None, f"{exc.strerror or exc}: {self._argv[0]}")
            return
        self._pumps = [spawn_logged(self._pump_stdout), spawn_logged(self._pump_stderr)]
        self._writer = spawn_logged(self._write_stdin)
        spawn_logged(self._wait_for_exit)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @guarded
    def write(self, frames: list[dict]) -> None:
        if self._proc is None or self._terminating or self._stdin_broken:
            self._tell_owner("on_cli_failed", "process", f"{self._label} is not running")
            return
        # Queued for the writer greenlet: a CLI that stops reading stdin (a large image, a busy
        # CLI) must not hold this actor, or a terminate told after it would wait behind the write.
        self._outgoing.put_nowait(b"".join(json.dumps(frame, separators=(",", ":")).encode() + b"\n"
                                           for frame in frames))

    def _write_stdin(self):
        while True:
            data = self._outgoing.get()
            try:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
            except (OSError, ValueError) as exc:
                self._stdin_broken = True
                try:
                    self._proc.wait(timeout=EXIT_GRACE)
                except subprocess.TimeoutExpired:
                    # Alive but no longer reading: nothing written to it can arrive any more.
                    if not self._terminating:
                        self._tell_owner("on_cli_failed", "process", f"could not write to {self._label}: {exc}")
                # (A CLI that exited on its own broke its stdin: its exit is reported, with why.)
                return

    @guarded
    def terminate(self) -> None:
        """Ends the CLI and every process it started; on_cli_exit follows."""
        if self._terminating or self._proc is None:
            return
        self._terminating = True
        spawn_logged(self._terminate)

    def _terminate(self):
        if self._writer is not None:
            self._writer.kill(block=False)  # whatever it was writing, the CLI is being ended
        outcome = proctree.terminate(self._proc, self._tag)
        daemon_log(f"{self._named()} ended: {outcome}")

    def _pump_stdout(self):
        read = self._proc.stdout.read1 if hasattr(self._proc.stdout, "read1") else self._proc.stdout.read
        try:
            self._pump_batches(lambda: read(READ_BYTES))
        except LineTooLong as exc:
            daemon_log(f"{self._label} pid {self._proc.pid} wrote {exc} bytes to stdout without a line break")
            self._tell_owner("on_cli_failed", "protocol",
                             f"{self._label} wrote a line longer than {MAX_LINE_BYTES >> 20} MiB, more than devhost "
                             "reads as one frame")

    def _pump_batches(self, read) -> None:
        for batch in read_line_batches(read, MAX_LINE_BYTES):
            frames = []
            for raw, frame in zip(batch, decode_lines(batch)):
                if frame is None:
                    # Its length and a hash only: such a line can be reply text the log must never
                    # carry; the hash tells whether the same line keeps coming.
                    daemon_log(f"{self._named()} wrote a non-JSON line to stdout "
                               f"({len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()[:12]})")
                    continue
                frames.append((frame, raw))
            if frames:
                self._tell_owner("on_cli_frames", frames)  # after the owner is gone: dropped
            # A CLI flooding stdout must not starve the rest of the hub (its chat included:
            # the batch just told is handled while this pump waits for its turn again).
            gevent.sleep(0)

    def _pump_stderr(self):
        for chunk in iter(lambda: self._proc.stderr.read1(65536) if hasattr(self._proc.stderr, "read1")
                          else self._proc.stderr.read(4096), b""):
            self._stderr_tail = (self._stderr_tail + chunk)[-STDERR_TAIL_BYTES:]

    def _wait_for_exit(self):
        code = self._proc.wait()
        gevent.joinall(self._pumps, timeout=5)
        # The CLI may leave tools behind (e.g. a backgrounded child); nothing it started outlives it.
        if not self._terminating:
            outcome = proctree.terminate(self._proc, self._tag)
            if outcome.sigterm or outcome.sigkill:
                daemon_log(f"{self._named()} left processes behind; ended them: {outcome}")
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - the process has ended; a pipe that fails to close holds nothing
                pass
        self._report_exit(code, self._stderr_tail.decode("utf-8", "replace"))

    def _named(self) -> str:
        return f"{self._label} pid {self._proc.pid} ({self.log_subject})"

    def _tell_owner(self, method: str, *args) -> None:
        # A tell: a chat removed first (a closed session replaced by its resume) is no error.
        tell(self._owner, method, self._process_serial, *args)

    def _report_exit(self, code, stderr_tail):
        if not self._exit_reported:
            self._exit_reported = True
            self._tell_owner("on_cli_exit", code, stderr_tail)
        try:
            self.stop()  # Actor.stop() is a tell: safe from a pump greenlet
        except pykka.ActorDeadError:
            pass  # already stopped by its chat

    def on_stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            # Stopped before the CLI ended (daemon shutdown): end it now, synchronously.
            self._terminating = True
            proctree.terminate(self._proc, self._tag)


class LineTooLong(Exception):
    """A line grew past the bound without its line break; the exception's text is its size so far."""


def read_line_batches(read, max_line: int = MAX_LINE_BYTES):
    """Yields, for each read that completes lines, the list of those lines (stripped, none empty).

    ``read()`` returns what the pipe has now (b"" at its end). A line longer than one read is
    gathered over several, and each byte is searched a bounded number of times, however the
    output is cut into reads. What follows the last
    line break waits for the next read; a last line without one is yielded at the end.
    LineTooLong once a line is over ``max_line`` bytes and still not ended (memory stays bounded).
    """
    pending = bytearray()
    while True:
        data = read()
        if not data:
            break
        start = len(pending)
        pending += data
        cut = pending.rfind(b"\n", start)
        if cut < 0:
            if len(pending) > max_line:
                raise LineTooLong(len(pending))
            continue
        lines = [line for line in bytes(pending[:cut]).split(b"\n") if line.strip()]
        del pending[:cut + 1]
        if lines:
            yield [line.strip() for line in lines]
    if pending.strip():
        yield [bytes(pending).strip()]


def decode_lines(lines: list[bytes]) -> list:
    """The frame each line holds (None for a line that holds no JSON object), in order.

    A batch is parsed as one JSON array, one call for many lines (the calls' overhead was most
    of the parsing), by orjson: four times the standard parser's speed on a CLI's frames
    (bench/relay.py). Only lines that each look like one object (``{`` … ``}``) are joined, and
    the array must have one object per line; anything else, and anything orjson refuses that
    the standard parser takes (NaN, infinity, a lone surrogate), is parsed a line at a
    time by the standard parser, so a frame reads as it always did."""
    if len(lines) > 1 and all(line[:1] == b"{" and line[-1:] == b"}" for line in lines):
        try:
            values = orjson.loads(b"[" + b",".join(lines) + b"]")
        except orjson.JSONDecodeError:
            values = None
        if isinstance(values, list) and len(values) == len(lines) and all(isinstance(v, dict) for v in values):
            return values
    elif len(lines) == 1:
        try:
            value = orjson.loads(lines[0])
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return [value]
    return [_decode(raw) for raw in lines]


def _decode(raw: bytes):
    """The frame a stdout line holds, or None when it holds no JSON object."""
    try:
        frame = json.loads(raw)
    except (ValueError, RecursionError):  # a frame nested past Python's limit is not one we can use
        return None
    return frame if isinstance(frame, dict) else None

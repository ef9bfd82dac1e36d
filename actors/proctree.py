"""Find and end every process a coding-agent CLI started, including the ones that escaped it.

Rule: every process we start, we end. Signalling the CLI's process group is not enough:
Claude Code runs each Bash tool in a new session (pgid = sid = the tool's bash pid), and
a tool may leave a child behind that is reparented to init before we ever stop the CLI.

So a CLI's "tree" is found three ways, on one listing of /proc:

- the ppid chain: every descendant of a known live member (covers children that scrub
  their environment, as long as their parents live);
- a marker variable in the environment (``DEVHOST_PROCESS_TAG``, see `make_tag`), which
  every descendant inherits (covers orphans whose ppid chain is already broken);
- the session / process group of a known live leader (covers env-scrubbed orphans that
  still sit in a tool's session).

A `ProcRef` records a pid together with its start time (field 22 of /proc/<pid>/stat), and
a signal is only sent through a pidfd opened *before* the start time is re-checked, so a
recycled pid is never signalled. Processes are never signalled if they are this process,
one of its ancestors, or in its own process group or session.

Before SIGKILL the tree is frozen with SIGSTOP and re-listed until nothing new appears:
a stopped process can neither fork nor die, so its ppid links stay intact and nothing is
created between the last listing and the kill.

Linux only. Everything here may run in a gevent greenlet: waits use gevent.sleep, and
the /proc scans yield to the hub every few hundred entries.

It is over 400 lines because the rule "every process we start, we end" is one piece: the
listing, the matching, the freezing and the signalling only prove it together.
"""
from __future__ import annotations

import os
import re
import secrets
import signal
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import gevent

TAG_ENV = "DEVHOST_PROCESS_TAG"

_PROC = "/proc"
_DEAD_STATES = frozenset("ZXx")  # zombie, dead: nothing left to signal
_STOPPED_STATES = frozenset("Tt")
_POLL = 0.05
_YIELD_EVERY = 256


# --------------------------------------------------------------------------- pure parsing

@dataclass(frozen=True)
class StatInfo:
    """The fields of /proc/<pid>/stat this module uses."""
    pid: int
    comm: str
    state: str
    ppid: int
    pgid: int
    sid: int
    start_time: int  # clock ticks after boot (field 22)

    @property
    def dead(self) -> bool:
        return self.state in _DEAD_STATES


def parse_stat(data: bytes | str) -> StatInfo:
    """Parse one /proc/<pid>/stat line.

    comm (field 2) is in parentheses and may itself hold spaces, parentheses and bytes
    that are not UTF-8, so it runs from the first '(' to the *last* ')'; the remaining
    fields are split on whitespace after that. Raises ValueError on a malformed line.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    open_at = data.find(b"(")
    close_at = data.rfind(b")")
    if open_at < 0 or close_at < open_at:
        raise ValueError(f"not a /proc stat line: {data[:80]!r}")
    try:
        pid = int(data[:open_at])
        rest = data[close_at + 1:].split()
        # rest[0] is field 3 (state), so field n is rest[n - 3]
        state = rest[0].decode("ascii")
        ppid, pgid, sid = int(rest[1]), int(rest[2]), int(rest[3])
        start_time = int(rest[19])
    except (IndexError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a /proc stat line: {data[:80]!r}") from exc
    comm = data[open_at + 1:close_at].decode("utf-8", "replace")
    return StatInfo(pid, comm, state, ppid, pgid, sid, start_time)


def environ_has(environ: bytes, entry: bytes, *, prefix: bool = False) -> bool:
    """True if a NUL-separated environment block holds `entry` (NAME=value) exactly, or,
    with prefix=True, an entry that starts with it."""
    block = b"\0" + environ
    if prefix:
        return (b"\0" + entry) in block
    if not block.endswith(b"\0"):
        block += b"\0"
    return (b"\0" + entry + b"\0") in block


# --------------------------------------------------------------------------- tags

_instance: tuple[int, str] | None = None
_sequence = 0
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def daemon_tag_prefix() -> str:
    """The prefix of every tag this process hands out: ``<pid>.<random>.`` (renewed after a fork)."""
    global _instance
    if _instance is None or _instance[0] != os.getpid():
        _instance = (os.getpid(), secrets.token_hex(4))
    return f"{_instance[0]}.{_instance[1]}."


def make_tag(session_id: str) -> tuple[str, str]:
    """A fresh (name, value) to put in the environment of one CLI we spawn.

    The value is ``<daemon pid>.<random>.<session id>.<n>``; n makes it unique per spawn,
    so stopping an old CLI of a session can never touch its successor. Characters other
    than letters, digits, '_' and '-' in the session id become '_'.
    """
    global _sequence
    _sequence += 1
    return TAG_ENV, f"{daemon_tag_prefix()}{tag_id(session_id)}.{_sequence}"


def tag_id(session_id: str) -> str:
    """How an id appears in a tag (what the agent scanner reads back from a process)."""
    return _UNSAFE.sub("_", str(session_id))[:64]


def _tag_entry(tag: str | tuple[str, str]) -> bytes:
    name, value = tag if isinstance(tag, tuple) else (TAG_ENV, tag)
    return f"{name}={value}".encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- /proc access

@dataclass(frozen=True)
class ProcRef:
    """One process, identified by pid *and* start time so a recycled pid never matches."""
    pid: int
    start_time: int
    comm: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.pid}({self.comm})" if self.comm else str(self.pid)


def read_stat(pid: int) -> StatInfo | None:
    """The parsed stat of `pid`, or None if it is gone or unreadable."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            return parse_stat(handle.read())
    except (OSError, ValueError):
        return None


def ref_of(pid: int) -> ProcRef | None:
    """A ProcRef for a live `pid`, or None if there is no such (non-zombie) process."""
    st = read_stat(pid)
    if st is None or st.dead:
        return None
    return ProcRef(pid, st.start_time, st.comm)


def is_alive(ref: ProcRef) -> bool:
    """True while the very process `ref` names exists and is not a zombie."""
    st = read_stat(ref.pid)
    return st is not None and st.start_time == ref.start_time and not st.dead


def alive(refs: Iterable[ProcRef]) -> set[ProcRef]:
    return {ref for ref in refs if is_alive(ref)}


_self_start: tuple[int, int] | None = None


def _own_start_time() -> int:
    global _self_start
    pid = os.getpid()
    if _self_start is None or _self_start[0] != pid:
        st = read_stat(pid)
        _self_start = (pid, st.start_time if st else 0)
    return _self_start[1]


def _protected() -> tuple[set[int], int, int]:
    """Pids we never signal (ourselves, our ancestors, init, kthreadd), our pgid, our sid."""
    pids = {0, 1, 2, os.getpid()}
    pid = os.getppid()
    for _ in range(4096):
        if pid <= 1 or pid in pids:
            break
        pids.add(pid)
        st = read_stat(pid)
        if st is None:
            break
        pid = st.ppid
    return pids, os.getpgrp(), os.getsid(0)


def _list_procs() -> dict[int, StatInfo]:
    procs: dict[int, StatInfo] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return procs
    for count, name in enumerate(names, 1):
        if not name.isdigit():
            continue
        st = read_stat(int(name))
        if st is not None and not st.dead and st.ppid != 2:  # ppid 2: kernel threads
            procs[st.pid] = st
        if count % _YIELD_EVERY == 0:
            gevent.sleep(0)
    return procs


@dataclass(frozen=True)
class TagMatch:
    """Which environment entry marks a process as ours: exactly `entry` (NAME=value), or
    any entry starting with it if `prefix`. Only processes of our uid started at or after
    `newer_than` (clock ticks after boot) are ever considered; `_scan` enforces both."""
    entry: bytes
    prefix: bool = False
    newer_than: int = 0

    def __post_init__(self) -> None:
        name = self.entry.partition(b"=")[0]
        if not name or b"=" not in self.entry or b"\0" in self.entry:
            raise ValueError(f"not a NAME=value environment entry: {self.entry!r}")

    @classmethod
    def exact(cls, tag: str | tuple[str, str]) -> "TagMatch":
        # Only a process started after the tag was made can carry it; tags are made by
        # this process, so anything older than it is skipped without a look.
        return cls(_tag_entry(tag), False, _own_start_time())

    @classmethod
    def starting_with(cls, prefix: str, name: str = TAG_ENV, newer_than: int | None = None) -> "TagMatch":
        start = _own_start_time() if newer_than is None else newer_than
        return cls(f"{name}={prefix}".encode("utf-8", "surrogateescape"), True, start)


def _carries(st: StatInfo, match: TagMatch, uid: int) -> bool:
    # Start times tick in 1/100 s, hence < (a process of the same tick is looked at).
    if st.start_time < match.newer_than:
        return False
    try:
        if os.stat(f"{_PROC}/{st.pid}").st_uid != uid:
            return False
        with open(f"{_PROC}/{st.pid}/environ", "rb") as handle:
            return environ_has(handle.read(), match.entry, prefix=match.prefix)
    except OSError:
        return False


def _scan(seeds: Iterable[ProcRef], match: TagMatch | None) -> set[ProcRef]:
    """Every live process reachable from the live `seeds` or carrying `match`, closed
    under "child of", and "member of the session / process group led by" a member."""
    procs = _list_procs()
    protected, own_pgid, own_sid = _protected()
    children: dict[int, list[int]] = {}
    by_sid: dict[int, list[int]] = {}
    by_pgid: dict[int, list[int]] = {}
    for st in procs.values():
        children.setdefault(st.ppid, []).append(st.pid)
        by_sid.setdefault(st.sid, []).append(st.pid)
        by_pgid.setdefault(st.pgid, []).append(st.pid)

    members: set[int] = set()
    for ref in seeds:
        st = procs.get(ref.pid)
        if st is not None and st.start_time == ref.start_time:
            members.add(ref.pid)
    if match is not None:
        uid = os.geteuid()
        for count, st in enumerate(procs.values(), 1):
            if st.pid not in protected and _carries(st, match, uid):
                members.add(st.pid)
            if count % _YIELD_EVERY == 0:
                gevent.sleep(0)
    members -= protected

    queue = list(members)
    while queue:
        st = procs[queue.pop()]
        found = list(children.get(st.pid, ()))
        if st.sid == st.pid and st.pid != own_sid:
            found += by_sid.get(st.pid, ())
        if st.pgid == st.pid and st.pid != own_pgid:
            found += by_pgid.get(st.pid, ())
        for pid in found:
            if pid not in members and pid not in protected:
                members.add(pid)
                queue.append(pid)
    return {ProcRef(pid, procs[pid].start_time, procs[pid].comm) for pid in members}


def find_tree(root_pid: int, tag: str | tuple[str, str] | None = None) -> set[ProcRef]:
    """The root (if alive), its descendants by the ppid chain, and every process of our
    uid whose environment holds `tag` (a value of TAG_ENV, or a (name, value) pair),
    together with the members of sessions and process groups led by any of those.
    Vanished or unreadable processes are skipped silently."""
    root = ref_of(root_pid)
    return _scan([root] if root else [], TagMatch.exact(tag) if tag else None)


def find_tagged(prefix: str, *, name: str = TAG_ENV, newer_than: int | None = None) -> set[ProcRef]:
    """Every process of our uid whose `name` variable starts with `prefix`, with its
    descendants and session / group members. By default only processes started after
    this one are looked at (pass newer_than=0 to look at all)."""
    return _scan((), TagMatch.starting_with(prefix, name, newer_than))


# --------------------------------------------------------------------------- signalling

_GONE = -1
_NO_PIDFD = -2


def _open_pidfd(pid: int) -> int:
    """A pidfd for `pid`, or _GONE, or _NO_PIDFD (old kernel: fall back to kill(2))."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return _GONE
    except (AttributeError, OSError):
        return _NO_PIDFD


def signal_tree(refs: Iterable[ProcRef], sig: int) -> int:
    """Send `sig` to every process of `refs` that is still the process the ref names.

    The process group of a ref is signalled too when that ref leads it, or when its pgid
    is the pid of another ref (a tool's group whose leader already died); never our own
    group. Gone processes and permission errors are ignored. Returns how many processes
    were signalled (group members that are not refs are not counted).
    """
    refs = sorted(set(refs), key=lambda ref: (ref.start_time, ref.pid))  # parents first
    ref_pids = {ref.pid for ref in refs}
    protected, own_pgid, _ = _protected()
    groups_done: set[int] = set()
    sent = 0
    for ref in refs:
        if ref.pid in protected:
            continue
        fd = _open_pidfd(ref.pid)
        if fd == _GONE:
            continue
        try:
            # The pidfd was opened first: if the start time still matches now, the fd is
            # that very process, whatever happens to the pid number afterwards.
            st = read_stat(ref.pid)
            if st is None or st.start_time != ref.start_time or st.dead:
                continue
            pgid = st.pgid
            if (pgid > 1 and pgid != own_pgid and pgid not in groups_done
                    and (pgid == ref.pid or pgid in ref_pids)):
                groups_done.add(pgid)
                try:
                    os.killpg(pgid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                if fd == _NO_PIDFD:
                    os.kill(ref.pid, sig)
                else:
                    signal.pidfd_send_signal(fd, sig)
                sent += 1
            except (ProcessLookupError, PermissionError):
                pass
        finally:
            if fd >= 0:
                os.close(fd)
    return sent


def _wait_gone(refs: set[ProcRef], timeout: float, reap: Callable[[], object] | None = None) -> set[ProcRef]:
    """Wait up to `timeout` s for all of `refs` to end; returns those still alive."""
    deadline = _now() + timeout
    while True:
        if reap is not None:
            reap()
        left = alive(refs)
        remaining = deadline - _now()
        if not left or remaining <= 0:
            return left
        gevent.sleep(min(_POLL, remaining))


def _now() -> float:
    return time.monotonic()


def freeze_and_kill(refs: Iterable[ProcRef], match: TagMatch | None = None,
                    *, settle: float = 0.5, max_rounds: int = 50) -> set[ProcRef]:
    """SIGSTOP `refs` and everything reachable from them (or matched by `match`), re-list
    until no new process appears, then SIGKILL them all. Returns the processes killed."""
    stopped: set[ProcRef] = set()
    try:
        for _ in range(max_rounds):
            new = (_scan(stopped | set(refs), match) | alive(refs)) - stopped
            if not new:
                break
            signal_tree(new, signal.SIGSTOP)
            stopped |= new
            _wait_stopped(new, settle)
    finally:
        # Runs even if the greenlet is killed mid-way: nothing stays stopped.
        signal_tree(stopped, signal.SIGKILL)
    return stopped


def _wait_stopped(refs: set[ProcRef], timeout: float) -> None:
    """Give a just-stopped process a moment to actually stop (a process in D state may
    not); bounded, because SIGKILL follows anyway."""
    deadline = _now() + timeout
    while _now() < deadline:
        pending = False
        for ref in refs:
            st = read_stat(ref.pid)
            if st is not None and st.start_time == ref.start_time and not st.dead \
                    and st.state not in _STOPPED_STATES:
                pending = True
                break
        if not pending:
            return
        gevent.sleep(0.01)


# --------------------------------------------------------------------------- stop policy

@dataclass
class TerminateResult:
    """What `terminate` did, for the log."""
    pid: int
    exit_code: int | None = None   # as Popen.returncode: negative = killed by that signal
    ended_by: str = "unknown"      # eof | sigterm | sigkill | already | unknown
    sigterm: int = 0               # processes sent SIGTERM (CLI included)
    sigkill: int = 0               # processes sent SIGKILL (CLI included, sweep included)
    swept: int = 0                 # of those, found only by the last sweep by tag
    survivors: tuple[ProcRef, ...] = ()  # still alive at the end: a bug, log it loudly

    def __str__(self) -> str:
        text = (f"pid {self.pid} exit={self.exit_code} by={self.ended_by} "
                f"term={self.sigterm} kill={self.sigkill} swept={self.swept}")
        if self.survivors:
            text += " SURVIVORS=" + ",".join(map(str, self.survivors))
        return text


class _Root:
    """The CLI process: a Popen (gevent or stdlib) or a bare pid."""

    def __init__(self, proc) -> None:
        self.popen = None if isinstance(proc, int) else proc
        self.pid = proc if isinstance(proc, int) else proc.pid
        self.ref = ref_of(self.pid)
        self.exit_code: int | None = None

    def poll(self) -> bool:
        """True once the root has ended (and is reaped, if it is our child)."""
        if self.exit_code is not None:
            return True
        if self.popen is not None:
            self.exit_code = self.popen.poll()
            return self.exit_code is not None
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.exit_code = os.waitstatus_to_exitcode(status)
                return True
        except ChildProcessError:  # not our child, or reaped elsewhere
            pass
        return self.ref is None or not is_alive(self.ref)

    def wait(self, timeout: float) -> bool:
        deadline = _now() + timeout
        while not self.poll():
            remaining = deadline - _now()
            if remaining <= 0:
                return False
            gevent.sleep(min(_POLL, remaining))
        return True


def terminate(proc, tag: str | tuple[str, str] | None, *, stdin_grace: float = 3.0,
              term_grace: float = 2.0, kill_grace: float = 2.0) -> TerminateResult:
    """End a CLI and everything it started, politely first. Safe to run in a greenlet.

    `proc` is the gevent.subprocess.Popen (started with start_new_session=True) or a pid;
    `tag` the value (or (name, value)) from `make_tag` that its environment carries.

    1. close its stdin (if we hold it) and wait up to `stdin_grace` s for it to exit;
    2. snapshot the tree, SIGTERM (+SIGCONT) the CLI, its group and every process of the
       tree; wait up to `term_grace` s for all of them;
    3. freeze what is left (re-listing, so children created meanwhile are included, as is
       everything of the earlier snapshots) and SIGKILL it;
    4. sweep once more by tag for stragglers (e.g. a double-forked daemon), kill them;
    5. reap the CLI (waiting up to `kill_grace` s) and report the survivors, if any.

    A tree that was already empty gets no signal at all. If the calling greenlet is killed
    meanwhile, everything known so far is SIGKILLed before the exception goes on.
    """
    root = _Root(proc)
    result = TerminateResult(root.pid)
    match = TagMatch.exact(tag) if tag else None
    seeds = {root.ref} if root.ref else set()
    # Snapshot before anything ends: it remembers descendants that scrub their environment
    # and would be orphaned (reparented away from the CLI) when the CLI exits.
    known = _scan(seeds, match) | seeds
    try:
        _terminate(root, result, match, known, stdin_grace, term_grace, kill_grace)
    except BaseException:
        freeze_and_kill(alive(known), match)
        raise
    return result


def _terminate(root: _Root, result: TerminateResult, match: TagMatch | None, known: set[ProcRef],
               stdin_grace: float, term_grace: float, kill_grace: float) -> None:

    if root.poll():
        result.ended_by = "already"
    else:
        stdin = getattr(root.popen, "stdin", None)
        if stdin is not None:
            try:
                stdin.close()
            except (OSError, ValueError):
                pass
        if root.wait(stdin_grace):
            result.ended_by = "eof"

    known |= _scan(alive(known), match)
    live = alive(known)
    if live:
        result.sigterm = signal_tree(live, signal.SIGTERM)
        signal_tree(live, signal.SIGCONT)  # a stopped process only acts on TERM once continued
        left = _wait_gone(known, term_grace, root.poll)
        if result.ended_by == "unknown" and root.poll():
            result.ended_by = "sigterm"
        if left:
            killed = freeze_and_kill(left, match)
            result.sigkill = len(killed)
            known |= killed
            if result.ended_by == "unknown" and root.ref in killed:
                result.ended_by = "sigkill"

    # Last sweep by tag: anything that appeared late (a daemon double-forked away by a
    # process we just killed) but still carries the tag. When nothing was signalled, the scan
    # above, made after the CLI ended, already saw every process carrying the tag: /proc is
    # listed twice, not three times (it is a quarter of a 200-chat shutdown).
    if match is not None and (result.sigterm or result.sigkill):
        stragglers = freeze_and_kill((), match)
        result.swept = len(stragglers)
        result.sigkill += len(stragglers)
        known |= stragglers

    root.wait(kill_grace)
    result.survivors = tuple(sorted(_wait_gone(known, kill_grace, root.poll), key=lambda r: r.pid))
    result.exit_code = root.exit_code
    if result.ended_by == "unknown" and root.poll():
        result.ended_by = "sigkill" if result.sigkill else "sigterm"


def sweep_tag_prefix(prefix: str | None = None, *, name: str = TAG_ENV,
                     newer_than: int | None = None, grace: float = 2.0) -> list[ProcRef]:
    """Safety net for daemon shutdown: SIGKILL every process whose `name` variable starts
    with `prefix` (default: every tag this process handed out), with its descendants.

    Returns what it found (sorted by pid); anything in it is a process some stop path
    missed, which the caller should log as a bug. Waits up to `grace` s for them to end.
    """
    if prefix is None:
        prefix = daemon_tag_prefix()
    found = freeze_and_kill((), TagMatch.starting_with(prefix, name, newer_than))
    _wait_gone(found, grace)
    return sorted(found, key=lambda ref: ref.pid)


def sweep_orphans_of_dead_daemons() -> list[ProcRef]:
    """At start-up: end what an earlier devhostd left behind when it was killed (SIGKILL gives
    it no chance to clean up). Tagged processes whose daemon pid no longer runs are ended, with
    their descendants; a live daemon's processes, and other users', are never touched."""
    prefixes = set()
    uid = os.getuid()
    entry = f"{TAG_ENV}=".encode()
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"{_PROC}/{name}").st_uid != uid:
                continue
            with open(f"{_PROC}/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(entry):
                parts = item[len(entry):].decode("utf-8", "replace").split(".")
                if len(parts) >= 2 and parts[0].isdigit() and not _pid_alive(int(parts[0])):
                    prefixes.add(f"{parts[0]}.{parts[1]}.")
    killed: set[ProcRef] = set()
    for prefix in prefixes:
        killed |= freeze_and_kill((), TagMatch.starting_with(prefix, newer_than=0))
    return sorted(killed, key=lambda ref: ref.pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

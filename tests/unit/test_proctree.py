"""actors.proctree against real processes (sh, setsid, sleep); nothing of it is mocked.

Every spawned process also carries PROCTREE_TEST_MARK=<random> (kept even where a test
scrubs the environment), and the `procs` fixture kills whatever still carries it with
code that does not use the module under test, so a failing test leaves nothing behind.
No assertion is about timing: waits for readiness have generous deadlines and only fail
the test if something never happens.
"""
import os
import secrets
import shutil
import signal
import time

import gevent
import gevent.subprocess as gsp
import pytest

from actors import proctree
from actors.proctree import ProcRef, StatInfo, parse_stat

MARK_ENV = "PROCTREE_TEST_MARK"


# --------------------------------------------------------------------------- helpers
# Deliberately independent of actors.proctree, so the clean-up still works when it is broken.

def _raw_stat(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    return {"state": fields[0].decode(), "ppid": int(fields[1]), "pgid": int(fields[2]),
            "sid": int(fields[3]), "start": int(fields[19])}


def _running(pid, start=None):
    st = _raw_stat(pid)
    return st is not None and st["state"] not in "ZXx" and (start is None or st["start"] == start)


def _pids_with(entry: bytes):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                env = b"\0" + handle.read()
        except OSError:
            continue
        if b"\0" + entry + b"\0" in env + b"\0" and _running(int(name)):
            found.append(int(name))
    return found


def _children_of(pid):
    return [int(name) for name in os.listdir("/proc")
            if name.isdigit() and (_raw_stat(name) or {}).get("ppid") == pid]


def _wait_for(predicate, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        gevent.sleep(0.02)


def _pid_file(path):
    _wait_for(lambda: path.exists() and path.read_text().strip(), f"{path.name} written")
    return int(path.read_text().strip())


class Procs:
    def __init__(self, tmp_path):
        self.dir = tmp_path
        self.mark = secrets.token_hex(8)
        self.popens = []

    def env(self, tag):
        env = dict(os.environ)
        env[MARK_ENV] = self.mark
        env.pop(proctree.TAG_ENV, None)
        if tag is not None:
            name, value = tag
            env[name] = value
        return env

    def spawn(self, args, tag, *, stdin=gsp.PIPE):
        if isinstance(args, str):
            args = ["sh", "-c", args]
        popen = gsp.Popen(args, env=self.env(tag), cwd=self.dir, stdin=stdin,
                          stdout=gsp.DEVNULL, stderr=gsp.DEVNULL, start_new_session=True)
        self.popens.append(popen)
        return popen

    def cleanup(self):
        entry = f"{MARK_ENV}={self.mark}".encode()
        for _ in range(20):
            pids = _pids_with(entry)
            if not pids:
                break
            for pid in pids:
                st = _raw_stat(pid)
                try:
                    if st and st["pgid"] == pid and pid != os.getpgrp():
                        os.killpg(pid, signal.SIGKILL)
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            gevent.sleep(0.05)
        for popen in self.popens:
            try:
                popen.kill()
            except OSError:
                pass
            try:
                popen.wait(timeout=10)
            except Exception:  # noqa: BLE001 - clean-up: the test's own outcome stands
                pass
            for stream in (popen.stdin,):
                if stream is not None:
                    try:
                        stream.close()
                    except Exception:  # noqa: BLE001 - clean-up: the test's own outcome stands
                        pass


@pytest.fixture
def procs(tmp_path):
    tracker = Procs(tmp_path)
    try:
        yield tracker
    finally:
        tracker.cleanup()


# --------------------------------------------------------------------------- pure parsing

@pytest.mark.parametrize("comm", ["sleep", "a b", "a) b", "(x", ")", "((", ") S 1 2 3 (", ""])
def test_parse_stat_odd_comm(comm):
    tail = "S 41 42 43 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10"
    info = parse_stat(f"1234 ({comm}) {tail}\n")
    assert info == StatInfo(pid=1234, comm=comm, state="S", ppid=41, pgid=42, sid=43,
                            start_time=987654)


def test_parse_stat_bytes_not_utf8():
    info = parse_stat(b"7 (\xff) x) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0\n")
    assert (info.pid, info.state, info.ppid, info.start_time) == (7, "Z", 1, 55)
    assert info.comm.endswith(") x") and info.dead


@pytest.mark.parametrize("line", ["", "garbage", "12 (x) S 1 2", "x (y) S 1 2 3 " + "0 " * 20,
                                  "12 )x( S " + "1 " * 25])
def test_parse_stat_rejects_malformed(line):
    with pytest.raises(ValueError):
        parse_stat(line)


def test_read_stat_of_a_real_process_with_odd_name(procs):
    odd = procs.dir / "x) (y z"
    shutil.copy(shutil.which("sleep"), odd)
    popen = procs.spawn([str(odd), "1000"], None)
    info = proctree.read_stat(popen.pid)
    assert info is not None
    assert info.comm == "x) (y z"
    assert (info.ppid, info.pgid, info.sid) == (os.getpid(), popen.pid, popen.pid)
    assert info.start_time == _raw_stat(popen.pid)["start"]


def test_environ_has():
    block = b"A=1\0DEVHOST_PROCESS_TAG=12.ab.s.1\0B=2\0"
    assert proctree.environ_has(block, b"DEVHOST_PROCESS_TAG=12.ab.s.1")
    assert not proctree.environ_has(block, b"DEVHOST_PROCESS_TAG=12.ab.s.")
    assert proctree.environ_has(block, b"DEVHOST_PROCESS_TAG=12.ab.", prefix=True)
    assert not proctree.environ_has(block, b"DEVHOST_PROCESS_TAG=1.ab.", prefix=True)
    assert not proctree.environ_has(b"XDEVHOST_PROCESS_TAG=12.ab.s.1\0",
                                    b"DEVHOST_PROCESS_TAG=12.ab.s.1")
    assert proctree.environ_has(b"DEVHOST_PROCESS_TAG=v", b"DEVHOST_PROCESS_TAG=v")


def test_make_tag_is_unique_and_carries_the_daemon_prefix():
    name, first = proctree.make_tag("sess/1 x")
    _, second = proctree.make_tag("sess/1 x")
    prefix = proctree.daemon_tag_prefix()
    assert name == proctree.TAG_ENV
    assert first != second
    assert first.startswith(prefix) and second.startswith(prefix)
    assert prefix.startswith(f"{os.getpid()}.") and prefix.endswith(".")
    assert first[len(prefix):].startswith("sess_1_x.")


# --------------------------------------------------------------------------- real trees

TREE = """
setsid sh -c 'trap "" TERM; echo $$ > a.pid; exec sleep 1000' &
setsid env -i {mark}={value} sh -c 'trap "" TERM; echo $$ > b.pid; sleep 1000; :' &
sleep 1000
"""


def test_terminate_ends_setsid_grandchildren_that_ignore_sigterm(procs):
    tag = proctree.make_tag("tree")
    bystander = procs.spawn(["sleep", "1000"], proctree.make_tag("bystander"))
    cli = procs.spawn(TREE.format(mark=MARK_ENV, value=procs.mark), tag)
    a_pid = _pid_file(procs.dir / "a.pid")
    b_pid = _pid_file(procs.dir / "b.pid")  # b scrubbed its environment: no tag
    _wait_for(lambda: _children_of(b_pid), "b's sleep started")

    tree = proctree.find_tree(cli.pid, tag[1])
    pids = {ref.pid for ref in tree}
    assert {cli.pid, a_pid, b_pid} <= pids
    assert _raw_stat(a_pid)["sid"] == a_pid and _raw_stat(b_pid)["sid"] == b_pid
    assert bystander.pid not in pids and os.getpid() not in pids
    b_children = _children_of(b_pid)
    assert b_children and set(b_children) <= pids, "found by the ppid chain, without the tag"

    result = proctree.terminate(cli, tag[1], stdin_grace=0.2, term_grace=0.5)

    assert [ref for ref in tree if _running(ref.pid, ref.start_time)] == []
    assert _pids_with(f"{tag[0]}={tag[1]}".encode()) == []
    assert result.survivors == ()
    assert result.sigterm >= 4 and result.sigkill >= 2  # a and b (and b's sleep) ignore TERM
    assert cli.returncode is not None and result.exit_code == cli.returncode
    assert result.ended_by in ("sigterm", "sigkill")
    assert _running(bystander.pid), "a process of another tag is left alone"


def test_orphan_carrying_the_tag_is_found_and_killed(procs):
    tag = proctree.make_tag("orphan")
    cli = procs.spawn("setsid sh -c 'trap \"\" TERM; echo $$ > o.pid; sleep 1000; :' &", tag)
    cli.wait(timeout=30)
    orphan = _pid_file(procs.dir / "o.pid")
    _wait_for(lambda: _raw_stat(orphan)["ppid"] != cli.pid, "orphan reparented")

    tree = proctree.find_tree(cli.pid, tag[1])
    assert orphan in {ref.pid for ref in tree}
    start = _raw_stat(orphan)["start"]

    result = proctree.terminate(cli, tag[1], term_grace=0.5)

    assert not _running(orphan, start)
    assert _pids_with(f"{tag[0]}={tag[1]}".encode()) == []
    assert result.ended_by == "already" and result.exit_code == 0
    assert result.sigkill >= 1 and result.survivors == ()


def test_late_double_forked_daemon_is_swept_by_tag(procs):
    # On SIGTERM the "CLI" starts a TERM-ignoring daemon in its own session and exits: it
    # appears after every snapshot, so only the last sweep by tag can find it.
    tag = proctree.make_tag("late")
    script = ("trap 'setsid sh -c \"trap \\\"\\\" TERM; sleep 1000; :\" & exit 0' TERM; "
              "echo ready > ready; sleep 1000 & wait")
    cli = procs.spawn(script, tag)
    _wait_for(lambda: (procs.dir / "ready").exists(), "script ready")

    result = proctree.terminate(cli, tag[1], stdin_grace=0.2, term_grace=30)

    assert _pids_with(f"{tag[0]}={tag[1]}".encode()) == []
    assert result.swept >= 1 and result.survivors == ()
    assert result.ended_by == "sigterm" and cli.returncode == 0


def test_process_ending_on_stdin_eof_gets_no_signal(procs):
    tag = proctree.make_tag("eof")
    cli = procs.spawn(["cat"], tag)
    result = proctree.terminate(cli, tag[1], stdin_grace=60)
    assert result.ended_by == "eof"
    assert (result.sigterm, result.sigkill, result.swept) == (0, 0, 0)
    assert result.exit_code == 0 and cli.returncode == 0


def test_terminate_by_pid_without_popen(procs):
    tag = proctree.make_tag("bypid")
    cli = procs.spawn(["sleep", "1000"], tag)
    result = proctree.terminate(cli.pid, tag[1], stdin_grace=0, term_grace=10)
    assert result.sigterm == 1 and result.survivors == ()
    assert cli.wait(timeout=30) == -signal.SIGTERM


def test_terminate_does_not_block_the_hub(procs):
    tag = proctree.make_tag("hub")
    cli = procs.spawn("trap '' TERM; sleep 1000; :", tag)
    _wait_for(lambda: any(r.pid != cli.pid for r in proctree.find_tree(cli.pid, tag[1])),
              "sleep started")
    ticks = []

    def tick():
        while True:
            ticks.append(1)
            gevent.sleep(0.01)

    ticker = gevent.spawn(tick)
    try:
        result = gevent.spawn(proctree.terminate, cli, tag[1], stdin_grace=0.2,
                              term_grace=0.2).get(timeout=60)
    finally:
        ticker.kill()
    assert ticks, "another greenlet ran while terminate() waited"
    assert result.sigkill >= 1 and result.survivors == ()


def test_stale_ref_is_never_signalled(procs):
    victim = procs.spawn(["sleep", "1000"], None)  # a group leader: killpg would hit it too
    ref = proctree.ref_of(victim.pid)
    assert ref == ProcRef(victim.pid, _raw_stat(victim.pid)["start"])
    for other_start in (ref.start_time - 1, ref.start_time + 1):
        impostor = ProcRef(victim.pid, other_start)  # same pid, another process's lifetime
        assert proctree.signal_tree([impostor], signal.SIGKILL) == 0
        assert not proctree.is_alive(impostor)
    assert _running(victim.pid, ref.start_time)
    assert victim.poll() is None

    assert proctree.signal_tree([ref], signal.SIGKILL) == 1
    assert victim.wait(timeout=30) == -signal.SIGKILL
    assert proctree.signal_tree([ref], signal.SIGKILL) == 0  # gone: nothing is sent


def test_signal_tree_never_hits_this_process_or_its_group():
    me = proctree.ref_of(os.getpid())
    assert proctree.signal_tree([me], signal.SIGTERM) == 0  # still here to assert it


def test_sweep_tag_prefix_kills_only_its_own_tags(procs):
    prefix = f"{proctree.daemon_tag_prefix()}sweep{secrets.token_hex(4)}."
    ours = (proctree.TAG_ENV, prefix + "s.1")
    theirs = (proctree.TAG_ENV, f"1.ffff.{prefix}s.1")
    cli = procs.spawn("setsid sh -c 'echo $$ > o.pid; sleep 1000; :' &", ours)
    cli.wait(timeout=30)
    orphan = _pid_file(procs.dir / "o.pid")
    start = _raw_stat(orphan)["start"]
    other = procs.spawn(["sleep", "1000"], theirs)

    found = proctree.sweep_tag_prefix(prefix)

    assert orphan in {ref.pid for ref in found}
    assert not _running(orphan, start)
    assert _running(other.pid), "a tag outside the prefix is left alone"
    assert proctree.sweep_tag_prefix(prefix) == []


def test_tag_scans_never_consider_processes_older_than_us(procs):
    # Read-only: find_tagged signals nothing. An empty prefix matches every devhost tag,
    # yet nothing started before this process (the "daemon") can be in the answer.
    tag = proctree.make_tag("young")
    young = procs.spawn(["sleep", "1000"], tag)
    own_start = _raw_stat(os.getpid())["start"]
    found = proctree.find_tagged("")
    assert young.pid in {ref.pid for ref in found}
    assert all(ref.start_time >= own_start for ref in found)
    assert proctree.find_tagged("", newer_than=_raw_stat(young.pid)["start"] + 10**9) == set()


@pytest.mark.parametrize("entry", [b"", b"=x", b"NOEQUALS", b"A=b\0c"])
def test_tag_match_rejects_malformed_entries(entry):
    with pytest.raises(ValueError):
        proctree.TagMatch(entry)


def test_killing_the_terminating_greenlet_still_ends_the_tree(procs):
    tag = proctree.make_tag("interrupted")
    cli = procs.spawn("trap '' TERM; sleep 1000; :", tag)
    _wait_for(lambda: len(proctree.find_tree(cli.pid, tag[1])) >= 2, "sleep started")
    tree = proctree.find_tree(cli.pid, tag[1])
    worker = gevent.spawn(proctree.terminate, cli, tag[1], stdin_grace=600)
    _wait_for(lambda: cli.stdin.closed, "terminate() closed stdin")  # now it waits for EOF
    worker.kill(block=True, timeout=60)
    # SIGKILL was sent before kill() returned; the kernel finishes the deaths a moment later.
    _wait_for(lambda: not [ref for ref in tree if _running(ref.pid, ref.start_time)], "the tree to end")
    assert cli.wait(timeout=30) == -signal.SIGKILL

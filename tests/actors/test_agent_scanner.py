"""The AgentScanner actor in-process, over real process trees and real transcript layouts.

Claude Code and Codex are the real CLIs against the tests' mock model servers; pi and
OpenCode are processes named as theirs (copies of /bin/sleep, so /proc shows the same comm)
with sessions written where and how the reference recorded them.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import uuid

import gevent
import pytest

from actors.agent_scanner import AgentScanner
from tests.agent_fakes import (FIXTURES, Agents, ClaudeRun, append_jsonl, claude_registry, claude_transcript,
                               claude_record, opencode_db, opencode_insert, opencode_rows, pi_header, pi_message,
                               pi_session_path)
from tests.mock_anthropic import MockAnthropic, text_reply, tool_use_reply
from tests.mock_openai import MockOpenAI
from tests.sinks import Sink
from tests.mock_openai import text_reply as openai_text
from tests.peers import CODEX, codex_env, require_peers


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def agents(tmp_path):
    started = Agents(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


@pytest.fixture
def work(tmp_path):
    (tmp_path / "work" / "sub").mkdir(parents=True)
    return tmp_path / "work"


@pytest.fixture
def home(tmp_path):
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def scanner():
    """A scanner on a clock the test moves: scans are shared until the test says five seconds passed."""
    clock = Clock()
    ref = AgentScanner.start(clock=clock)
    try:
        yield ref.proxy(), clock
    finally:
        ref.stop(timeout=10)


@pytest.fixture
def live():
    """A scanner on the real clock, polling streams often."""
    ref = AgentScanner.start(tick_seconds=0.1, rescan_seconds=0.3)
    try:
        yield ref.proxy()
    finally:
        ref.stop(timeout=10)


def _rows(proxy, directory, clock=None):
    if clock is not None:
        clock.now += 10  # older than five seconds: scan again
    return proxy.agents(str(directory)).get(timeout=30)


def _wait_rows(proxy, clock, directory, predicate, what, timeout=60):
    last = []  # what the scanner said last, for the failure's message
    try:
        with gevent.Timeout(timeout):
            while True:
                found = _rows(proxy, directory, clock)
                last = [row for row, _ in found["rows"]]
                if predicate(last):
                    return found
                gevent.sleep(0.2)
    except gevent.Timeout:
        seen = [(r["harness"], r.get("subdirectory"), r["state"]) for r in last]
        raise AssertionError(f"never saw {what} in {timeout} s; the last rows were {seen}") from None


def test_pi_and_opencode_processes_are_listed_with_state_name_and_subdirectory(scanner, agents, work, home):
    proxy, clock = scanner
    pi = agents.fake("pi", work / "sub", home)
    session = pi_session_path(home, work / "sub")
    append_jsonl(session, pi_header(work / "sub"), pi_message("user", text="q"), pi_message("assistant", text="a"),
                 {"type": "session_info", "name": "Pi task"})
    idle_pi = agents.fake("pi", work, home)  # no session file yet: nothing to read
    opencode = agents.fake("opencode", work, home)
    db = opencode_db(home)
    rows = opencode_rows("tui-permission-approved.db-rows.jsonl", work)
    pending = json.loads((FIXTURES / "opencode" / "part-while-permission-pending.json").read_text())["data"]
    for row in rows:  # the session began now, and its first step holds a tool behind a prompt
        if row["table"] == "session":
            row["time_created"] = row["time_updated"] = int(time.time() * 1000)
        if row["table"] == "message" and row["id"] == "msg_22ca8a86d001W6xnRCYqFoHah9":
            row["table"] = "skip"
        if row["table"] == "message" and row["id"] == "msg_22ca8881f0013Nm3g5CkbZMx1L":
            row["data"]["time"].pop("completed", None)
            row["data"].pop("finish", None)
            row["time_created"] = int(time.time() * 1000)
        if row["table"] == "part" and row["id"] == "prt_22ca89e2b001BAqSnXiCYV0cww":
            row["data"] = pending
    opencode_insert(db, [row for row in rows if row["table"] != "skip"])

    found = _rows(proxy, work)
    by_harness = {(row["harness"], row["subdirectory"]): row for row, _ in found["rows"]}
    assert set(by_harness) == {("pi", "sub"), ("pi", "."), ("opencode", ".")}
    assert by_harness[("pi", "sub")]["state"] == "idle" and by_harness[("pi", "sub")]["name"] == "Pi task"
    assert by_harness[("pi", ".")]["state"] == "unknown"
    assert by_harness[("opencode", ".")]["state"] == "waiting"
    assert by_harness[("opencode", ".")]["name"] == "Mock title"
    assert [row["state"] for row, _ in found["rows"]] == ["waiting", "unknown", "idle"]
    assert all(not row["isOwned"] for row, _ in found["rows"])
    # Only the directory asked for, and below it.
    assert [row["harness"] for row, _ in _rows(proxy, work / "sub", clock)["rows"]] == ["pi"]
    for proc in (pi, idle_pi, opencode):
        agents.stop(proc)
    assert _rows(proxy, work, clock)["rows"] == []


def test_requests_within_five_seconds_share_one_scan(scanner, agents, work, home):
    proxy, clock = scanner
    first = _rows(proxy, work)
    scans = proxy.scans().get(timeout=10)
    agents.fake("pi", work, home)
    clock.now += 4.9
    assert _rows(proxy, work) == first  # the same scan: the new agent is not in it
    assert proxy.scans().get(timeout=10) == scans
    clock.now += 0.2
    assert [row["harness"] for row, _ in _rows(proxy, work)["rows"]] == ["pi"]
    assert proxy.scans().get(timeout=10) == scans + 1
    # Requests arriving together wait for one scan and share it.
    clock.now += 10
    futures = [proxy.agents(str(work)) for _ in range(5)]
    answers = [future.get(timeout=30) for future in futures]
    assert all(answer == answers[0] for answer in answers)
    assert proxy.scans().get(timeout=10) == scans + 2


def test_only_top_level_agents_are_rows(scanner, agents, work, home, tmp_path):
    proxy, clock = scanner
    # A "claude" (a bash renamed) whose tool starts another claude and a pi: the nested
    # claude is no row; the pi is top-level for its own harness.
    agents.executable("claude-child", "/bin/sleep")
    inner = agents.executable("claude", "/bin/sleep")
    outer = agents.bin / "outer" / "claude"
    outer.parent.mkdir()
    outer.write_bytes(open("/bin/bash", "rb").read())
    outer.chmod(0o755)
    pi_bin = agents.executable("pi")
    script = f"{inner} 3600 & {pi_bin} 3600 & wait"
    agents.start([outer, "-c", script], work, {"HOME": str(home), "PATH": "/usr/bin:/bin"})
    found = _wait_rows(proxy, clock, work, lambda rows: len(rows) >= 2, "the outer claude and the pi")
    assert sorted(row["harness"] for row, _ in found["rows"]) == ["claude-code", "pi"]


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process needs root")
def test_other_users_agents_are_skipped(scanner, agents, work, home):
    proxy, clock = scanner
    shared = tempfile.mkdtemp(prefix="devhost-other-user-")
    try:
        os.chmod(shared, 0o755)
        other = os.path.join(shared, "pi")
        shutil.copy("/bin/sleep", other)
        os.chmod(other, 0o755)
        proc = agents.start([other, "3600"], work, {"HOME": shared, "PATH": "/usr/bin:/bin"}, user=65534)
        agents.fake("opencode", work, home)
        from tests.agent_fakes import wait_for_comm
        wait_for_comm(proc.pid, "pi")
        assert [row["harness"] for row, _ in _rows(proxy, work)["rows"]] == ["opencode"]
    finally:
        agents.stop_all()
        shutil.rmtree(shared, ignore_errors=True)


def test_an_unreadable_store_is_named_and_the_others_still_listed(scanner, agents, work, home):
    proxy, clock = scanner
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database " * 1000)
    agents.fake("opencode", work, home)
    agents.fake("pi", work / "sub", home)
    found = _rows(proxy, work)
    assert "opencode could not be scanned" in found["error"]
    assert str(home) not in found["error"]
    assert sorted((row["harness"], row["state"]) for row, _ in found["rows"]) == [("opencode", "unknown"),
                                                                                  ("pi", "unknown")]


def test_a_claude_registry_of_a_fake_process_and_a_stale_one(scanner, agents, work, home):
    proxy, clock = scanner
    busy = agents.fake("claude", work, home)
    session = str(uuid.uuid4())
    claude_registry(home, busy.pid, session, work, status="busy")
    append_jsonl(claude_transcript(home, work, session), claude_record("user", text="go", cwd=str(work)))
    stale = agents.fake("claude", work / "sub", home)
    claude_registry(home, stale.pid, str(uuid.uuid4()), work / "sub", status="waiting", procStart="1")
    rows = {row["subdirectory"]: row for row, _ in _rows(proxy, work)["rows"]}
    assert rows["."]["state"] == "working" and rows["sub"]["state"] == "unknown"


# --------------------------------------------------------------------------- the real CLIs

@pytest.fixture
def anthropic():
    server = MockAnthropic()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai():
    server = MockOpenAI()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.peers  # starts both CLIs itself, through no fixture
def test_real_claude_waiting_on_an_approval_and_codex_working_in_order(scanner, agents, work, home, tmp_path,
                                                                       anthropic, openai):
    require_peers("claude", "codex")
    proxy, clock = scanner
    anthropic.add(tool_use_reply("Bash", {"command": "touch approved.txt", "description": "Create a file"}),
                  text_reply("done"))
    run = ClaudeRun(agents, tmp_path / "claude-home", work / "sub", anthropic.url)
    openai.add(openai_text(*["word "] * 600, delay=0.2))  # two minutes of words: it works throughout
    env = codex_env(tmp_path / "codex-home", openai.url, project_dirs=(work,))
    codex = agents.start([CODEX, "exec", "--skip-git-repo-check", "write many words"], work, env,
                         stdout=gevent.subprocess.DEVNULL, stderr=gevent.subprocess.DEVNULL)
    agents.fake("pi", work, home)  # unknown: no session yet
    idle = agents.fake("pi", work / "sub", home)
    session = pi_session_path(home, work / "sub")
    append_jsonl(session, pi_header(work / "sub"), pi_message("user", text="q"), pi_message("assistant", text="a"))

    _wait_rows(proxy, clock, work, lambda rows: any(r["harness"] == "claude-code" and r["state"] == "idle"
                                                    for r in rows), "claude idle before its prompt")
    run.send("please make the file")
    request = run.wait_for(lambda f: f.get("type") == "control_request", what="a permission request")
    found = _wait_rows(proxy, clock, work,
                       lambda rows: [r["state"] for r in rows] == ["waiting", "working", "unknown", "idle"],
                       "waiting, working, unknown, idle")
    rows = [row for row, _ in found["rows"]]
    assert [(r["harness"], r["subdirectory"]) for r in rows] == [
        ("claude-code", "sub"), ("codex", "."), ("pi", "."), ("pi", "sub")]
    assert all(set(r) <= {"key", "harness", "state", "name", "subdirectory", "lastActivity", "isOwned"}
               for r in rows)

    run.allow(request)
    run.wait_for(lambda f: f.get("type") == "result", what="the turn's result")
    assert (work / "sub" / "approved.txt").exists()
    _wait_rows(proxy, clock, work, lambda rows: any(r["harness"] == "claude-code" and r["state"] == "idle"
                                                    for r in rows), "claude idle after the turn")
    agents.stop(codex)
    agents.stop(idle)


# --------------------------------------------------------------------------- activity

def test_the_stream_follows_agents_from_the_moment_it_opens(live, agents, work, home):
    proxy = live
    agents.fake("pi", work / "sub", home)
    path = pi_session_path(home, work / "sub")
    append_jsonl(path, pi_header(work / "sub"), pi_message("user", text="history before the stream"))
    sink = Sink()
    watch_id = proxy.watch(str(work), sink).get(timeout=30)
    append_jsonl(path, pi_message("assistant", tool="bash", arguments={"command": "make test"}),
                 pi_message("toolResult", text="é" * 5000, tool="bash"),
                 pi_message("assistant", text="All green."))
    sink.wait_for(lambda m: m["eventType"] == "turn_end", what="the turn's end")
    assert [(m["eventType"], m.get("toolName")) for m in sink.frames] == [
        ("tool_call", "bash"), ("tool_result", "bash"), ("turn_end", None)]
    assert sink.frames[0]["text"] == "make test" and sink.frames[0]["harness"] == "pi"
    assert len(sink.frames[1]["text"].encode()) <= 4096 and sink.frames[1]["text"].endswith("…")
    assert all(m["pid"] == sink.frames[0]["pid"] for m in sink.frames)

    # An agent that resumes an old session after the stream opened replays it.
    old = pi_session_path(home, work, began_ms=1_700_000_000_000)
    append_jsonl(old, pi_header(work, began_ms=1_700_000_000_000), pi_message("user", text="old question"),
                 pi_message("assistant", text="old answer"))
    resumed = agents.fake("pi", work, home)
    append_jsonl(old, pi_message("user", text="continuing"))  # written since it started: its session
    sink.wait_for(lambda m: m.get("text") == "continuing", what="the resumed session")
    replay = [m for m in sink.frames if m["pid"] == resumed.pid]
    assert [(m["eventType"], m.get("text")) for m in replay] == [
        ("run_started", "."), ("turn_start", "old question"), ("turn_end", "old answer"), ("turn_start", "continuing")]

    agents.stop(resumed)
    sink.wait_for(lambda m: m["eventType"] == "run_exited" and m["pid"] == resumed.pid, what="run_exited")
    proxy.unwatch(watch_id)
    assert proxy.watching().get(timeout=10) == 0
    count = len(sink.frames)
    append_jsonl(path, pi_message("user", text="after the stream closed"))
    gevent.sleep(0.5)
    assert len(sink.frames) == count


def test_a_closed_sink_stops_its_watching(live, work):
    proxy = live
    sink = Sink()
    proxy.watch(str(work), sink).get(timeout=30)
    sink.closed = True
    with gevent.Timeout(10, AssertionError("the watch was never dropped")):
        while proxy.watching().get(timeout=10):
            gevent.sleep(0.1)

"""A whole scan over a laid-out /proc and real store layouts (every harness, errors, ownership)."""
from __future__ import annotations

import json
import os
import shutil
import time

from actors.agents import claude as claude_mod
from actors.agents.rows import Found
from actors.agents.scan import Scanner
from tests.agent_fakes import (FIXTURES, append_jsonl, claude_record, iso, opencode_db, opencode_insert,
                               opencode_rows, pi_header, pi_message, pi_session_path)
from tests.unit.agents.test_procs import _proc_entry


class Layout:
    def __init__(self, tmp_path):
        self.proc = tmp_path / "proc"
        self.proc.mkdir()
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.work = tmp_path / "work"
        (self.work / "sub").mkdir(parents=True)
        self.now = int(time.time() * 1000)
        self.ticks = int((time.time() - _boot()) * os.sysconf("SC_CLK_TCK"))  # "now" in clock ticks

    def process(self, pid, comm, cwd, argv=None, ppid=1, env=None, ticks_ago=100):
        env_block = b"".join(f"{k}={v}".encode() + b"\0" for k, v in {"HOME": str(self.home), **(env or {})}.items())
        return _proc_entry(self.proc, pid, comm, ppid, str(cwd), argv=argv or (comm,), env=env_block,
                           start=self.ticks - ticks_ago)

    def scan(self, **options):
        return Scanner(proc=str(self.proc), uid=os.geteuid(), **options).scan()


def _boot():
    with open("/proc/stat") as handle:
        for line in handle:
            if line.startswith("btime "):
                return float(line.split()[1])


def _by_pid(result):
    return {row.pid: row for row in result.agents}


def test_claude_from_its_registry_and_transcript(tmp_path):
    lay = Layout(tmp_path)
    lay.process(100, "claude", lay.work)
    sessions = lay.home / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    entry = json.loads((FIXTURES / "claude-code" / "sessions-pid-json" / "03-waiting.json").read_text())
    entry.update(pid=100, procStart=str(lay.ticks - 100), cwd=str(lay.work), sessionId="sid-1")
    (sessions / "100.json").write_text(json.dumps(entry))
    (sessions / "100.0123abcd.key").write_text("secret")  # never read
    transcript = lay.home / ".claude" / "projects" / claude_mod.slug(str(lay.work)) / "sid-1.jsonl"
    transcript.parent.mkdir(parents=True)
    append_jsonl(transcript, claude_record("user", text="hi", ms=lay.now - 1000))
    lay.process(101, "claude", lay.work / "sub")  # no registry, no transcript yet
    lay.process(102, "claude", lay.work)
    stale = dict(entry, pid=102, procStart="12")  # a reused pid's leftover file
    (sessions / "102.json").write_text(json.dumps(stale))
    result = lay.scan()
    rows = _by_pid(result)
    assert rows[100].state == "waiting" and rows[100].session_id == "sid-1"
    assert rows[100].transcript == str(transcript) and rows[100].last_activity >= lay.now - 1000
    assert rows[101].state == "unknown" and rows[101].transcript is None
    assert rows[102].session_id is None and rows[102].state == "unknown"
    assert result.errors == {}


def _rollout(lay, thread, cwd, *records, parent=None, day="2026/11/30"):
    folder = lay.home / ".codex" / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-30T13-30-07-{thread}.jsonl"
    meta = {"id": thread, "cwd": str(cwd), "timestamp": iso(lay.now), "source": "exec", "originator": "codex_exec"}
    if parent:
        meta["parent_thread_id"] = parent
    append_jsonl(path, {"timestamp": iso(lay.now), "type": "session_meta", "payload": meta}, *records)
    return path


def _working():
    return {"timestamp": iso(), "type": "event_msg", "payload": {"type": "task_started"}}


def _done():
    return {"timestamp": iso(), "type": "event_msg", "payload": {"type": "task_complete", "last_agent_message": "ok"}}


def test_codex_threads_from_open_rollouts(tmp_path):
    lay = Layout(tmp_path)
    # codex exec: node wrapper 200 -> native 201, which holds the rollout (and a subagent's).
    lay.process(200, "node", lay.work, argv=("node", "/p/.bin/codex", "exec", "hi"))
    native = lay.process(201, "codex", lay.work, argv=("/v/codex", "exec", "hi"), ppid=200)
    main = _rollout(lay, "t-exec", lay.work, _working())
    sub = _rollout(lay, "t-sub", lay.work, _working(), parent="t-exec")
    os.symlink(main, native / "fd" / "5")
    os.symlink(sub, native / "fd" / "6")
    # An app-server (an IDE's) with two threads: one row each, in each thread's folder.
    server = lay.process(210, "codex", lay.work, argv=("/v/codex", "app-server"))
    os.symlink(_rollout(lay, "t-a", lay.work / "sub", _done()), server / "fd" / "5")
    os.symlink(_rollout(lay, "t-b", lay.work, _working()), server / "fd" / "6")
    lay.process(211, "codex", lay.work, argv=("/v/codex", "app-server"))  # no thread yet: not an agent
    # The TUI's managed daemon holds its threads; the TUI in the same folder gets its thread.
    daemon = lay.process(220, "codex", lay.work, argv=("/r/codex", "app-server", "--listen", "unix://",
                                                       "--managed-daemon"))
    os.symlink(_rollout(lay, "t-tui", lay.work / "sub", _working()), daemon / "fd" / "5")
    os.symlink(_rollout(lay, "t-left-idle", lay.work, _done()), daemon / "fd" / "6")
    os.symlink(_rollout(lay, "t-left-busy", lay.work, _working()), daemon / "fd" / "7")
    lay.process(230, "codex", lay.work / "sub", argv=("/v/codex",))
    (lay.home / ".codex" / "session_index.jsonl").write_text(json.dumps({"id": "t-tui", "thread_name": "Named"}) + "\n")
    result = lay.scan()
    rows = {(row.pid, row.thread or row.session_id): row for row in result.agents}
    assert set(rows) == {(200, "t-exec"), (210, "t-a"), (210, "t-b"), (220, "t-left-busy"), (230, "t-tui")}
    rows[(200, "")], rows[(230, "")] = rows[(200, "t-exec")], rows[(230, "t-tui")]
    assert rows[(200, "")].session_id == "t-exec" and rows[(200, "")].state == "working"
    assert rows[(210, "t-a")].cwd == str(lay.work / "sub") and rows[(210, "t-a")].state == "idle"
    assert rows[(230, "")].session_id == "t-tui" and rows[(230, "")].name == "Named"
    assert result.errors == {}


def test_pi_and_opencode_by_folder_and_start_time(tmp_path):
    lay = Layout(tmp_path)
    lay.process(300, "pi", lay.work / "sub", ticks_ago=500)
    lay.process(301, "pi", lay.work / "sub", ticks_ago=100)
    older = pi_session_path(lay.home, lay.work / "sub", began_ms=lay.now - 4000)
    append_jsonl(older, pi_header(lay.work / "sub", began_ms=lay.now - 4000),
                 pi_message("user", text="working on it", ms=lay.now - 3000))
    newer = pi_session_path(lay.home, lay.work / "sub", began_ms=lay.now - 500)
    append_jsonl(newer, pi_header(lay.work / "sub", began_ms=lay.now - 500), pi_message("user", text="q"),
                 pi_message("assistant", text="a"), {"type": "session_info", "name": "Named pi"})
    lay.process(310, "opencode", lay.work)
    db = opencode_db(lay.home)
    opencode_insert(db, opencode_rows("run-mode-session.db-rows.jsonl", lay.work,
                                      shift_ms=lay.now - 1796045547000))
    rows = _by_pid(lay.scan())
    assert (rows[300].state, rows[300].transcript) == ("working", str(older))
    assert (rows[301].state, rows[301].transcript, rows[301].name) == ("idle", str(newer), "Named pi")
    assert rows[310].state == "idle" and rows[310].name == "Mock title"
    assert rows[310].source == (str(db), "ses_dd357d838ffeW3SKEdpB4C42gW")


def test_an_unreadable_store_is_named_beside_what_the_others_found(tmp_path):
    lay = Layout(tmp_path)
    lay.process(400, "opencode", lay.work)
    db = lay.home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    lay.process(401, "pi", lay.work)
    lay.process(402, "claude", lay.work)
    (lay.home / ".claude").mkdir()
    (lay.home / ".claude" / "sessions").write_text("a file where a folder belongs")
    result = lay.scan()
    assert set(result.errors) == {"opencode", "claude-code"}
    assert "opencode could not be scanned" in result.error_text()
    assert str(lay.home) not in result.error_text()  # no paths in what a page reads
    rows = _by_pid(result)
    assert rows[401].state == "unknown" and rows[400].state == "unknown" and rows[402].state == "unknown"


def test_a_harness_whose_scanner_fails_does_not_hide_the_others(tmp_path, monkeypatch):
    lay = Layout(tmp_path)
    lay.process(500, "pi", lay.work)
    lay.process(501, "opencode", lay.work)

    def broken(*args, **kwargs):
        raise RuntimeError("bug")
    monkeypatch.setattr("actors.agents.opencode.find", broken)
    result = lay.scan()
    assert [row.pid for row in result.agents] == [500]
    assert result.errors["opencode"] == "its scanner failed; the daemon's log says why"  # no details on a page


def test_owned_agents_are_this_daemons_tagged_children(tmp_path):
    lay = Layout(tmp_path)
    lay.process(600, "claude", lay.work, ppid=4242, env={"DEVHOST_PROCESS_TAG": "4242.ab12.chat0001.3"})
    lay.process(601, "claude", lay.work, ppid=9999, env={"DEVHOST_PROCESS_TAG": "4242.ab12.chat0002.1"})
    lay.process(602, "claude", lay.work, ppid=4242, env={"DEVHOST_PROCESS_TAG": "7777.ffff.chat0003.1"})
    lay.process(603, "claude", lay.work, ppid=4242, env={"DEVHOST_PROCESS_TAG": "4242.ab12.models.9"})
    rows = _by_pid(lay.scan(owner_pid=4242, tag_prefix="4242.ab12."))
    assert rows[600].chat == "chat0001"
    assert rows[601].chat is None  # tagged, but a descendant of something else
    assert rows[602].chat is None  # another daemon's
    assert rows[603].chat is None  # the harness catalog's model listing


def test_caches_keep_a_second_scan_cheap_and_follow_growth(tmp_path):
    lay = Layout(tmp_path)
    lay.process(700, "pi", lay.work)
    path = pi_session_path(lay.home, lay.work, began_ms=lay.now)
    append_jsonl(path, pi_header(lay.work, began_ms=lay.now), pi_message("user", text="go"))
    scanner = Scanner(proc=str(lay.proc), uid=os.geteuid())
    assert scanner.scan().agents[0].state == "working"
    append_jsonl(path, pi_message("assistant", text="done"))
    assert scanner.scan().agents[0].state == "idle"
    shutil.rmtree(lay.proc / "700")
    assert scanner.scan().agents == []


def test_an_app_server_keeps_its_key_when_its_first_thread_appears(tmp_path):
    lay = Layout(tmp_path)
    server = lay.process(240, "codex", lay.work, argv=("/v/codex", "app-server"))
    os.symlink(_rollout(lay, "t-first", lay.work, _working()), server / "fd" / "5")
    [row] = lay.scan().agents
    threadless = Found("codex", 240, row.start_time, str(lay.work))
    assert row.key == threadless.key  # the key the row had before its first turn
    lay.now += 1000
    os.symlink(_rollout(lay, "t-second", lay.work, _working()), server / "fd" / "6")
    rows = {row.session_id: row for row in lay.scan().agents}
    assert rows["t-first"].key == threadless.key and rows["t-second"].key != threadless.key


def test_a_new_codex_tui_does_not_get_an_older_tuis_thread(tmp_path):
    lay = Layout(tmp_path)
    daemon = lay.process(250, "codex", lay.work, argv=("/r/codex", "app-server", "--listen", "unix://",
                                                       "--managed-daemon"), ticks_ago=20000)
    now = lay.now
    lay.now = now - 60_000  # the thread began a minute ago, under another TUI (gone or elsewhere)
    os.symlink(_rollout(lay, "t-old", lay.work, _working()), daemon / "fd" / "5")
    lay.now = now
    lay.process(251, "codex", lay.work, argv=("/v/codex",), ticks_ago=100)  # started a second ago
    lay.process(252, "codex", lay.work / "sub", argv=("/v/codex", "resume", "t-old"), ticks_ago=100)
    rows = _by_pid(lay.scan())
    assert rows[251].session_id is None and rows[251].transcript is None
    assert rows[252].session_id == "t-old"

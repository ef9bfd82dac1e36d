"""Process classification, the top-level rule, and one /proc pass over a laid-out /proc."""
from __future__ import annotations

import os

import pytest

from actors.agents import procs


@pytest.mark.parametrize("comm, argv, expected", [
    ("claude", (), ("claude-code", "cli")),
    ("claude.exe", (), ("claude-code", "cli")),
    ("node", ("node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"), ("claude-code", "cli")),
    ("node", ("node", "/x/.bin/codex", "exec", "hi"), ("codex", "exec")),
    ("codex", ("/v/bin/codex", "exec", "--skip-git-repo-check", "hi"), ("codex", "exec")),
    ("codex", ("/v/bin/codex",), ("codex", "tui")),
    ("codex", ("/v/bin/codex", "-m", "gpt", "fix the tests"), ("codex", "tui")),
    ("codex", ("/v/bin/codex", "resume", "0199"), ("codex", "tui")),
    ("codex", ("/v/bin/codex", "app-server"), ("codex", "app-server")),
    ("codex", ("/r/bin/codex", "app-server", "--listen", "unix://", "--managed-daemon"), ("codex", "daemon")),
    ("codex", ("/r/bin/codex", "app-server", "daemon", "pid-update-loop"), ("codex", "daemon")),
    ("codex", ("/v/bin/codex", "login"), None),
    ("codex", ("/v/bin/codex", "-c", "x=1", "mcp-server"), None),
    ("codex-linux-san", ("codex-linux-sandbox",), None),
    ("pi", ("pi",), ("pi", "cli")),
    ("opencode", (), ("opencode", "cli")),
    ("node", ("node", "/srv/app.js"), None),
    ("node", ("node",), None),
    ("bash", ("bash",), None),
])
def test_classify(comm, argv, expected):
    assert procs.classify(comm, argv) == expected


def test_only_script_hosts_and_codex_need_their_command_line():
    assert procs.needs_argv("node") and procs.needs_argv("codex") and procs.needs_argv("bun")
    assert not procs.needs_argv("claude") and not procs.needs_argv("pi") and not procs.needs_argv("bash")


def test_top_level_folds_the_codex_wrapper_and_hides_agents_started_by_agents():
    harness_of = {10: "codex", 11: "codex", 20: "claude-code", 22: "claude-code", 30: "pi", 40: "codex"}
    parent_of = {10: 1, 11: 10, 20: 1, 21: 20, 22: 21, 30: 21, 40: 21, 41: 40}
    tops = procs.top_level(harness_of, parent_of)
    # codex wrapper 10 -> native 11: one agent with both; claude 22 runs under claude 20's tool
    # shell 21: not a row, not a member (its fds are its own); pi and codex under claude are
    # top-level for their own harness.
    assert tops == {10: [10, 11], 20: [20], 30: [30], 40: [40]}


def test_top_level_survives_a_loop_in_broken_parent_links():
    tops = procs.top_level({5: "pi", 6: "pi"}, {5: 6, 6: 5})
    assert sorted(pid for members in tops.values() for pid in members) == [5, 6]


def test_environment_keeps_only_the_variables_scanners_need():
    block = b"HOME=/h\0SECRET=x\0CODEX_HOME=/c\0BROKEN\0CLAUDE_CONFIG_DIR=/a=b\0"
    assert procs.environment(block) == {"HOME": "/h", "CODEX_HOME": "/c", "CLAUDE_CONFIG_DIR": "/a=b"}


def test_argv_and_deleted_working_directories():
    assert procs.parse_argv(b"node\0/x/codex\0exec\0") == ("node", "/x/codex", "exec")
    assert procs.clean_cwd("/tmp/gone (deleted)") == "/tmp/gone"


def _proc_entry(root, pid, comm, ppid, cwd, argv=(), env=b"HOME=/h\0", start=100, uid=None):
    folder = root / str(pid)
    folder.mkdir()
    (folder / "stat").write_text(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                                 f"{start} 1 1 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0")
    (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (folder / "environ").write_bytes(env)
    os.symlink(cwd, folder / "cwd")
    (folder / "fd").mkdir()
    if uid is not None:
        os.chown(folder, uid, -1)
    return folder


def test_one_pass_skips_vanished_unreadable_and_other_users_processes(tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    _proc_entry(proc, 100, "pi", 1, "/w/a", argv=("pi",))
    _proc_entry(proc, 101, "opencode", 1, "/w/b (deleted)")
    broken = _proc_entry(proc, 102, "pi", 1, "/w/c")
    (broken / "environ").unlink()
    (broken / "environ").mkdir()  # reading it fails: skipped, not fatal
    (proc / "103").mkdir()  # vanished between listing and reading: no stat
    _proc_entry(proc, 104, "bash", 1, "/w")
    (proc / "self").mkdir()
    if os.geteuid() == 0:
        _proc_entry(proc, 105, "pi", 1, "/w/d", uid=65534)
    table = procs.read_table(str(proc))
    assert set(table.procs) >= {100, 101, 102, 104}
    found = procs.find_agents(table, str(proc), uid=os.geteuid())
    assert [(a.pid, a.harness, a.cwd) for a in sorted(found, key=lambda a: a.pid)] == [
        (100, "pi", "/w/a"), (101, "opencode", "/w/b")]
    assert table.skipped >= 2
    assert found[0].env == {"HOME": "/h"}


def test_open_files_lists_absolute_targets_only(tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    folder = _proc_entry(proc, 7, "codex", 1, "/w", argv=("codex", "exec"))
    os.symlink("/home/u/.codex/sessions/2026/01/01/rollout-x.jsonl", folder / "fd" / "3")
    os.symlink("socket:[123]", folder / "fd" / "4")
    assert procs.open_files(7, str(proc)) == ["/home/u/.codex/sessions/2026/01/01/rollout-x.jsonl"]
    assert procs.open_files(8, str(proc)) == []

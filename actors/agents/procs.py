"""One pass over /proc: which processes are coding agents, and which of them are top-level.

How each harness looks (measured; samples in tests/fixtures/transcripts/):

| harness | comm | or a script run by node/bun whose argv[1] is |
|---|---|---|
| claude-code | ``claude``, ``claude.exe`` (native; re-execs itself as claude.exe) | ``…/@anthropic-ai/claude-code/cli.js``, ``…/claude`` |
| codex | ``codex`` (native child of the npm wrapper) | ``…/codex``, ``…/codex.js`` |
| pi | ``pi`` (node sets ``process.title``; argv is overwritten) | ``…/pi`` |
| opencode | ``opencode``, ``opencode.exe`` (native) | ``…/opencode`` |

An agent process is *top-level* when no ancestor is a process of the same harness: that folds
the codex wrapper and its native child into one agent and hides agents started by agents.

The pure part (``classify``, ``codex_role``, ``top_level``, ``environment``) takes values;
the reading part (``read_table``, ``inspect``) reads /proc, skips what vanished or what it may
not read, and yields to the hub every few hundred entries.
"""  # noqa: E501 - a table row is one line
from __future__ import annotations

import os
from dataclasses import dataclass, field

import gevent

from actors.proctree import parse_stat

PROC = "/proc"
YIELD_EVERY = 256

CLAUDE_COMMS = frozenset({"claude", "claude.exe"})
CODEX_COMMS = frozenset({"codex", "codex.exe", "codex-tui", "codex-cli"})
PI_COMMS = frozenset({"pi", "pi.exe"})
OPENCODE_COMMS = frozenset({"opencode", "opencode.exe"})
SCRIPT_HOSTS = frozenset({"node", "nodejs", "bun"})

# Codex subcommands that run no agent (login, completions, an MCP server for another client…).
_CODEX_NOT_AGENTS = frozenset({"login", "logout", "mcp", "mcp-server", "completion", "debug", "apply", "a",
                               "sandbox", "cloud", "features", "help", "proto", "responses-api-proxy",
                               "stdio-to-uds", "generate-ts", "generate-json-schema", "update"})
_CODEX_VALUE_FLAGS = frozenset({"-c", "--config", "-m", "--model", "-p", "--profile", "-C", "--cd", "-s",
                                "--sandbox", "-a", "--ask-for-approval", "-i", "--image", "--enable",
                                "--disable", "--add-dir", "--local-provider", "--remote", "--listen"})

# What a scanner needs from an agent's environment (its *initial* environment, as /proc has it).
ENV_KEYS = frozenset({
    "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CODEX_SESSIONS_DIR", "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR", "XDG_DATA_HOME", "OPENCODE_DB_PATH", "OPENCODE_DB", "DEVHOST_PROCESS_TAG",
})


# --------------------------------------------------------------------------- pure

def needs_argv(comm: str) -> bool:
    """Whether ``classify`` needs the command line to decide about a process named ``comm``."""
    return comm in SCRIPT_HOSTS or comm in CODEX_COMMS


def classify(comm: str, argv: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """(harness, role) of a process, or None when it is no agent. Roles: ``cli`` for every
    harness but codex, whose roles are ``exec``, ``tui``, ``app-server`` (a stdio server, e.g.
    an IDE's or devhost's own chat) and ``daemon`` (the managed app-server of Codex's TUI)."""
    if comm in CLAUDE_COMMS:
        return "claude-code", "cli"
    if comm in CODEX_COMMS:
        role = codex_role(argv[1:])
        return ("codex", role) if role else None
    if comm in PI_COMMS:
        return "pi", "cli"
    if comm in OPENCODE_COMMS:
        return "opencode", "cli"
    if comm in SCRIPT_HOSTS and len(argv) >= 2:
        script = argv[1]
        base = os.path.basename(script)
        if "@anthropic-ai/claude-code/" in script or base == "claude":
            return "claude-code", "cli"
        if base in ("codex", "codex.js"):
            role = codex_role(argv[2:])
            return ("codex", role) if role else None
        if base == "pi" or "/pi-coding-agent/" in script:
            return "pi", "cli"
        if base == "opencode" or "/opencode-ai/" in script:
            return "opencode", "cli"
    return None


def codex_role(args) -> str | None:
    """The role of a codex process from its arguments (argv without the program)."""
    args = list(args)
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in _CODEX_VALUE_FLAGS:
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        if arg == "app-server":
            rest = args[index + 1:]
            return "daemon" if "--managed-daemon" in rest or "daemon" in rest else "app-server"
        if arg in ("exec", "e"):
            return "exec"
        if arg in _CODEX_NOT_AGENTS:
            return None
        return "tui"  # resume, fork, or a prompt
    return "tui"


def top_level(harness_of: dict[int, str], parent_of: dict[int, int]) -> dict[int, list[int]]:
    """Top-level agent pid -> its members: itself, then the processes of the same harness in an
    unbroken chain below it (the codex wrapper's native child). Agents of a harness found
    further down (an agent started by an agent's tool) are neither rows nor members."""
    tops: dict[int, list[int]] = {}
    chained: dict[int, int] = {}
    for pid, harness in harness_of.items():
        top, current, seen = pid, parent_of.get(pid), {pid}
        while current and current > 1 and current not in seen:
            seen.add(current)
            if harness_of.get(current) == harness:
                top = current
            current = parent_of.get(current)
        if top == pid:
            tops.setdefault(pid, [])
        elif harness_of.get(parent_of.get(pid)) == harness:
            chained[pid] = top
    for pid in sorted(chained):
        # Only an unbroken chain of the same harness counts (wrapper -> native child).
        current, ok = pid, True
        while current != chained[pid]:
            current = parent_of.get(current)
            if harness_of.get(current) != harness_of[pid]:
                ok = False
                break
        if chained[pid] not in tops:
            tops[pid] = []  # parent links that loop (a pid reused mid-pass): on its own
        elif ok:
            tops[chained[pid]].append(pid)
    return {pid: [pid, *members] for pid, members in tops.items()}


def environment(block: bytes, keys=ENV_KEYS) -> dict[str, str]:
    """The wanted variables of a NUL-separated environment block."""
    found = {}
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep:
            key = name.decode("utf-8", "replace")
            if key in keys:
                found[key] = value.decode("utf-8", "surrogateescape")
    return found


def parse_argv(block: bytes) -> tuple[str, ...]:
    parts = block.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return tuple(p.decode("utf-8", "surrogateescape") for p in parts)


def clean_cwd(link: str) -> str:
    return link[:-len(" (deleted)")] if link.endswith(" (deleted)") else link


# --------------------------------------------------------------------------- reading /proc

@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    comm: str
    start_time: int  # clock ticks after boot (field 22 of stat)


@dataclass
class AgentProcess:
    """A top-level agent process, with what its harness scanner needs."""
    harness: str
    role: str
    pid: int
    ppid: int
    start_time: int
    cwd: str
    argv: tuple[str, ...]
    env: dict[str, str]
    members: tuple[int, ...]
    start_ms: int = 0
    children: int = 0  # live child processes
    member_roles: dict[int, str] = field(default_factory=dict)


@dataclass
class Table:
    procs: dict[int, Proc]
    skipped: int = 0  # entries that vanished or could not be read


def read_table(proc: str = PROC) -> Table:
    """Every process's stat, one pass; zombies and kernel threads are left out."""
    table = Table({})
    try:
        entries = os.listdir(proc)
    except OSError:
        return table
    for count, name in enumerate(entries, 1):
        if count % YIELD_EVERY == 0:
            gevent.sleep(0)
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat", "rb") as handle:
                st = parse_stat(handle.read())
        except (OSError, ValueError):
            table.skipped += 1
            continue
        if st.dead or st.ppid == 2 or st.pid == 2:
            continue
        table.procs[st.pid] = Proc(st.pid, st.ppid, st.comm, st.start_time)
    return table


def read_argv(pid: int, proc: str = PROC) -> tuple[str, ...]:
    with open(f"{proc}/{pid}/cmdline", "rb") as handle:
        return parse_argv(handle.read())


def find_agents(table: Table, proc: str = PROC, uid: int | None = None) -> list[AgentProcess]:
    """The top-level agent processes of ``uid`` (default: ours), inspected. Processes of other
    users, and processes that vanish or cannot be read midway, are skipped (and counted)."""
    uid = os.geteuid() if uid is None else uid
    harness_of: dict[int, str] = {}
    roles: dict[int, str] = {}
    argvs: dict[int, tuple[str, ...]] = {}
    for count, p in enumerate(table.procs.values(), 1):
        if count % YIELD_EVERY == 0:
            gevent.sleep(0)
        argv: tuple[str, ...] = ()
        if needs_argv(p.comm):
            try:
                argv = read_argv(p.pid, proc)
            except OSError:
                table.skipped += 1
                continue
        found = classify(p.comm, argv)
        if found:
            harness_of[p.pid], roles[p.pid] = found
            argvs[p.pid] = argv
    parent_of = {p.pid: p.ppid for p in table.procs.values()}
    children: dict[int, int] = {}
    for p in table.procs.values():
        children[p.ppid] = children.get(p.ppid, 0) + 1
    agents = []
    for pid, members in top_level(harness_of, parent_of).items():
        p = table.procs[pid]
        try:
            if os.stat(f"{proc}/{pid}").st_uid != uid:
                table.skipped += 1
                continue
            cwd = clean_cwd(os.readlink(f"{proc}/{pid}/cwd"))
            with open(f"{proc}/{pid}/environ", "rb") as handle:
                env = environment(handle.read())
            argv = argvs[pid] or read_argv(pid, proc)
        except OSError:
            table.skipped += 1
            continue
        agents.append(AgentProcess(
            harness=harness_of[pid], role=roles[pid], pid=pid, ppid=p.ppid, start_time=p.start_time, cwd=cwd, argv=argv,
            env=env, members=tuple(members), start_ms=start_ms(p.start_time), children=children.get(pid, 0),
            member_roles={m: roles[m] for m in members}))
    return agents


def open_files(pid: int, proc: str = PROC) -> list[str]:
    """Paths of the files a process holds open (empty when it cannot be read)."""
    found = []
    try:
        fds = os.listdir(f"{proc}/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"{proc}/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/"):
            found.append(target)
    return found


def is_alive(pid: int, start_time: int, proc: str = PROC) -> bool:
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            st = parse_stat(handle.read())
    except (OSError, ValueError):
        return False
    return st.start_time == start_time and not st.dead


_boot: float | None = None
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def boot_time() -> float:
    global _boot
    if _boot is None:
        _boot = 0.0
        try:
            with open(f"{PROC}/stat", "rb") as handle:
                for line in handle:
                    if line.startswith(b"btime "):
                        _boot = float(line.split()[1])
                        break
        except OSError:
            pass
    return _boot


def start_ms(start_time: int) -> int:
    """A process's start as Unix milliseconds."""
    return int((boot_time() + start_time / _TICKS) * 1000)

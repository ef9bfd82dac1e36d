"""The stack manifest (``devhost.toml``): stack name, routed services, chat settings.

Only the daemon's operator writes this file; nothing a browser sends ever reaches it. It is
re-read when it changes on disk, so a new prompt or a switched checkout applies to the next
request without a restart; a broken edit keeps the last good manifest and says why.
"""
from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field

from storage.accounts import AccountsError, parse_accounts
from storage.hosts import routability_problem
from storage.manifest_agents import AcpAgent, AgentTableError, acp_tables, parse_acp_agents, parse_command
from storage.manifest_keys import hint_for_missing, unknown_keys

# The text devhost appends to each message when the manifest names no prompt. The page the person
# chats from is served from this very checkout (its dev server reloads it as files change), so the
# agent edits here, in place: a change made in a git worktree or another copy never shows in it.
DEFAULT_PROMPT = """\
You are chatting from the browser page of a service the person is developing. That page is \
served from this checkout and reloads by itself when its files change (its dev server's hot \
reload), so edit the files here, in place: a change made in a git worktree, a branch checked \
out elsewhere or a copy of the folder would not show in the page. Keep the app working while \
you change it: make one small change at a time and check the page still works after each. The \
person reviews your changes with `git diff`; do not commit unless asked. Say which files you \
changed and what to look at in the page."""

# The same, for a checkout that is no git repository (there is no `git diff` to review with).
DEFAULT_PROMPT_NO_GIT = """\
You are chatting from the browser page of a service the person is developing. That page is \
served from this folder and reloads by itself when its files change (its dev server's hot \
reload), so edit the files here, in place: a change made in a copy of the folder would not \
show in the page. Keep the app working while you change it: make one small change at a time \
and check the page still works after each. Say which files you changed and what to look at in \
the page."""

HARNESS_IDS = ("claude-code", "codex")
DEFAULT_IDLE_CLI_MINUTES = 15  # [devtools.chat] idle_cli_minutes (actors/core/idle.py: what it lets go)
_HOSTNAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")


class ManifestError(ValueError):
    """The manifest cannot be used; the message says what to change."""


@dataclass(frozen=True)
class Service:
    """One routed service: a hostname, the checkout it serves, and its dev server if it has one."""

    name: str
    host: str  # routed hostname, lower case, no port
    root: str  # absolute path of the checkout
    upstream: str | None = None


@dataclass(frozen=True)
class Manifest:
    """A read manifest (or the embedded default): the stack's services and its chat settings."""

    path: str | None  # None: the embedded default (no manifest file)
    name: str
    services: tuple[Service, ...]
    prompt: str = DEFAULT_PROMPT
    commands: dict[str, tuple[str, ...]] = field(default_factory=dict)
    resume_interrupted_turns: bool = False  # [core]: resume a chat turn a stop cut off (at most once)
    resume_at_reset: bool = False  # [core]: take a turn that hit a usage limit up again when it lifts
    # [devtools.chat]: minutes an idle chat keeps its CLI before it is ended (0: for ever)
    idle_cli_minutes: float = DEFAULT_IDLE_CLI_MINUTES
    # [accounts.<provider>.<name>] config_home: {provider: {name: absolute config home}} (storage/accounts.py)
    accounts: dict[str, dict[str, str]] = field(default_factory=dict)
    # [devtools.chat.<id>] protocol = "acp": the ACP agents, beside the two CLIs (storage/manifest_agents.py)
    agents: tuple[AcpAgent, ...] = ()
    # What the daemon runs despite (unknown keys): shown at start, on the control page, in the panel
    warnings: tuple[str, ...] = ()

    def service_for_host(self, hostname: str) -> Service | None:
        hostname = hostname.lower().rstrip(".")
        for service in self.services:
            if service.host == hostname:
                return service
        return None


def default_manifest(directory: str) -> Manifest:
    """No manifest: the directory is the one routed project, served as ``localhost``."""
    directory = os.path.realpath(directory)
    name = os.path.basename(directory) or "devhost"
    return Manifest(path=None, name=name, services=(Service("default", "localhost", directory),))


def load_manifest(path: str) -> Manifest:
    path = os.path.realpath(path)
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such manifest file") from None
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read ({exc.strerror or exc}): fix its permissions") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    return parse_manifest(data, path)


def parse_manifest(data: dict, path: str) -> Manifest:
    base = os.path.dirname(path)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{path}: `name` (the stack name) must be a non-empty string"
                            f"{hint_for_missing(data, 'name')}")
    services_table = data.get("services", {})
    if not isinstance(services_table, dict) or not services_table:
        raise ManifestError(f"{path}: add at least one [services.<name>] table with `host` and `root`")
    services, hosts = [], set()
    for service_name, table in services_table.items():
        where = f"{path}: [services.{service_name}]"
        if not isinstance(table, dict):
            raise ManifestError(f"{where} must be a table")
        host = table.get("host")
        if not isinstance(host, str) or not _HOSTNAME.fullmatch(host.lower()):  # `$` alone lets "x\n" pass
            raise ManifestError(f"{where}: `host` must be a hostname such as \"app.localhost\""
                                f"{hint_for_missing(table, 'host')}")
        host = host.lower()
        if host != "127.0.0.1" and (problem := routability_problem(host, service_name)):
            raise ManifestError(f"{where}: host {problem}")
        if host in hosts or host == "127.0.0.1":
            raise ManifestError(f"{where}: host {host!r} is already taken")
        hosts.add(host)
        root = table.get("root", ".")
        if not isinstance(root, str):
            raise ManifestError(f"{where}: `root` must be a path relative to the manifest")
        root = os.path.realpath(os.path.join(base, root))
        if not os.path.isdir(root):
            raise ManifestError(f"{where}: root {root} is not a directory")
        upstream = table.get("upstream")
        if upstream is not None and not (isinstance(upstream, str) and re.match(r"^https?://", upstream)):
            raise ManifestError(f"{where}: `upstream` must be an http:// URL")
        services.append(Service(service_name, host, root, upstream))
    chat = data.get("devtools", {}).get("chat", {}) if isinstance(data.get("devtools", {}), dict) else {}
    if not isinstance(chat, dict):
        raise ManifestError(f"{path}: [devtools.chat] must be a table")
    prompt = chat.get("prompt", DEFAULT_PROMPT)
    if not isinstance(prompt, str):
        raise ManifestError(f"{path}: [devtools.chat] `prompt` must be a string (\"\" appends nothing)")
    idle_cli_minutes = parse_idle_minutes(chat.get("idle_cli_minutes", DEFAULT_IDLE_CLI_MINUTES), path)
    commands = {}
    for harness in HARNESS_IDS:
        table = chat.get(harness)
        if table is None:
            continue
        try:
            commands[harness] = parse_command(table.get("command") if isinstance(table, dict) else None,
                                              f"{path}: [devtools.chat.{harness}]", base)
        except AgentTableError as exc:
            raise ManifestError(str(exc)) from None
    try:
        agents = parse_acp_agents(chat, path, base)
    except AgentTableError as exc:
        raise ManifestError(str(exc)) from None
    commands.update({agent.id: agent.command for agent in agents})
    core = data.get("core", {})
    switches = {}
    for key in ("resume_interrupted_turns", "resume_at_reset"):
        value = core.get(key, False) if isinstance(core, dict) else None
        if not isinstance(value, bool):
            raise ManifestError(f"{path}: [core] {key} must be true or false")
        switches[key] = value
    try:
        accounts = parse_accounts(data.get("accounts"), path)
    except AccountsError as exc:
        raise ManifestError(str(exc)) from None
    return Manifest(path=path, name=name.strip(), services=tuple(services), prompt=prompt, commands=commands,
                    accounts=accounts, agents=agents,
                    warnings=tuple(unknown_keys(data, path, acp_tables(chat))), idle_cli_minutes=idle_cli_minutes,
                    **switches)


def parse_idle_minutes(value, path: str) -> float:
    """[devtools.chat] idle_cli_minutes: a number of minutes, 0 or more (0: never; fractions allowed)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ManifestError(f"{path}: [devtools.chat] `idle_cli_minutes` must be a number of minutes, 0 or more, "
                            f"such as 15 or 0.5 (0 never ends an idle CLI), not {value!r}")
    return value


class ManifestSource:
    """Hands out the current manifest, re-reading the file when its mtime or size changes.

    A broken edit keeps the last good manifest serving; its error stays in ``problems()`` (for the
    control page and the panel) until the file changes again, and is logged once, when it is read.
    """

    def __init__(self, path: str | None, directory: str, log=None, on_change=None):
        """``on_change(manifest)``: called with each manifest that comes into use, the first one
        included (the daemon makes the harnesses of its ACP agents from it)."""
        self._log = log or (lambda message: None)
        self._on_change = on_change or (lambda manifest: None)
        self._broken: str | None = None  # why the file as it is now is not the manifest in use
        if path is None:
            self._path = None
            self._manifest = default_manifest(directory)
            self._stamp = None
        else:
            self._path = os.path.realpath(path)
            self._stamp = self._read_stamp()
            self._manifest = load_manifest(self._path)  # a bad manifest at start-up is fatal
        self._on_change(self._manifest)

    def _read_stamp(self):
        try:
            info = os.stat(self._path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def current(self) -> Manifest:
        if self._path is None:
            return self._manifest
        stamp = self._read_stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._manifest = load_manifest(self._path)
                self._broken = None
                self._log(f"manifest reloaded: {self._path}")
                self._on_change(self._manifest)
                for warning in self._manifest.warnings:
                    self._log(f"manifest warning: {warning}")
            except ManifestError as exc:
                self._broken = str(exc)
                self._log(f"manifest not reloaded, keeping the last good one: {exc}")
        return self._manifest

    def problems(self) -> list[dict]:
        """What is wrong with the manifest: a broken edit (an error: the last good manifest still
        serves; that one's warnings are left out, as they speak of a file no longer on disk), else
        the warnings of the manifest in use."""
        manifest = self.current()
        if self._broken:
            return [{"level": "error", "message": f"{self._broken} (the edit is not in use: devhostd goes on "
                                                  f"with the manifest as it was last read well)"}]
        return [{"level": "warning", "message": warning} for warning in manifest.warnings]


def prompt_for(manifest: Manifest, directory: str) -> str:
    """The text appended to a message sent in ``directory``: the manifest's own prompt, or the
    default one that fits the folder (no `git diff` to review with where there is no git repository)."""
    if manifest.prompt is DEFAULT_PROMPT and not is_git_checkout(directory):
        return DEFAULT_PROMPT_NO_GIT
    return manifest.prompt


def is_git_checkout(directory: str) -> bool:
    """Whether ``directory`` is inside a git work tree: a ``.git`` here or in a parent that is a
    repository (it holds HEAD) or a worktree's pointer file. An empty ``.git`` folder is none:
    Codex's sandbox leaves one in each folder it may write (/tmp too)."""
    path = os.path.realpath(directory)
    while True:
        dot_git = os.path.join(path, ".git")
        if os.path.isfile(dot_git) or os.path.exists(os.path.join(dot_git, "HEAD")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


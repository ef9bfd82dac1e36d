"""``devhostd doctor``: whether chat can work here, and what to do when it cannot.

For each harness: the CLI found (path, version), how that version compares with the one the
tests pin (a new CLI release may speak a slightly different protocol), whether it answers
devhostd's handshake without a prompt (the same model listing the panel asks for), and whether
it looks signed in; each account the manifest names, its config home there and signed in. For
the manifest: each service's folder, and its upstream reachable. For the
state folder: that it is private. Exit status 0 when chat can work with at least one CLI, 1
when it cannot; every problem says what to do.
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import stat
import sys
import tomllib
from urllib.parse import urlsplit

from gevent import subprocess

from actors.harness import HARNESSES
from actors.harness import agents_configured
from actors.provider_list import LABELS, signed_in as account_signed_in
from actors.harness_catalog import ModelListError, command_for, executable_for, list_models, missing_cli_message
from storage import core_token
from storage.accounts import HOME_VARIABLES
from storage.agent_abilities import AgentAbilities
from storage.manifest import ManifestError, ManifestSource

OK, WARN, FAIL = "ok", "warn", "FAIL"
VERSION_TIMEOUT = 20.0


class Report:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.failures = 0

    def section(self, title: str) -> None:
        print(f"\n{title}", file=self.out)

    def line(self, level: str, what: str, detail: str = "") -> None:
        if level == FAIL:
            self.failures += 1
        print(f"  [{level:>4}] {what}" + (f": {detail}" if detail else ""), file=self.out)


def version_of(executable: str, env: dict) -> str | None:
    """The CLI's own version (``--version``), as x.y.z; None when it does not say."""
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, env=env,
                              timeout=VERSION_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout or "")
    return found.group(0) if found else None


def compare_versions(found: str, tested: str) -> tuple[str, str]:
    """(level, words) for a CLI version against the one the tests pin."""
    have, pinned = tuple(map(int, found.split("."))), tuple(map(int, tested.split(".")))
    if have == pinned:
        return OK, f"{found}, the version devhostd is tested with"
    newer = have > pinned
    how = "newer" if newer else "older"
    if have[0] != pinned[0]:
        return WARN, (f"{found} is a different major version than the tested {tested}: chat may not work; "
                      f"install {tested} if it does not")
    return WARN, (f"{found} is {how} than the tested {tested}: chat should work, but a changed protocol "
                  f"shows up as errors in the log; `devhostd doctor` after an upgrade tells")


def signed_in(harness_id: str, frames: list[dict], env: dict) -> tuple[str, str]:
    """Whether the CLI looks signed in: Claude Code says so in its initialize answer; Codex by
    its stored login, an API key, or a configured provider whose key is set."""
    if harness_id == "claude-code":
        for frame in frames:
            response = ((frame.get("response") or {}).get("response") or {}) \
                if frame.get("type") == "control_response" else {}
            account = response.get("account") if isinstance(response, dict) else None
            if isinstance(account, dict):
                source = next((account[k] for k in ("tokenSource", "apiKeySource")
                               if account.get(k) and account[k] != "none"), None)
                if source:
                    return OK, f"signed in ({source})"
                return FAIL, "not signed in: run `claude` once and log in, or set ANTHROPIC_API_KEY"
        return WARN, "could not tell whether it is signed in"
    home = env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")
    if os.path.isfile(os.path.join(home, "auth.json")):
        return OK, "signed in (a stored login)"
    if env.get("OPENAI_API_KEY"):
        return OK, "signed in (OPENAI_API_KEY)"
    try:
        with open(os.path.join(home, "config.toml"), "rb") as handle:
            config = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        config = {}
    provider = (config.get("model_providers") or {}).get(config.get("model_provider") or "")
    if isinstance(provider, dict) and provider.get("env_key") and env.get(provider["env_key"]):
        return OK, f"uses the provider {config['model_provider']!r} with its key ({provider['env_key']})"
    return FAIL, "not signed in: run `codex login`, or set OPENAI_API_KEY"


def check_harnesses(report: Report, commands: dict, cwd: str, env: dict, measured: dict | None = None) -> int:
    """Checks each CLI and ACP agent; returns how many can chat. ``measured``: what earlier
    sessions saw each ACP agent do (storage/agent_abilities.py)."""
    usable = 0
    for harness_id, module in HARNESSES.items():
        report.section(f"{module.LABEL}")
        command = command_for(harness_id, commands)
        executable = executable_for(command, env)
        if executable is None:
            report.line(FAIL, "not found", missing_cli_message(module, command))
            continue
        report.line(OK, "found", executable)
        version = version_of(executable, env)
        if getattr(module, "PROTOCOL", None) == "acp":
            usable += check_agent(report, module, (executable, *command[1:]), version, cwd, env,
                                  (measured or {}).get(harness_id))
            continue
        check_version(report, command[0], version, module.TESTED_VERSION)
        frames: list[dict] = []
        try:
            models = list_models(module, (executable, *command[1:]), cwd, env, seen=frames)
        except ModelListError as exc:
            report.line(FAIL, "handshake", f"{exc}; chat cannot start it (see its output above, if any)")
            continue
        report.line(OK, "handshake", f"answers without a prompt; {len(models)} model(s) listed")
        level, words = signed_in(harness_id, frames, env)
        report.line(level, "sign-in", words)
        if level != FAIL:
            usable += 1
    return usable


def check_version(report: Report, name: str, version: str | None, tested: str) -> None:
    if version is None:
        report.line(WARN, "version", f"{name} --version did not say; tested with {tested}")
    else:
        level, words = compare_versions(version, tested)
        report.line(level, "version", words)


def check_agent(report: Report, module, command: tuple[str, ...], version: str | None, cwd: str, env: dict,
                measured: dict | None) -> int:
    """An ACP agent: its version against the tested one (when devhostd's tests drive it), its
    ``initialize`` answered without a prompt or a session (nothing lands in its history), what
    it advertised there, and what earlier sessions saw it do. 1 when it can chat, else 0."""
    from actors.harness.acp import abilities as ab
    if module.TESTED_VERSION is None:
        report.line(WARN, "version", f"{version or 'not said by --version'}; devhostd's tests do not drive this "
                    "agent: what it does is measured below, not assumed")
    else:
        check_version(report, command[0], version, module.TESTED_VERSION)
    frames: list[dict] = []
    try:
        list_models(module, command, cwd, env, seen=frames)
    except ModelListError as exc:
        report.line(FAIL, "handshake", f"{exc}; check the command of [devtools.chat.{module.HARNESS_ID}] (it must "
                    "start the agent in ACP mode)")
        return 0
    answer = next((f.get("result") for f in frames if f.get("id") == "devhost-init"), None)
    found = ab.from_initialize(answer)
    report.line(OK, "handshake", f"answers ACP initialize (protocol {found.protocol_version}) without a prompt"
                + (f"; it is {found.agent_name} {found.agent_version or ''}".rstrip() if found.agent_name else ""))
    said = [name for name, on in (("resume (session/load)", found.load_session), ("images", found.images),
                                  ("embedded context", found.embedded_context)) if on]
    lacks = [name for name, on in (("resume (session/load)", found.load_session), ("images", found.images)) if not on]
    report.line(OK, "advertises", ", ".join(said) or "no optional ability")
    if lacks:
        report.line(WARN, "lacks", ", ".join(lacks) + ": the panel says so where it matters (a resume starts anew; "
                    "an image is refused before it is sent)")
    report.line(OK, "steering", "ACP has no steer: a message sent during a turn waits for its end (the panel says so)")
    seen = (measured or {}).get("seen") or {}
    if not seen:
        report.line(WARN, "measured", "no session yet: what it does (cancel, permissions, images, resume) is "
                    "measured by the first chat and shown here after it")
    for key, meaning in ab.OBSERVED.items():
        if key in seen:
            report.line(OK if seen[key] else WARN, f"seen: {key}", ("yes: " if seen[key] else "no: ") + meaning)
    if found.auth_methods:
        report.line(WARN, "sign-in", f"its own ({', '.join(found.auth_methods)}): devhostd cannot tell whether it is "
                    "signed in; a turn that needs it fails with the agent's own words")
    return 1


def check_accounts(report: Report, accounts: dict, env: dict) -> None:
    """Each account the manifest names: its config home is there and holds a login (looked at as
    provider.list does: files only, no CLI run)."""
    for provider, named in accounts.items():
        if not named:
            continue
        variable, run = HOME_VARIABLES[provider], "claude" if provider == "claude" else "codex login"
        report.section(f"Accounts of {LABELS[provider]}")
        for name, home in sorted(named.items()):
            what = f"{name} ({home})"
            if not os.path.isdir(home):
                report.line(FAIL, what, f"the config home does not exist: run `{variable}={home} {run}` and log in, "
                                        f"or fix [accounts.{provider}.{name}] config_home in the manifest")
            elif account_signed_in(provider, home, env, default_account=False):
                report.line(OK, what, "signed in (" + (".credentials.json" if provider == "claude" else "auth.json")
                            + " holds a login)")
            else:
                report.line(FAIL, what, f"not signed in: run `{variable}={home} {run}` and log in")


def check_manifest(report: Report, manifests: ManifestSource) -> None:
    manifest = manifests.current()
    report.section(f"Manifest: {manifest.path or 'none (the current folder is the one routed page)'}")
    for warning in manifest.warnings:
        report.line(WARN, "unknown key", warning)
    for service in manifest.services:
        if os.path.isdir(service.root):
            report.line(OK, f"{service.host}", f"folder {service.root}")
        else:
            report.line(FAIL, f"{service.host}", f"folder {service.root} does not exist: fix its root in the manifest")
        if service.upstream:
            problem = upstream_problem(service.upstream)
            if problem:
                report.line(WARN, f"{service.host} upstream", f"{service.upstream} {problem}: start the dev server "
                            "(the page shows a 502 page with the panel until it answers)")
            else:
                report.line(OK, f"{service.host} upstream", f"{service.upstream} answers")


def upstream_problem(url: str) -> str | None:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=3):
            return None
    except OSError as exc:
        return f"is not reachable ({exc.strerror or exc})"


def check_state(report: Report, state_dir: str) -> None:
    report.section(f"State folder: {state_dir}")
    if not os.path.exists(state_dir):
        report.line(OK, "not created yet", "devhostd makes it (0700) at its first start")
        return
    mode = stat.S_IMODE(os.stat(state_dir).st_mode)
    if mode & 0o077:
        report.line(FAIL, "permissions", f"{oct(mode)} lets others read conversations: chmod 700 {state_dir}")
    else:
        report.line(OK, "permissions", oct(mode))
    if not os.access(state_dir, os.W_OK):
        report.line(FAIL, "writable", f"devhostd cannot write {state_dir}: fix its owner or pass --state-dir")
    secret = core_token.token_path(state_dir)
    if not os.path.exists(secret):
        report.line(OK, "chat-core secret", "not made yet: devhostd makes it (0600) at its first start")
    elif stat.S_IMODE(os.stat(secret).st_mode) & 0o077:
        report.line(FAIL, "chat-core secret", f"others may read {secret}: chmod 600 {secret} (devhostd does at its "
                                              "next start)")
    else:
        report.line(OK, "chat-core secret", f"{secret}, readable by you only")


def main(argv, default_state_dir: str) -> int:
    parser = argparse.ArgumentParser(prog="devhostd doctor",
                                     description="Checks that chat can work here and says what to do when not.")
    parser.add_argument("--config", metavar="devhost.toml", help="the manifest (default: ./devhost.toml if any)")
    parser.add_argument("--state-dir", metavar="DIR", help="devhostd's state folder")
    args = parser.parse_args(argv)
    config = args.config
    if config is None and os.path.isfile(os.path.join(os.getcwd(), "devhost.toml")):
        config = os.path.join(os.getcwd(), "devhost.toml")
    report = Report()
    try:
        manifests = ManifestSource(config, os.getcwd(), log=lambda message: None, on_change=agents_configured)
    except ManifestError as exc:
        print(f"devhostd doctor: the manifest cannot be read: {exc}")
        return 1
    env = dict(os.environ)
    state_dir = args.state_dir or default_state_dir
    measured = AgentAbilities(os.path.join(state_dir, "core")).all()
    usable = check_harnesses(report, manifests.current().commands, os.getcwd(), env, measured)
    harness_failures = report.failures
    check_accounts(report, manifests.current().accounts, env)
    account_failures = report.failures - harness_failures
    check_manifest(report, manifests)
    check_state(report, state_dir)
    print()
    if usable == 0:
        print("Chat cannot work: no CLI or agent is found, answering and signed in. Fix what is marked FAIL above.")
        return 1
    if report.failures > harness_failures + account_failures:
        print("Chat cannot work for every page: fix what is marked FAIL above.")
        return 1
    others = " (fix what is marked FAIL above to use the other)" if harness_failures else ""
    print(f"Chat can work with {usable} CLI{'s' if usable > 1 else ''}{' or agents' if HARNESSES.agents else ''}"
          f"{others}.")
    if account_failures:
        print("A chat under an account marked FAIL above cannot work until it is fixed.")
    return 0

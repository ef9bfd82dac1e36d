"""A person's first minutes with the real daemon, as the terminal shows them: `--help` lists the
subcommands; a port already taken says whether devhostd holds it and suggests `--port 0`; a
misspelled key is a warning at start; a host no browser reaches is refused; and a broken live
edit of the manifest is logged once, when it is made, and shown on the control page while the
last good manifest serves on."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import urllib.request

import pytest

from tests.integration.daemon import DEVHOSTD, REPO, Daemon, wait_until


def devhostd(cwd, *args, env=None) -> subprocess.CompletedProcess:
    """devhostd run to its end (one that cannot start exits at once)."""
    env = env or {**os.environ, "HOME": str(cwd / "home")}
    return subprocess.run([sys.executable, str(DEVHOSTD), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def test_help_lists_every_subcommand_with_one_line_each(tmp_path):
    done = devhostd(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for usage, words in (("devhostd doctor", "check that chat can work here"),
                         ("devhostd visual publish", "publish an HTML page in a chat")):
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(usage))
        assert words in lines[at + 1], lines[at:at + 2]
    assert "--port" in done.stdout and "Traceback" not in done.stderr
    # every subcommand main() dispatches is among them (a new one must be listed too)
    dispatched = re.findall(r'argv\[:1\] == \["([a-z-]+)"\]', (REPO / "devhostd" / "main.py").read_text())
    assert "doctor" in dispatched and "visual" in dispatched, dispatched  # the pattern still finds them
    assert all(f"  devhostd {name} " in done.stdout for name in dispatched), done.stdout
    # and each subcommand named there answers its own --help
    assert devhostd(tmp_path, "doctor", "--help").returncode == 0
    assert devhostd(tmp_path, "visual", "publish", "--help").returncode == 0


@pytest.mark.parametrize("state", ["state", "second-state"])
def test_a_port_devhostd_already_runs_on_is_named_so_with_port_0_suggested(daemon, stack, daemon_env, state):
    """Started the same way twice (one state folder) or with a folder of its own, the second says so."""
    done = devhostd(stack, "--port", str(daemon.port), "--state-dir", str(stack / state), env=daemon_env)
    assert done.returncode == 1, done
    assert (f"devhostd: devhostd already runs on 127.0.0.1:{daemon.port} (stack 'teststack'; its page: "
            f"{daemon.control_origin}/)") in done.stderr
    assert "--port 0" in done.stderr and "Traceback" not in done.stderr


def test_a_port_another_program_holds_is_named_so_with_port_0_suggested(tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)  # takes connections but never answers: the probe must give up by itself
    port = holder.getsockname()[1]
    try:
        done = devhostd(tmp_path, "--port", str(port), "--state-dir", str(tmp_path / "state"))
    finally:
        holder.close()
    assert done.returncode == 1, done
    assert f"port {port} on 127.0.0.1 is taken by another program (it does not answer as a devhostd" in done.stderr
    assert "pass --port 0 to pick a free port" in done.stderr and "Traceback" not in done.stderr


def test_a_host_no_browser_reaches_is_refused_at_start_with_the_name_to_write(stack):
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text().replace('host = "app.localhost"', 'host = "pantry"'))
    done = devhostd(stack, "--port", "0", "--state-dir", str(stack / "state"))
    assert done.returncode == 2, done
    assert f"devhostd: {manifest}: [services.app]: host pantry resolves to no address" in done.stderr
    assert 'write "pantry.localhost" instead: browsers resolve every *.localhost name' in done.stderr
    assert "Traceback" not in done.stderr


def test_a_misspelled_key_is_a_warning_at_start_and_the_daemon_serves(stack, daemon_env):
    """On stderr at start, in config.json (the panel's notice), and in `devhostd doctor`."""
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text().replace('root = "project"\n', 'root = "project"\n'
                                                     'upstrem = "http://127.0.0.1:9"\n', 1))
    running = Daemon(daemon_env, cwd=stack, config=manifest, state_dir=stack / "state")
    try:
        warning = "[services.app]: unknown key `upstrem` is ignored: did you mean `upstream`?"
        wait_until(lambda: warning in running.log(), what="the warning on stderr")
        assert f"devhostd: warning: {manifest}: {warning}" in running.log()
        status, config = running.request("GET", "/__devhost__/config.json")
        assert status == 200 and config["manifestProblems"] == [
            {"level": "warning", "message": f"{manifest}: {warning}"}]
    finally:
        assert running.stop() == 0
    doctor = devhostd(stack, "doctor", "--state-dir", str(stack / "state"), env=daemon_env)
    assert f"[warn] unknown key: {manifest}: {warning}" in doctor.stdout, doctor.stdout


def control_page(daemon) -> str:
    request = urllib.request.Request(daemon.control_origin + "/")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def test_a_broken_live_edit_is_logged_once_when_made_and_shown_while_the_last_good_one_serves(daemon, stack):
    manifest = stack / "devhost.toml"
    good = manifest.read_text()
    assert "needs a fix" not in control_page(daemon)
    manifest.write_text(good.replace('host = "other.localhost"', 'host = "pantry"'))
    # No request is made: the daemon reads the edit when it is made, and says so in its log.
    wait_until(lambda: "manifest not reloaded" in daemon.log(), what="the broken edit logged")
    status, config = daemon.request("GET", "/__devhost__/config.json", host=daemon.host("other.localhost"))
    assert status == 200  # the last good manifest still routes other.localhost
    assert [p["level"] for p in config["manifestProblems"]] == ["error"]
    assert 'write "pantry.localhost" instead' in config["manifestProblems"][0]["message"]
    page = control_page(daemon)
    assert "The manifest needs a fix" in page and "write &quot;pantry.localhost&quot; instead" in page
    assert daemon.log().count("manifest not reloaded") == 1  # once, not at every request
    manifest.write_text(good)
    wait_until(lambda: "manifest reloaded" in daemon.log(), what="the fix read")
    assert daemon.request("GET", "/__devhost__/config.json")[1]["manifestProblems"] == []
    assert "needs a fix" not in control_page(daemon)

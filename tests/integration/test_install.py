"""``pip install`` of the checkout (not editable) into a fresh venv, as the README's quick start
does: the installed ``devhostd`` runs, answers ``--help`` and ``doctor``, and serves a page. Beside
``web.py`` (whose ``web`` package has devhostd's name), devhostd refuses to start and says what
to do. Marked ``install``: it installs packages, so it is not in the fast tier."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

CHECKOUT = Path(__file__).resolve().parents[2]
PIP_TIMEOUT = 600


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    return where / "bin"


def _pip(bin_dir: Path, *args: str) -> None:
    done = subprocess.run([str(bin_dir / "pip"), "install", "--disable-pip-version-check", "-q", *args],
                          capture_output=True, text=True, timeout=PIP_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]


def _env(tmp_path: Path) -> dict:
    # Nothing of this checkout or of the tests' own interpreter may leak in: only the venv's.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(tmp_path / "home")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    bin_dir = _venv(tmp_path_factory.mktemp("venv") / "devhostd")
    _pip(bin_dir, str(CHECKOUT))
    return bin_dir


def test_the_installed_devhostd_answers_help_and_doctor_and_serves_a_page(installed, tmp_path):
    env, cwd = _env(tmp_path), tmp_path / "project"
    cwd.mkdir()
    helped = subprocess.run([str(installed / "devhostd"), "--help"], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=60)
    assert helped.returncode == 0 and "usage: devhostd" in helped.stdout
    doctor = subprocess.run([str(installed / "devhostd"), "doctor", "--state-dir", str(tmp_path / "state")],
                            cwd=cwd, env={**env, "PATH": str(installed)}, capture_output=True, text=True, timeout=120)
    # No CLI is on this PATH: the doctor says so (and what to do), it does not crash.
    assert "was not found on the daemon's PATH" in doctor.stdout and "Traceback" not in doctor.stderr
    daemon = subprocess.Popen([str(installed / "devhostd"), "--port", "0", "--state-dir", str(tmp_path / "state")],
                              cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = daemon.stdout.readline()
        assert first.startswith("devhostd: control origin "), first + daemon.stderr.read()
        origin = first.split()[-1]
        with urllib.request.urlopen(origin + "/", timeout=30) as page:
            assert page.status == 200 and "devhostd serves this stack" in page.read().decode()
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
        daemon.stdout.close()
        daemon.stderr.close()


def test_beside_web_py_devhostd_refuses_to_start_and_says_to_use_a_venv_of_its_own(tmp_path):
    bin_dir = _venv(tmp_path / "shared")
    _pip(bin_dir, str(CHECKOUT))
    _pip(bin_dir, "web.py")  # installed after devhostd: its web/ takes the place of devhostd's
    env = _env(tmp_path)
    for argv in (["--port", "0"], ["--help"]):
        started = subprocess.run([str(bin_dir / "devhostd"), *argv], cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=60)
        assert started.returncode == 2
        assert "`import web` resolves to" in started.stderr and "which is not devhostd's" in started.stderr
        assert "python3 -m venv" in started.stderr and "Traceback" not in started.stderr

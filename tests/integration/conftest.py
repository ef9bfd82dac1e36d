"""Fixtures for end-to-end tests: a mock model server, and a real devhostd driving the real CLI."""
from __future__ import annotations

import os

import pytest

from tests.integration.daemon import Daemon, processes_with_env, wait_until, write_manifest
from tests.mock_anthropic import MockAnthropic
from tests.peers import claude_env, require_peers


@pytest.fixture
def mock():
    server = MockAnthropic()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def stack(tmp_path):
    """The folder of a test stack: devhost.toml, project/ and other/."""
    write_manifest(tmp_path)
    return tmp_path


@pytest.fixture
def daemon_env(tmp_path, mock):
    require_peers("claude")
    env = claude_env(tmp_path / "home", mock.url)
    for key in ("GEVENT_MONITOR_THREAD_ENABLE", "GEVENT_MAX_BLOCKING_TIME"):
        if key in os.environ:
            env[key] = os.environ[key]  # the daemon under test reports a blocked hub in its log
            env["PYTHONWARNINGS"] = "ignore:Unable to monitor memory usage"
    return env


@pytest.fixture
def daemon(stack, daemon_env):
    running = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    yield running
    running.stop()
    # Every process a session started ends with the daemon: none may carry its home any more.
    home = daemon_env["HOME"]
    leftovers = processes_with_env(f"HOME={home}")
    assert not leftovers, f"processes outlived devhostd: {leftovers}\n{running.log()}"

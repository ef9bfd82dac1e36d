"""Fixtures for end-to-end tests: a mock model server, and a real devhostd driving the real CLI."""
from __future__ import annotations

import pytest

from tests.integration.daemon import Daemon, processes_with_env, write_manifest
from tests.mock_anthropic import MockAnthropic
from tests.mock_openai import MockOpenAI
from tests.peers import claude_env, codex_env, require_peers
from tests.tiers import needs


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
def openai():
    server = MockOpenAI()
    server.start()
    yield server
    server.stop()


@pytest.fixture
@needs("peers")
def daemon_env(tmp_path, stack, mock, openai):
    """One HOME for both CLIs: Claude Code against ``mock``, Codex against ``openai``."""
    require_peers("claude", "codex")
    env = claude_env(tmp_path / "home", mock.url)
    env.update(codex_env(tmp_path / "home", openai.url, approval_policy="on-request",
                         project_dirs=(stack / "project", stack / "other")))
    # gevent's monitor watches the daemon under test: a greenlet holding the hub for more than
    # half a second is logged as a bug in the daemon's log (which a failing test prints).
    env.update(GEVENT_MONITOR_THREAD_ENABLE="true", GEVENT_MAX_BLOCKING_TIME="0.5",
               PYTHONWARNINGS="ignore:Unable to monitor memory usage")
    return env


@pytest.fixture
def daemon(stack, daemon_env):
    running = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    yield running
    running.stop()
    log = running.log()
    print(log)  # pytest shows it for a failing test
    bugs = [line for line in log.splitlines() if " bug: " in line]
    assert not bugs, f"devhostd logged bugs: {bugs}"
    # Every process a session started ends with the daemon: none may carry its home any more.
    home = daemon_env["HOME"]
    leftovers = processes_with_env(f"HOME={home}")
    assert not leftovers, f"processes outlived devhostd: {leftovers}\n{running.log()}"


@pytest.fixture
def core(daemon):
    """A chat-core client of ``daemon`` (devhostd/core_client.py)."""
    from devhostd.core_client import CoreConnection
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as connection:
        yield connection

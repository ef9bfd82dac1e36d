"""The agents activity page in Chromium, on devhostd's control origin: the stream shown readably,
text kept as text, and a reconnect by itself when the daemon comes back."""
from __future__ import annotations

import subprocess
import sys

import gevent
import pytest
from playwright.sync_api import expect

from tests.agent_fakes import Agents, append_jsonl, pi_header, pi_message, pi_session_path
from tests.integration.daemon import DEVHOSTD, Daemon


@pytest.fixture
def agents(tmp_path):
    started = Agents(tmp_path / "agents")
    try:
        yield started
    finally:
        started.stop_all()


def _activity_url(daemon) -> str:
    return f"{daemon.control_origin}/__devhost__/agents/activity?{daemon.query()}"


class SamePortDaemon(Daemon):
    """A devhostd started again on the port of one that stopped (the page's origin stays)."""

    def __init__(self, env, cwd, config, state_dir, port: int):
        self.stderr_path = state_dir.parent / f"devhostd-again-{port}.log"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(DEVHOSTD), "--port", str(port), "--state-dir",
                                      str(state_dir), "--config", str(config)], cwd=cwd, env=env,
                                     stdout=subprocess.PIPE, stderr=self._stderr)
        with gevent.Timeout(20, RuntimeError(f"devhostd did not start again; log: {self.log()}")):
            line = self.proc.stdout.readline().decode().strip()
        assert line.startswith("devhostd: control origin "), (line, self.log())
        self.control_origin = line.rsplit(" ", 1)[1]
        self.port = port


def test_the_page_shows_the_stream_readably_and_reconnects_by_itself(page, daemon, daemon_env, stack, agents,
                                                                     tmp_path):
    project = stack / "project"
    home = tmp_path / "agents-home"
    home.mkdir()
    agents.fake("pi", project, home)
    session = pi_session_path(home, project)
    append_jsonl(session, pi_header(project), pi_message("user", text="from before the page: never shown"))

    page.goto(_activity_url(daemon))
    expect(page.locator("#status")).to_have_attribute("data-state", "live")
    expect(page.locator("#agents li.agent")).to_have_count(1)
    expect(page.locator("#agents li.agent")).to_contain_text("pi")
    expect(page.locator("#empty")).to_be_visible()

    append_jsonl(session,
                 pi_message("user", text="<b>make</b> the <script>tests</script> pass"),
                 pi_message("assistant", tool="bash", arguments={"command": "make test"}),
                 pi_message("toolResult", text="ok " * 3000, tool="bash"),
                 pi_message("assistant", text="All green."))
    rows = page.locator("#events tr.event")
    expect(rows).to_have_count(4)
    expect(rows.locator("td.kind")).to_have_text(["turn_start (user)", "tool_call · bash (assistant)",
                                                  "tool_result · bash (tool)", "turn_end (assistant)"])
    expect(rows.nth(0).locator("td.text")).to_have_text("<b>make</b> the <script>tests</script> pass")
    assert page.locator("#events td.text b, #events script").count() == 0  # text stays text
    expect(rows.nth(1).locator("td.text")).to_have_text("make test")
    expect(rows.nth(0).locator("td.harness")).to_have_text("pi")
    assert rows.nth(0).locator("td.agent").inner_text().isdigit()
    assert len(rows.nth(2).locator("td.text").inner_text().encode()) <= 4096
    expect(page.locator("#empty")).to_be_hidden()

    # The daemon stops (the stream closes with 1001) and comes back on the same port: the page
    # says so, reconnects by itself, and shows what happens from then on.
    assert daemon.stop() == 0
    expect(page.locator("#status")).to_have_attribute("data-state", "reconnecting")
    again = SamePortDaemon(daemon_env, stack, stack / "devhost.toml", stack / "state-again", daemon.port)
    try:
        expect(page.locator("#status")).to_have_attribute("data-state", "live")
        append_jsonl(session, pi_message("user", text="after the restart"))
        expect(rows).to_have_count(5)
        expect(rows.nth(4).locator("td.text")).to_have_text("after the restart")
    finally:
        assert again.stop() == 0
        bugs = [line for line in again.log().splitlines() if " bug: " in line]
        assert not bugs, bugs

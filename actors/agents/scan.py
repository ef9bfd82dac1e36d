"""One scan of every agent on the machine: one pass over /proc, then each harness on its own.

A harness whose store cannot be read (or whose scanner fails) is reported by name beside what
the others found; its processes that were found stay listed, as ``unknown`` when nothing could
be read about them. Missing stores are no error: that harness simply has no sessions yet.
"""
from __future__ import annotations

import os
import pwd
import time
import traceback
from dataclasses import dataclass, field

import gevent

from actors.chatlog import daemon_log

from actors import proctree
from actors.agents import HARNESS_IDS, claude, codex, opencode, pi, procs
from actors.agents.events import now_ms
from actors.agents.jsonl import Summaries
from actors.agents.rows import Found


@dataclass
class ScanResult:
    agents: list[Found]
    errors: dict[str, str] = field(default_factory=dict)  # harness -> what went wrong
    skipped: int = 0
    seconds: float = 0.0
    at: float = 0.0  # time.monotonic() when it ended

    def error_text(self) -> str | None:
        if not self.errors:
            return None
        return "; ".join(f"{harness} could not be scanned: {message}"
                         for harness, message in sorted(self.errors.items()))


CATALOG_TAG = "models"  # actors/harness_catalog.py tags its listing processes so


class Scanner:
    """Holds what one scan can reuse from the last (transcript summaries, headers, lookups)."""

    def __init__(self, proc: str = procs.PROC, uid: int | None = None, owner_pid: int | None = None,
                 tag_prefix: str | None = None):
        self.proc = proc
        self.uid = os.geteuid() if uid is None else uid
        self.owner_pid = os.getpid() if owner_pid is None else owner_pid
        self.tag_prefix = tag_prefix
        self.summaries = Summaries()
        self.codex_metas = codex.Metas()
        self.codex_names = codex.Names()
        self.pi_headers: dict = {}
        self.claude_lookups: dict = {}
        self._homes: dict[int, str] = {}

    def home_of(self, agent: procs.AgentProcess) -> str:
        """HOME from the agent's environment, else its user's home."""
        if agent.env.get("HOME"):
            return agent.env["HOME"]
        if self.uid not in self._homes:
            try:
                self._homes[self.uid] = pwd.getpwuid(self.uid).pw_dir
            except KeyError:
                self._homes[self.uid] = os.path.expanduser("~")
        return self._homes[self.uid]

    def scan(self) -> ScanResult:
        began = time.monotonic()
        now = now_ms()
        table = procs.read_table(self.proc)
        agents = procs.find_agents(table, self.proc, self.uid)
        by_harness: dict[str, list] = {harness: [] for harness in HARNESS_IDS}
        for agent in agents:
            by_harness[agent.harness].append(agent)
        result = ScanResult([], skipped=table.skipped)
        for harness, group in by_harness.items():
            if not group:
                continue
            gevent.sleep(0)
            try:
                found, errors = self._scan(harness, group, now)
            except Exception as exc:  # noqa: BLE001 - one harness failing must not hide the others
                # Pages read this answer: the details (paths among them) go to the daemon's log only.
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                daemon_log(f"agents: the {harness} scanner failed: {detail}")
                result.errors[harness] = "its scanner failed; the daemon's log says why"
                continue
            if errors:
                result.errors[harness] = errors[0]
            owned = {agent.pid: self._chat_of(agent) for agent in group}
            for row in found:
                row.chat = owned.get(row.pid)
                if row.chat is None and row.facts.get("threadless"):
                    continue  # an app-server with no thread yet: someone's tool, not an agent
                result.agents.append(row)
        self._forget(result.agents)
        result.seconds = time.monotonic() - began
        result.at = time.monotonic()
        return result

    def _scan(self, harness: str, group, now: int):
        if harness == "claude-code":
            return claude.find(group, self.summaries, self.home_of, now, self.claude_lookups)
        if harness == "codex":
            return codex.find(group, self.summaries, self.codex_metas, self.codex_names, self.home_of,
                              lambda pid: procs.open_files(pid, self.proc), now)
        if harness == "pi":
            return pi.find(group, self.summaries, self.pi_headers, self.home_of, now)
        return opencode.find(group, self.home_of, now)

    def _chat_of(self, agent: procs.AgentProcess) -> str | None:
        """The devhost session whose CLI this is: this daemon started it (it is our child) and
        gave it our process tag, ``<daemon prefix><session id>.<n>`` (see actors/proctree.py)."""
        prefix = self.tag_prefix if self.tag_prefix is not None else proctree.daemon_tag_prefix()
        tag = agent.env.get(proctree.TAG_ENV, "")
        if agent.ppid != self.owner_pid or not tag.startswith(prefix):
            return None
        chat = tag[len(prefix):].rsplit(".", 1)[0]
        # The harness catalog's model-listing CLIs carry the tag "models": no chat session.
        return chat if chat and chat != CATALOG_TAG else None

    def _forget(self, agents: list[Found]) -> None:
        """Caches keep only what the running agents use."""
        live = {row.transcript for row in agents if row.transcript}
        self.summaries.forget_except(live)
        self.codex_metas.trim()
        if len(self.pi_headers) > 4096:
            self.pi_headers.clear()
        if len(self.claude_lookups) > 4096:
            self.claude_lookups.clear()

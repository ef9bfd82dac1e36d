"""How long the heavy operations hold devhostd's hub, in one run.

    python3 bench/hub.py

A real devhostd (bin/devhostd) runs the pinned Claude Code against tests/mock_anthropic.py,
with gevent's monitor at a 5 ms threshold (web/hub_monitor.py logs each block once, with its
length). Each operation runs while a probe process of its own asks the control origin for
/__devhost__/config.json every 5 ms:

- approval: a 400 KB Bash command pending, three messages queued, chat.configure 20 times;
- bookmark: chat.addBookmark on an answer of 1 MB;
- resume: POST /chat/sessions {resumeId} of a 64 MiB Claude Code transcript;
- reconnect: chat.attach {since} of a chat with a 20 MB log (loaded once before);
- copy: visuals.copyChat of a 16 MiB visual;
- clear: chat.clear of a chat with 100 MB of attachments.

Prints, for each, the longest block the monitor saw (0 when none reached 5 ms), how many, and
the probe's worst latency against its worst in a bare baseline measured first (the ratio).
Goal: every longest block, and every probe's excess over the bare worst, at most 20 ms (the
monitor cannot see a block that holds the GIL throughout, such as one long C call). Core
requests go through devhostd/core_client.py and page requests through tests/integration/daemon.py,
as the tests do.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from storage.attachments import AttachmentStore  # noqa: E402
from storage.chat_store import ChatStore  # noqa: E402
from actors.harness.claude.files import slug  # noqa: E402
from tests.integration.daemon import Daemon, write_manifest  # noqa: E402
from tests.mock_anthropic import MockAnthropic, text_reply, tool_use_reply  # noqa: E402
from tests.peers import claude_env, require_peers  # noqa: E402
from devhostd.core_client import CoreConnection  # noqa: E402

THRESHOLD = 0.005
GOAL_MS = 20
MIB = 1 << 20
BLOCK = re.compile(r"the hub was blocked for ([0-9.]+)s")


PROBE = r"""
import http.client, sys, time
port, host = int(sys.argv[1]), sys.argv[2]
while True:
    started = time.time()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", "/__devhost__/config.json", headers={"Host": host})
    connection.getresponse().read()
    connection.close()
    print(f"{started} {time.time() - started}", flush=True)
    time.sleep(0.005)
"""


class Probe:
    """A control-origin GET every 5 ms from a process of its own (so the bench's own client,
    reading a 20 MB answer, never delays it); each answer's (started, seconds), wall clock."""

    def __init__(self, daemon: Daemon):
        import subprocess
        self.samples: list[tuple[float, float]] = []
        self._process = subprocess.Popen([sys.executable, "-c", PROBE, str(daemon.port),
                                          daemon.control_origin.split("//")[1]], stdout=subprocess.PIPE, text=True)
        self._greenlet = gevent.spawn(self._read)

    def _read(self) -> None:
        for line in self._process.stdout:
            started, took = line.split()
            self.samples.append((float(started), float(took)))

    def worst(self, since: float, until: float) -> float:
        return max((took for at, took in self.samples if since <= at <= until or since <= at + took <= until),
                   default=0.0)

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        self._greenlet.join(timeout=30)


class Run:
    def __init__(self, daemon: Daemon, probe: Probe):
        self.daemon, self.probe = daemon, probe
        self.rows: list[tuple[str, float, int, float]] = []

    def measure(self, name: str, operation) -> None:
        offset = len(self.daemon.log())
        gevent.sleep(0.2)  # the probe has answers from just before
        started = time.time()
        operation()
        ended = time.time()
        gevent.sleep(0.2)  # a block ending with the operation is logged once the hub runs again
        blocks = [float(m.group(1)) for m in BLOCK.finditer(self.daemon.log()[offset:])]
        self.rows.append((name, max(blocks, default=0.0), len(blocks), self.probe.worst(started, ended)))


def _transcript(path: Path, session_id: str, cwd: str, size: int) -> None:
    """A Claude Code transcript of ``size`` bytes: turns of a question and a 32 KB answer."""
    parent = None
    with open(path, "w") as handle:
        while handle.tell() < size:
            for kind, content in (("user", "go on"), ("assistant", [{"type": "text", "text": "z" * 32_000}])):
                record_id = str(uuid.uuid4())
                handle.write(json.dumps({"parentUuid": parent, "isSidechain": False, "type": kind,
                                         "message": {"role": kind, "content": content}, "uuid": record_id,
                                         "timestamp": "2026-11-30T13:25:53.247Z", "cwd": cwd,
                                         "sessionId": session_id}) + "\n")
                parent = record_id


def main() -> int:
    require_peers("claude")
    with tempfile.TemporaryDirectory(prefix="devhost-bench-hub-") as tmp:
        root = Path(tmp)
        write_manifest(root)
        project = str((root / "project").resolve())
        env = claude_env(root / "home", "http://127.0.0.1:1")  # the mock's address is set below
        mock = MockAnthropic()
        mock.start()
        env.update(ANTHROPIC_BASE_URL=mock.url, GEVENT_MONITOR_THREAD_ENABLE="true",
                   GEVENT_MAX_BLOCKING_TIME=str(THRESHOLD), PYTHONWARNINGS="ignore:Unable to monitor memory usage")
        session_id = str(uuid.uuid4())
        folder = root / "home" / ".claude" / "projects" / slug(project)
        folder.mkdir(parents=True)
        _transcript(folder / f"{session_id}.jsonl", session_id, project, 64 * MIB)
        daemon = Daemon(env, cwd=root, config=root / "devhost.toml", state_dir=root / "state")
        probe = Probe(daemon)
        try:
            with CoreConnection(daemon.control_origin, timeout=180, token=daemon.core_token) as core:
                gevent.sleep(1)  # the probe's own start (its imports, a first connection) is no baseline
                quiet = time.time()
                gevent.sleep(2)
                baseline = probe.worst(quiet, time.time())
                run = Run(daemon, probe)
                _operations(run, core, daemon, mock, root, project, session_id)
        finally:
            probe.stop()
            daemon.stop()
            mock.stop()
    _print(run.rows, baseline)
    return 0


def _operations(run: Run, core, daemon: Daemon, mock, root: Path, project: str, session_id: str) -> None:
    # approval: 400 KB pending, three queued, 20 configures
    mock.add(tool_use_reply("Bash", {"command": "echo " + "y" * 400_000, "description": "big"}),
             text_reply("not run"), text_reply("one"), text_reply("two"), text_reply("three"))
    core.chats.create("approval", provider="claude", cwd=project)
    core.chats.attach("approval")
    core.chats.send("approval", "run it")
    status = core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == "approval"
                             and e["payload"]["info"]["requests"], what="the approval")
    request = status["payload"]["info"]["requests"][0]
    for n in range(3):
        core.chats.send("approval", f"then {n}")
    run.measure("approval 400 KB + 3 queued, 20 configures",
                lambda: [core.chats.configure("approval", resumeAtReset=bool(n % 2)) for n in range(20)])
    core.chats.approve("approval", request["requestId"], "deny")
    core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == "approval"
                    and not e["payload"]["info"]["queue"] and e["payload"]["info"]["status"] == "idle",
                    timeout=120, what="the queue to drain")

    # bookmark of a 1 MB answer
    mock.add(text_reply(*["a " * 5_000] * 100))
    core.chats.create("bookmark", provider="claude", cwd=project)
    core.chats.attach("bookmark")
    _turn(core, "bookmark", core.chats.send("bookmark", "say a lot")["turnId"])
    answer = max((i for i in core.chats.history("bookmark", limit=100)["items"] if i["kind"] == "assistant"),
                 key=lambda i: len(i.get("text") or ""))
    run.measure(f"bookmark of a {len(answer['text']) // 1000} KB answer",
                lambda: core.chats.add_bookmark("bookmark", answer["id"]))

    # resume of a 64 MiB transcript (a page's request)
    def resume():
        status, record = daemon.request("POST", "/__devhost__/chat/sessions",
                                        {"harness": "claude-code", "pageURL": daemon.page(), "target": "project",
                                         "resumeId": session_id})
        assert status == 201, (status, record)
        daemon.close_session(record["id"])
    run.measure("resume of a 64 MiB transcript", resume)

    # reconnect with since to a chat of 20 MB: five answers of 4 MB (its log is what came
    # since the record was last folded: up to the record's size)
    core.chats.create("big-log", provider="claude", cwd=project)
    core.chats.attach("big-log")
    for n in range(5):
        mock.add(text_reply(*["b" * 64 * 1024] * 64))
        _turn(core, "big-log", core.chats.send("big-log", f"answer {n}")["turnId"])
    seq = core.chats.attach("big-log", historyLimit=1)["seq"]
    core.chats.detach("big-log")
    log = ChatStore(str(root / "state" / "core")).log_path("big-log")
    answer: dict = {}
    run.measure(f"reconnect (since) to a 20 MB chat, {os.path.getsize(log) // MIB} MiB log",
                lambda: answer.update(core.chats.attach("big-log", since=seq - 5)))
    assert len(answer["events"]) == 5 and not answer["items"], "the reconnect was answered with a snapshot"

    # visuals.copyChat of a 16 MiB visual
    core.chats.create("visuals", provider="claude", cwd=project)
    core.chats.create("fork", provider="claude", cwd=project)
    core.chats.publish_visual("visuals", "big", "<p>" + "v" * (16 * MIB - 64 * 1024) + "</p>")
    run.measure("visuals.copyChat of a 16 MiB page", lambda: core.chats.copy_visuals("visuals", "fork"))

    # clear of a chat with 100 MB of attachments
    core.chats.create("files", provider="claude", cwd=project)
    AttachmentStore(str(root / "state" / "core")).save(
        "files", [(f"f{n}.bin", "application/octet-stream", os.urandom(10 * MIB)) for n in range(10)])
    run.measure("clear of a chat with 100 MB of attachments", lambda: core.chats.clear("files"))


def _turn(core, chat_id: str, turn_id: str) -> None:
    core.wait_event(lambda e: e["event"] == "chat.event" and e["payload"]["chatId"] == chat_id
                    and e["payload"]["event"].get("type") == "item" and e["payload"]["event"]["item"]["id"] == turn_id
                    and e["payload"]["event"]["item"]["state"] != "running", timeout=300, what=f"turn {turn_id}")


def _print(rows, baseline: float) -> None:
    print(f"{'operation':<46} {'longest block':>14} {'blocks':>7} {'probe worst':>12} {'vs bare':>8}")
    for name, longest, count, worst in rows:
        ratio = f"{worst / baseline:.1f}x" if baseline else "-"
        print(f"{name:<46} {longest * 1000:>11.1f} ms {count:>7} {worst * 1000:>9.1f} ms {ratio:>8}")
    # The monitor misses a block that holds the GIL throughout (one long C call: the monitor
    # thread cannot look meanwhile), so the probe's excess over its bare worst counts too.
    met = all(max(longest, worst - baseline) * 1000 <= GOAL_MS for _, longest, _, worst in rows)
    print(f"bare probe worst: {baseline * 1000:.1f} ms; monitor threshold {THRESHOLD * 1000:.0f} ms; "
          f"goal: every longest block and probe excess <= {GOAL_MS} ms -> {'met' if met else 'NOT met'}")
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end of this run)")


if __name__ == "__main__":
    sys.exit(main())

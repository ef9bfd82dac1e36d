"""What idle CLIs hold, and what letting them go costs the next message, on the real CLIs.

    python3 bench/idle.py [--count 20] [--idle 30] [--samples 5] [--cli claude,codex]

The chat core runs in this process (a Registry and its Chat actors, as tests/actors do), each
CLI against its mock model server (tests/mock_anthropic.py, tests/mock_openai.py), with
``[devtools.chat] idle_cli_minutes`` at ``--idle`` seconds. For each CLI:

- ``--count`` conversations each take one message at once; once all are answered, the RSS of
  their CLI processes (every process carrying the chat's tag, read from /proc) is summed; once
  the idle time has passed, again (the goal: 0, no process left);
- the first event of a reply (the first assistant item the core's client gets, from the send),
  ``--samples`` times each: a warm CLI's (a conversation's second message, its CLI alive), a
  cold one's (a new conversation's first message: the warm figure plus the CLI's own start),
  and a resumed one's (the next message of a conversation whose CLI was let go). Printed with
  the ratio resumed / cold, whose goal is <= 1.5.

Medians of the samples are the figures; every sample is printed too. Nothing is asserted; a few
minutes on 2 CPUs with the default count.
"""
from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from actors import proctree  # noqa: E402
from actors.registry import CoreClients, Registry  # noqa: E402
from tests import mock_anthropic, mock_openai  # noqa: E402
from tests.actors.shutdown import stop_registry  # noqa: E402
from tests.peers import CLAUDE, CODEX, claude_env, codex_env, require_peers  # noqa: E402
from tests.sinks import Sink  # noqa: E402
from web.core.wire import encode  # noqa: E402

ASK = 120


def tagged(chat_ids) -> list[int]:
    """Pids carrying the process tag of one of these chats (a CLI and what it started): the tag
    is ``<this process's prefix><chat's tag id>.<n>`` (actors/proctree.py ``make_tag``)."""
    prefix = f"{proctree.TAG_ENV}={proctree.daemon_tag_prefix()}".encode()
    wanted = {proctree.tag_id(chat_id).encode() for chat_id in chat_ids}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                entries = handle.read().split(b"\0")
        except OSError:
            continue
        if any(entry.startswith(prefix) and entry[len(prefix):].rsplit(b".", 1)[0] in wanted for entry in entries):
            found.append(int(name))
    return found


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as handle:
                total += next((int(line.split()[1]) for line in handle if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total / 1024


class TimedSink(Sink):
    """A core client that notes when each frame reached it."""

    def __init__(self):
        super().__init__(encode)
        self.stamps: list[float] = []

    def push(self, message) -> None:
        before = len(self.frames)
        super().push(message)
        self.stamps += [time.monotonic()] * (len(self.frames) - before)

    def after(self, seen: int, predicate, what: str) -> int:
        """The index of the first frame from ``seen`` on that ``predicate`` holds for (waited for)."""
        with gevent.Timeout(ASK, AssertionError(f"no {what}")):
            while True:
                for index in range(seen, len(self.frames)):
                    if predicate(self.frames[index]):
                        return index
                gevent.sleep(0.002)


def item(frame: dict) -> dict:
    return frame["payload"]["event"].get("item") or {} if frame.get("event") == "chat.event" else {}


def turn_end(sink: TimedSink, seen: int, turn_id: str) -> None:
    sink.after(seen, lambda f: item(f).get("id") == turn_id and item(f).get("state") != "running",
               f"the end of {turn_id}")


def first_reply(chat, sink: TimedSink, text: str) -> float:
    """Seconds from the send to the first assistant item the core's client got; the turn is
    waited for to its end."""
    seen = len(sink.frames)
    started = time.monotonic()
    turn_id = chat.core_send(text).get(timeout=ASK)["turnId"]
    first = sink.after(seen, lambda f: item(f).get("kind") == "assistant", "an assistant item")
    turn_end(sink, seen, turn_id)
    return sink.stamps[first] - started


def open_chat(registry, chat_id: str, provider: str, project: str):
    registry.create_chat({"chatId": chat_id, "cwd": project, "provider": provider}).get(timeout=ASK)
    chat, sink = registry.chat(chat_id).get(timeout=ASK), TimedSink()
    chat.core_attach(sink).get(timeout=ASK)
    return chat, sink


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms  (" + " ".join(f"{v * 1000:.0f}" for v in values) + ")"


def run(cli: str, count: int, idle: float, samples: int, root: Path) -> None:
    provider = "claude" if cli == "claude" else "codex"
    home, project = root / cli / "home", root / cli / "project"
    project.mkdir(parents=True)
    if cli == "claude":
        mock = mock_anthropic.MockAnthropic()
        mock.start()
        env, commands = claude_env(home, mock.url), {"claude-code": (str(CLAUDE),)}
    else:
        mock = mock_openai.MockOpenAI()
        mock.start()
        env, commands = codex_env(home, mock.url, project_dirs=[project], approval_policy="never"), \
            {"codex": (str(CODEX),)}
    saved = dict(os.environ)
    os.environ.update(env)
    ref = Registry.start(str(root / cli / "data"), CoreClients(), commands=lambda: commands,
                         environment=dict(os.environ), idle_cli_minutes=lambda: idle / 60)
    registry = ref.proxy()
    try:
        cold, warm = [], []
        for n in range(samples):
            chat, sink = open_chat(registry, f"{cli}-w{n}", provider, str(project))
            cold.append(first_reply(chat, sink, "remember the word alpha"))
            warm.append(first_reply(chat, sink, "and the word beta"))
        began = time.monotonic()
        ids = [f"{cli}-i{n}" for n in range(count)]
        chats = [open_chat(registry, chat_id, provider, str(project)) for chat_id in ids]
        sent = [chat.core_send("remember the word gamma") for chat, _ in chats]
        for (chat, sink), answer in zip(chats, sent):
            turn_end(sink, 0, answer.get(timeout=ASK)["turnId"])
        answered = time.monotonic() - began
        live = tagged(ids)
        before = rss_mib(live)
        deadline = time.monotonic() + idle + 60
        while tagged(ids) and time.monotonic() < deadline:
            gevent.sleep(0.2)
        left = tagged(ids)
        after = rss_mib(left)
        running = sum(bool(chat.info().get(timeout=ASK)["running"]) for chat, _ in chats)
        resumed = [first_reply(chat, sink, "what words do you remember?") for chat, sink in chats[:samples]]
        print(f"{cli}: {count} conversations answered in {answered:.1f} s; idle time {idle:g} s")
        print(f"  CLI memory while idle       {before:8.0f} MiB in {len(live)} processes "
              f"({before / max(count, 1):.0f} MiB a conversation)")
        print(f"  CLI memory after idle time  {after:8.0f} MiB in {len(left)} processes; "
              f"info.running true in {running}   (goal: 0)")
        print(f"  first event, warm CLI       {ms(warm)}")
        print(f"  first event, cold CLI       {ms(cold)}   (warm + the CLI's own start: "
              f"{(statistics.median(cold) - statistics.median(warm)) * 1000:.0f} ms)")
        print(f"  first event, resumed CLI    {ms(resumed)}")
        print(f"  resumed / cold              {statistics.median(resumed) / statistics.median(cold):.2f}x"
              "   (goal: <= 1.5x)")
    finally:
        stop_registry(ref)
        mock.stop()
        os.environ.clear()
        os.environ.update(saved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=20, help="idle conversations per CLI (default 20)")
    parser.add_argument("--idle", type=float, default=30.0,
                        help="seconds of idleness before a CLI is let go (default 30: the answers of all "
                             "conversations must come within it)")
    parser.add_argument("--samples", type=int, default=5, help="first-event samples of each kind (default 5)")
    parser.add_argument("--cli", default="claude,codex", help="which CLIs, comma-separated (default both)")
    args = parser.parse_args()
    clis = [c.strip() for c in args.cli.split(",") if c.strip()]
    require_peers(*clis)
    args.samples = max(1, min(args.samples, args.count))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="devhostd-idle-") as root:
        for cli in clis:
            run(cli, args.count, args.idle, args.samples, Path(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())

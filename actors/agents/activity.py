"""The activity stream of one page: the top-level agents of its directory, followed.

- When the stream opens, each agent already running is followed from the end of its
  transcript (no history). "The end" is the one at the moment the stream opened (before its
  upgrade was answered), not the later moment its opening scan finished: a transcript written
  since is read back a little and what is newer than the opening goes out. (OpenCode's
  database is followed from its end at the opening scan.) "Could not read it yet" is never
  "nothing there": a transcript or database not readable at the opening is followed from its
  end as first read, and agents of a harness the opening scan could not read count as present
  at the opening when they turn up.
- An agent that appears later (a new process) is followed from the start of its transcript:
  a new session has only new records, and a resumed old session is replayed, as the seed asks.
  The same goes for an agent that switches to another session (Claude Code's in-place
  re-exec, a /resume) or whose first transcript appears.
- A transcript replaced or truncated underneath (pi rewrites its file) is read again from the
  start (at most ``REPLAY_MAX`` before its end); until that reaches the end, records already
  read (by id where records have one) or older than the last one sent, or than the stream's
  opening for agents followed from the end, are not sent again.
- ``run_started`` / ``run_exited`` mark agents appearing and leaving after the stream opened.
"""
from __future__ import annotations

import time

import gevent

from actors.chatlog import daemon_log

from actors.agents import events as ev
from actors.agents import opencode
from actors.agents.jsonl import LONG_LINE, Tail, parse_line, shrink
from actors.agents.pi import PiParser
from actors.harness.claude.records import ClaudeParser
from actors.harness.codex.records import CodexParser
from actors.agents.rows import Found, inside, subdirectory

PARSERS = {"claude-code": ClaudeParser, "codex": CodexParser, "pi": PiParser}
YIELD_EVERY = 64


SENT_IDS = 4096
READ_SECONDS = 0.1  # how long one tick may read transcripts that have more waiting
EVERY_HARNESS = "every harness"  # the scan's error key when the whole scan failed


def _record_id(record: dict) -> str | None:
    """The id of a record where the harness gives one (Claude Code ``uuid``, pi ``id``)."""
    for field in ("uuid", "id"):
        value = record.get(field)
        if isinstance(value, str) and value:
            return value
    return None


def _end_of(connection, session_id: str) -> tuple[int, int]:
    return opencode.last_seq(connection, session_id), opencode.end_of_events(connection)


def _parse(line: bytes) -> dict | None:
    if len(line) > LONG_LINE:
        # A big record (a tool's output): its long strings are cut from the raw bytes first (the
        # text is cut afterwards anyway), so the whole line is never parsed: that holds the GIL.
        line = shrink(line, pause=lambda: gevent.sleep(0))
        if line is None or len(line) > LONG_LINE:
            return None  # torn, or huge for another reason than its text: skipped
    return parse_line(line)


class Follow:
    """One agent's transcript, read from an offset (or an OpenCode session from a seq)."""

    def __init__(self, found: Found, from_end: bool, opened_ms: int | None = None):
        self.harness = found.harness
        self.pid = found.pid
        self.target = found.follow
        self._watermark: int | None = None  # the newest timestamp sent
        # A stream that starts at the end sends nothing older than its opening, even when the
        # file is rewritten before anything was sent.
        self._floor: int | None = (opened_ms or ev.now_ms()) if from_end else None
        self._sent: dict[str, None] = {}  # ids of the records read (the last SENT_IDS), oldest first
        self._catching_up = False  # re-reading a replaced or truncated file
        self._tail = None
        self._connection = None
        self._more = False  # OpenCode: the last read stopped at its limit
        if self.target[0] == "file":
            self._tail = Tail(self.target[1], from_end,
                              since_ns=self._floor * 1_000_000 if self._floor is not None else None)
            self._catching_up = self._tail.looked_back  # only what is newer than the opening goes out
            self._parser = PARSERS[self.harness]()
        else:
            self._parser = opencode.OpencodeParser()
            self._seq, self._rowid = -1, 0
            self._to_end = from_end  # the end not known yet: found at the first read that works
            self._find_end()

    def _find_end(self) -> None:
        if not self._to_end:
            return
        try:
            self._seq, self._rowid = opencode.off_hub(_end_of, self._db(), self.target[2])
        except Exception:  # noqa: BLE001 - sqlite3.Error, OSError: could not read it yet, not "nothing there"
            self.close()
            return
        self._to_end = False
        if self._floor is not None and self._rowid:
            # The end is found after the opening scan, which may finish well after the stream
            # opened: the last LOOK_BACK_ROWS event rows are read again, and of their events
            # only those stamped at or after the opening go out (as a transcript's look-back).
            self._seq, self._rowid = -1, max(0, self._rowid - opencode.LOOK_BACK_ROWS)
            self._catching_up = True

    def _db(self):
        if self._connection is None:
            self._connection = opencode.connect(self.target[1])
        return self._connection

    def read(self) -> list[dict]:
        """Stream messages for what was appended since the last read."""
        found = []
        if self._tail is not None:
            lines = self._tail.read()
            if self._tail.restarted:
                # Replaced or truncated: the file is read again (from at most REPLAY_MAX before its
                # end); until that catches up with the end, only records not sent yet go out.
                self._tail.restarted = False
                self._catching_up = True
            for count, line in enumerate(lines, 1):
                if count % YIELD_EVERY == 0:
                    gevent.sleep(0)
                record = _parse(line)
                if record is None:
                    continue
                rid = _record_id(record)
                if self._catching_up and rid is not None and rid in self._sent:
                    continue
                for event in self._parser.events(record):
                    if self._catching_up and self._old(event["timestamp"], rid is not None):
                        continue
                    found.append(event)
                if rid is not None:
                    self._remember(rid)
            if self._catching_up and not self._tail.pending:
                self._catching_up = False
        elif self._to_end:
            self._find_end()  # history is never sent: the first read that works finds the end
        else:
            try:
                rows, self._rowid = opencode.off_hub(opencode.events_after, self._db(), self.target[2], self._seq,
                                                     self._rowid)
            except Exception:  # noqa: BLE001 - a locked or vanished database: tried again next time
                self.close()
                return []
            self._more = len(rows) >= opencode.EVENTS_LIMIT
            for seq, kind, data in rows:
                self._seq = seq
                found.extend(event for event in self._parser.events(kind, data)
                             if not (self._catching_up and self._old(event["timestamp"], True)))
            if not self._more:
                self._catching_up = False  # at the end: what comes next is new
        for event in found:
            self._watermark = max(self._watermark or 0, event["timestamp"])
        return [ev.message(self.harness, self.pid, event) for event in found]

    def _old(self, timestamp: int, has_id: bool) -> bool:
        """Whether an event re-read after a restart was sent (or predates the stream) already.
        A record with an id was checked by its id: only what is older than the newest sent is
        dropped, so a new record of the same millisecond goes out."""
        if self._floor is not None and timestamp < self._floor:
            return True
        if self._watermark is None:
            return False
        return timestamp < self._watermark if has_id else timestamp <= self._watermark

    def _remember(self, rid: str) -> None:
        self._sent[rid] = None
        if len(self._sent) > SENT_IDS:
            del self._sent[next(iter(self._sent))]

    @property
    def pending(self) -> bool:
        if self._tail is None:
            return self._more
        return self._tail.pending

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None


class Watch:
    """One stream: its directory, the agents seen, what is followed."""

    def __init__(self, directory: str, sink, opened_ms: int | None = None):
        self.directory = directory
        self.sink = sink
        self.opened_ms = opened_ms or ev.now_ms()  # "from the moment it opens"
        self._seen: dict[str, tuple[Found, object]] = {}  # key -> (agent, what it follows)
        self._follows: dict[str, Follow] = {}
        self._unknown: set[str] = set()  # harnesses not scanned when the stream opened

    def start(self, agents, failed=()) -> None:
        """``failed``: harnesses the opening scan could not read. Until one is read, its agents
        that turn up are taken as present at the opening (followed from the end, no run_started):
        "could not read them yet" is not "none there"."""
        self._unknown = set(failed)
        for found in agents:
            if inside(found.cwd, self.directory):
                self._seen[found.key] = (found, found.follow)
                if found.follow:
                    self._follows[found.key] = Follow(found, from_end=True, opened_ms=self.opened_ms)

    def update(self, agents, failed=()) -> list[dict]:
        """Messages for agents that came and went; new follows for new agents and sessions.
        ``failed``: harnesses this scan could not read, whose agents are not taken as gone."""
        messages = []
        present = {}
        every = EVERY_HARNESS in failed
        for found in agents:
            if inside(found.cwd, self.directory):
                present[found.key] = found
        for key, found in present.items():
            known = self._seen.get(key)
            if known is None and (found.harness in self._unknown or EVERY_HARNESS in self._unknown):
                self._seen[key] = (found, found.follow)
                if found.follow:
                    self._follows[key] = Follow(found, from_end=True, opened_ms=self.opened_ms)
                continue
            if known is None:
                where = subdirectory(found.cwd, self.directory)
                messages.append(ev.message(found.harness, found.pid,
                                           ev.event("run_started", ev.now_ms(), text=found.name or where)))
            follow = found.follow
            if known is not None and follow is None:
                follow = known[1]  # a moment of not knowing (a registry mid-write): keep following
            if known is None or known[1] != follow:
                old = self._follows.pop(key, None)
                if old is not None:
                    messages += old.read()  # what the old session wrote last
                    old.close()
                if follow:
                    self._follows[key] = Follow(found, from_end=False)
            self._seen[key] = (found, follow)
        if not every:
            self._unknown = {harness for harness in self._unknown if harness in failed}
        for key in [k for k in self._seen if k not in present and not every
                    and self._seen[k][0].harness not in failed]:
            found, _ = self._seen.pop(key)
            follow = self._follows.pop(key, None)
            if follow is not None:
                messages += follow.read()
                follow.close()
            messages.append(ev.message(found.harness, found.pid, ev.event("run_exited", ev.now_ms())))
        return messages

    def read(self) -> list[dict]:
        """What the followed agents appended: each follow is read (a budget of bytes at a time)
        again while more waits, for at most READ_SECONDS in all, yielding between reads."""
        messages = []
        deadline = time.monotonic() + READ_SECONDS
        follows = list(self._follows.values())
        while follows:
            more = []
            for follow in follows:
                try:
                    messages += follow.read()
                    if follow.pending:
                        more.append(follow)
                except Exception as exc:  # noqa: BLE001 - one agent's odd record must not cost the others theirs
                    daemon_log(f"agents: a transcript record could not be followed ({type(exc).__name__}); skipped")
                gevent.sleep(0)
            follows = more if time.monotonic() < deadline else []
        return messages

    @property
    def pending(self) -> bool:
        return any(follow.pending for follow in self._follows.values())

    def close(self) -> None:
        for follow in self._follows.values():
            follow.close()
        self._follows.clear()

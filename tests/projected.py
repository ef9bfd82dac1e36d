"""Recorded native frames (tests/fixtures/) projected into a thread's items, the way a chat does:
for the projector's own tests and for the panel's, which renders exactly these items.

Frames: tests/fixtures/claude-frames/ (Claude Code, ``cli->host`` lines are what the CLI wrote,
``host->cli`` what devhost wrote) and tests/fixtures/codex-frames/ (Codex, ``<`` lines).
"""
from __future__ import annotations

import json
from pathlib import Path

from actors.harness import HARNESSES
from actors.core.thread import Thread, new_info

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _lines(folder: str, name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / folder / f"{name}.jsonl").read_text().splitlines()]


def claude_frames(name: str) -> list[dict]:
    return [line["frame"] for line in _lines("claude-frames", name) if line["dir"] == "cli->host"]


def claude_written(name: str) -> list[dict]:
    return [line["frame"] for line in _lines("claude-frames", name) if line["dir"] == "host->cli"]


def codex_frames(name: str) -> list[dict]:
    return [line["msg"] for line in _lines("codex-frames", name) if line["dir"] == "<"]


def ops(projector, frames) -> list[tuple]:
    return [op for frame in frames for op in projector.project(frame)]


def upserts(projector, frames, kind=None) -> list[dict]:
    return [op[1] for op in ops(projector, frames) if op[0] == "upsert" and (kind is None or op[1]["kind"] == kind)]


def apply_ops(thread: Thread, found: list[tuple]) -> None:
    """A projector's operations applied to ``thread`` the way a chat applies them."""
    for op in found:
        if op[0] == "upsert":
            thread.upsert(op[1])
        elif op[0] == "append":
            _, item_id, text, skeleton = op
            if thread.item(item_id) is None and skeleton is not None:
                thread.upsert(skeleton)
            thread.append_text(item_id, text)
        elif op[0] == "background":
            thread.set_info(background=op[1])
        elif op[0] == "resolved":
            for kind, field in (("approval", "decision"), ("question", "state")):
                item = thread.item(f"{kind}-{op[1]}")
                if item is not None and item.get(field) == "pending":
                    thread.upsert({**item, field: "cancelled"})


def thread_from(projector, frames, user_text: str | None = None, end: str | None = None) -> Thread:
    """Applies the operations the way a chat does, inside one turn (opened with the person's
    message ``user_text`` when given, and ended ``end``: done, aborted, error)."""
    thread = Thread(new_info("c1", projector.provider, "/tmp", None, "full-access"))
    thread.open_turn("turn-1")
    if user_text is not None:
        thread.add_user("turn-1", user_text, "user-recorded")
    for frame in frames:
        apply_ops(thread, projector.project(frame))
    if end is not None:
        thread.end_turn(end)
    return thread


def recorded_items(harness: str, name: str, user_text: str = "", end: str | None = None) -> list[dict]:
    """The items a chat holds after one recorded exchange of ``harness`` (claude-code, codex)."""
    frames = claude_frames(name) if harness == "claude-code" else codex_frames(name)
    return thread_from(HARNESSES[harness].Projection("g"), frames, user_text, end).snapshot()["items"]

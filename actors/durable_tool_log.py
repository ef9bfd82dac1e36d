"""The chat log's records of the tools a CLI runs (actors/durable_face.py): a start and an end each.

A plain part of the DurableFace. It owns when each running tool item started; the face tells it
every change to a tool item it applies. A record names a tool and its subject (a path or a
folder), never its input or output.
"""
from __future__ import annotations

import time


def tool_subject(item: dict) -> str | None:
    """What a tool works on, for the log: a file's path or a command's folder, never more."""
    tool_input = item.get("input") if isinstance(item.get("input"), dict) else {}
    for key in ("file_path", "notebook_path", "path", "cwd"):
        if isinstance(tool_input.get(key), str):
            return tool_input[key]
    changes = item.get("changes")
    if isinstance(changes, list) and changes and isinstance(changes[0], dict):
        return changes[0].get("path")
    return None


class ToolLog:
    def __init__(self, log):
        self._log = log
        self._started: dict[str, float] = {}  # running tool item id -> when it started (monotonic)

    def changed(self, before: dict | None, change: dict) -> None:
        """A tool item is upserted (``before``: the item as it was, None for a new one)."""
        item = {**(before or {}), **change}
        item_id, state = item["id"], item.get("state")
        if before is None:
            self._started[item_id] = time.monotonic()
            self._log("tool.start", turn=self._log.turn, tool=item.get("toolUseId"), name=item.get("name"),
                      path=tool_subject(item))
        if state in ("done", "error") and item_id in self._started:
            started = self._started.pop(item_id)
            self._log("tool.end", turn=self._log.turn, tool=item.get("toolUseId"), name=item.get("name"),
                      outcome=state, took=f"{time.monotonic() - started:.1f}s", exit=item.get("exitCode"))

    def running(self) -> list[str]:
        """The item ids of the tools started and not ended, in the order they started."""
        return list(self._started)

"""Activity events: agent-parser's vocabulary, and the message the stream sends for each.

A parser turns one transcript record into zero or more events; the stream sends each as
``{harness, pid, eventType, timestamp, role?, toolName?, text?, isError?}`` with ``text`` cut
at 4 KiB on a UTF-8 boundary.

Event types (agent-parser, as reconstructed from its consumers): ``run_started``,
``run_exited``, ``turn_start``, ``user_prompt``, ``agent_message``, ``text``, ``thinking``,
``tool_call``, ``tool_use``, ``tool_result``, ``file_modification``, ``turn_end``,
``model_change``, ``error``. OpenCode keeps its own names (``user_prompt``, ``text``,
``tool_use``) as agent-parser does.
"""
from __future__ import annotations

import json
import math
from datetime import datetime

from actors.clock import now_ms
from actors.session_rules import cut_utf8

TEXT_BYTES = 4096
EVENT_TYPES = frozenset({
    "run_started", "run_exited", "turn_start", "user_prompt", "agent_message", "text", "thinking", "tool_call",
    "tool_use", "tool_result", "file_modification", "turn_end", "model_change", "error",
})
# The input field that says best what a tool call does, in order of preference.
_SUMMARY_KEYS = ("command", "cmd", "file_path", "filePath", "path", "pattern", "url", "query", "description",
                 "prompt", "question")


def iso_ms(value) -> int | None:
    """Unix ms from an ISO-8601 timestamp (``…Z`` or with an offset), or from a number of ms."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if math.isfinite(value) else None  # json accepts NaN and Infinity
    if not isinstance(value, str) or not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def event(event_type: str, timestamp: int | None, *, role: str | None = None, tool_name: str | None = None,
          text: str | None = None, is_error: bool | None = None) -> dict:
    found = {"eventType": event_type, "timestamp": timestamp if timestamp is not None else now_ms()}
    if role:
        found["role"] = role
    if tool_name:
        found["toolName"] = str(tool_name)
    if text is not None and text != "":
        found["text"] = text
    if is_error is not None:
        found["isError"] = bool(is_error)
    return found


def message(harness: str, pid: int, found: dict) -> dict:
    """The stream's message for one event, its text cut at 4 KiB."""
    shaped = {"harness": harness, "pid": pid, "eventType": found["eventType"], "timestamp": found["timestamp"]}
    for name in ("role", "toolName", "text", "isError"):
        if name in found:
            shaped[name] = found[name]
    if isinstance(shaped.get("text"), str):
        shaped["text"] = cut_utf8(shaped["text"], TEXT_BYTES)
    return shaped


def encode(shaped: dict) -> bytes:
    """A stream message as the UTF-8 JSON text frame it is sent as. A lone surrogate (JSON
    transcripts may hold ``\\ud800``) becomes U+FFFD rather than invalid UTF-8."""
    return json.dumps(shaped, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")


def tool_summary(tool_input) -> str:
    """A short text for a tool call: its command, path or query, else its input as JSON."""
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            return tool_input
    if isinstance(tool_input, dict):
        for name in _SUMMARY_KEYS:
            value = tool_input.get(name)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value = " ".join(value)
            if isinstance(value, str) and value:
                return value
    if tool_input in (None, {}, [], ""):
        return ""
    return json.dumps(tool_input, ensure_ascii=False)[:TEXT_BYTES * 2]


def text_of(content) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""

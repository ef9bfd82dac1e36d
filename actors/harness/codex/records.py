"""What Codex's rollout records mean to the agents scanner: their state and events.

A rollout's first line is ``session_meta`` (``id``, ``cwd``; ``parent_thread_id`` for a
subagent's thread), then ``turn_context``, ``event_msg`` and ``response_item`` records. Both
record formats are read: 0.169's (``item_completed`` carrying UserMessage and AgentMessage
items) and the earlier one's (``event_msg`` ``user_message`` / ``agent_message``; a tool's
output as ``{"output", "metadata": {"exit_code"}}``). Pure: records in, no file reading.
"""
from __future__ import annotations

import json
import re

from actors.agents import events as ev
from actors.agents.jsonl import Summary

_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
_HEAD_TYPE = re.compile(rb'"type"\s*:\s*"([a-z_]+)"')
_WAITING_EVENTS = frozenset({"exec_approval_request", "apply_patch_approval_request", "request_user_input",
                             "elicitation_request", "request_permissions"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                      "tool_search_call_output"})


def is_subagent(meta: dict) -> bool:
    source = meta.get("source")
    if meta.get("parent_thread_id"):
        return True
    if isinstance(source, dict) and "subagent" in source:
        return True
    return meta.get("thread_source") == "subagent"


def meta_of(record: dict | None) -> dict | None:
    if not record or record.get("type") != "session_meta" or not isinstance(record.get("payload"), dict):
        return None
    meta = record["payload"]
    return meta if isinstance(meta.get("id"), str) else None


class CodexSummary(Summary):
    def __init__(self):
        super().__init__()
        self.last: tuple[str, object] | None = None
        self.policy: str | None = None

    def feed(self, record: dict) -> None:
        ms = ev.iso_ms(record.get("timestamp"))
        if ms is not None:
            self.last_ms = max(self.last_ms or 0, ms)
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        inner = payload.get("type")
        if kind == "session_meta":
            self.last = self.last or ("fresh", None)
        elif kind == "turn_context":
            if isinstance(payload.get("approval_policy"), str):
                self.policy = payload["approval_policy"]
        elif kind == "event_msg":
            if inner in ("task_complete", "turn_aborted"):
                self._set("end")
            elif inner in _WAITING_EVENTS:
                self._set("asks")
            elif inner in ("task_started", "user_message", "agent_message", "item_completed", "agent_reasoning"):
                self._set("working")
        elif kind == "response_item":
            if inner in _CALLS:
                arguments = payload.get("arguments") or payload.get("input") or ""
                escalated = "require_escalated" in (arguments if isinstance(arguments, str) else json.dumps(arguments))
                self._set("call", (payload.get("name"), escalated))
            elif inner in _OUTPUTS or inner in ("message", "reasoning"):
                self._set("working")

    def carry(self, older: Summary) -> None:
        super().carry(older)
        if self.policy is None and isinstance(older, CodexSummary):
            self.policy = older.policy  # the last turn_context may be outside the new window

    def _set(self, kind, detail=None):
        self.last = (kind, detail)
        self.decisive = True

    def feed_long(self, head: bytes) -> None:
        # A huge line is a tool's output, a big message or instructions: the turn goes on.
        if _HEAD_TYPE.search(head):
            self._set("working")


class CodexParser:
    """Rollout lines -> events; stateful (tool names by call id, the model in use)."""

    def __init__(self):
        self._tools: dict[str, str] = {}
        self._model: str | None = None

    def events(self, record: dict) -> list[dict]:
        ms = ev.iso_ms(record.get("timestamp"))
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        inner = payload.get("type")
        if kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model != self._model:
                self._model = model
                return [ev.event("model_change", ms, text=model)]
            return []
        if kind == "event_msg":
            return self._event_msg(inner, payload, ms)
        if kind == "response_item":
            return self._response_item(inner, payload, ms)
        return []

    def _event_msg(self, inner, payload, ms) -> list[dict]:
        if inner == "user_message":
            return [ev.event("turn_start", ms, role="user", text=payload.get("message") or "")]
        if inner == "agent_message":
            return [ev.event("agent_message", ms, role="assistant", text=payload.get("message") or "")]
        if inner == "agent_reasoning":
            return [ev.event("thinking", ms, role="assistant", text=payload.get("text") or "")]
        if inner == "item_completed":
            item = payload.get("item") if isinstance(payload.get("item"), dict) else {}
            if item.get("type") == "UserMessage":
                return [ev.event("turn_start", ms, role="user", text=ev.text_of(item.get("content")))]
            if item.get("type") == "AgentMessage":
                return [ev.event("agent_message", ms, role="assistant", text=ev.text_of(item.get("content")))]
            return []
        if inner == "task_complete":
            return [ev.event("turn_end", ms, role="assistant", text=payload.get("last_agent_message") or "")]
        if inner == "turn_aborted":
            return [ev.event("turn_end", ms, role="assistant",
                             text=f"turn aborted: {payload.get('reason') or ''}".strip())]
        if inner in ("error", "stream_error"):
            return [ev.event("error", ms, text=payload.get("message") or "error", is_error=True)]
        return []

    def _response_item(self, inner, payload, ms) -> list[dict]:
        if inner in _CALLS:
            name = payload.get("name") or inner
            if isinstance(payload.get("call_id"), str):
                self._tools[payload["call_id"]] = name
            arguments = payload.get("arguments", payload.get("input", payload.get("action")))
            return [ev.event("tool_call", ms, role="assistant", tool_name=name, text=ev.tool_summary(arguments))]
        if inner in _OUTPUTS:
            name = self._tools.pop(payload.get("call_id"), None)
            output = payload.get("output")
            is_error = False
            if isinstance(output, dict):  # the earlier record format: {"output", "metadata": {"exit_code"}}
                code = (output.get("metadata") or {}).get("exit_code")
                is_error = isinstance(code, int) and code != 0
                output = output.get("output") or ""
            elif isinstance(output, str):
                try:
                    decoded = json.loads(output)
                except ValueError:
                    decoded = None
                if isinstance(decoded, dict) and "output" in decoded:
                    code = (decoded.get("metadata") or {}).get("exit_code")
                    is_error = isinstance(code, int) and code != 0
                    output = decoded.get("output") or ""
                else:
                    match = _EXIT.search(output)
                    is_error = bool(match and int(match.group(1)) != 0)
            return [ev.event("tool_result", ms, role="tool", tool_name=name, text=ev.text_of(output),
                             is_error=is_error)]
        return []

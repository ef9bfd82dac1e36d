"""What Claude Code's transcript records mean to the agents scanner: their state and events.

A transcript is ``<config>/projects/<slug(cwd)>/<sessionId>.jsonl`` (one content block per
assistant line; a subagent's records carry ``isSidechain``). ``ClaudeSummary`` keeps the
record that tells the state, ``ClaudeParser`` turns records into agent-parser events
(actors/agents/events.py). Pure: records in, no file reading.
"""
from __future__ import annotations

import re

from actors.agents import events as ev
from actors.agents.jsonl import Summary

END_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
_WRAPPED = re.compile(r"^\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
                      r"local-command-stderr|task-notification|user-prompt-submit-hook|bash-input|bash-stdout|"
                      r"bash-stderr)\b")
_HEAD_ROLE = re.compile(rb'"role"\s*:\s*"(user|assistant)"')
_HEAD_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')


class ClaudeSummary(Summary):
    """The last record that tells the state, the latest title, the last timestamp."""

    def __init__(self):
        super().__init__()
        self.last: tuple[str, object, int | None] | None = None  # (kind, detail, ms)
        self._user_title: str | None = None
        self._ai_title: str | None = None

    def feed(self, record: dict) -> None:
        kind = record.get("type")
        ms = ev.iso_ms(record.get("timestamp"))
        if ms is not None:
            self.last_ms = max(self.last_ms or 0, ms)
        if kind in ("custom-title", "agent-name"):
            title = record.get("customTitle") if kind == "custom-title" else record.get("agentName")
            if isinstance(title, str) and title.strip():
                self._user_title = title.strip()
        elif kind in ("ai-title", "summary"):
            title = record.get("aiTitle") or record.get("title") or record.get("summary")
            if isinstance(title, str) and title.strip():
                self._ai_title = title.strip()
        if record.get("isSidechain") is True:
            return
        found = _state_record(record)
        if found:
            self.last = (*found, ms)
            self.decisive = True

    def feed_long(self, head: bytes) -> None:
        if _HEAD_SIDECHAIN.search(head):
            return
        role = _HEAD_ROLE.search(head)
        if role:
            kind = "tool_result" if role.group(1) == b"user" and b'"tool_result"' in head else "working"
            self.last = (kind, None, None)
            self.decisive = True

    @property
    def name(self):
        return self._user_title or self._ai_title

    @name.setter
    def name(self, value):
        self._user_title = value

    def carry(self, older: "Summary") -> None:
        if isinstance(older, ClaudeSummary):
            self._user_title = self._user_title or older._user_title
            self._ai_title = self._ai_title or older._ai_title


def _state_record(record: dict) -> tuple[str, object] | None:
    kind = record.get("type")
    if kind == "user":
        content = (record.get("message") or {}).get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return "tool_result", None
        if record.get("isMeta") or not _is_prompt(ev.text_of(content)):
            return None  # injected context: nothing is asked of the model by it alone
        return "prompt", None
    if kind == "assistant":
        if record.get("error") or record.get("isApiErrorMessage"):
            return "error", None
        message = record.get("message") or {}
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        last = blocks[-1] if blocks else {}
        if last.get("type") == "tool_use":
            return "tool_use", last.get("name")
        if message.get("stop_reason") in END_REASONS:
            return "end", None
        return "working", None
    if kind == "system":
        subtype = record.get("subtype")
        if subtype == "turn_duration":
            return "end", None
        if subtype == "api_error":
            return ("working", None) if record.get("retryInMs") is not None else ("error", None)
    return None


def _is_prompt(text: str) -> bool:
    return bool(text.strip()) and not _WRAPPED.match(text)


class ClaudeParser:
    """Transcript records -> agent-parser events; remembers tool names for their results."""

    def __init__(self):
        self._tools: dict[str, str] = {}

    def events(self, record: dict) -> list[dict]:
        if record.get("isSidechain") is True:
            return []
        kind = record.get("type")
        ms = ev.iso_ms(record.get("timestamp"))
        if kind == "user":
            return self._user(record, ms)
        if kind == "assistant":
            return self._assistant(record, ms)
        if kind == "system":
            return _system(record, ms)
        return []

    def _user(self, record: dict, ms) -> list[dict]:
        content = (record.get("message") or {}).get("content")
        found = []
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    name = self._tools.pop(block.get("tool_use_id"), None)
                    found.append(ev.event("tool_result", ms, role="tool", tool_name=name,
                                          text=ev.text_of(block.get("content")), is_error=bool(block.get("is_error"))))
        if found:
            return found
        text = ev.text_of(content)
        if record.get("isMeta") or not _is_prompt(text):
            return []
        return [ev.event("turn_start", ms, role="user", text=text)]

    def _assistant(self, record: dict, ms) -> list[dict]:
        message = record.get("message") or {}
        if record.get("error") or record.get("isApiErrorMessage"):
            text = ev.text_of(message.get("content")) or str(record.get("error") or "error")
            return [ev.event("error", ms, text=text, is_error=True)]
        found = []
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        ends = message.get("stop_reason") in END_REASONS
        for index, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text":
                last = ends and index == len(blocks) - 1
                found.append(ev.event("turn_end" if last else "agent_message", ms, role="assistant",
                                      text=block.get("text") or ""))
            elif kind == "thinking":
                found.append(ev.event("thinking", ms, role="assistant", text=block.get("thinking") or ""))
            elif kind == "tool_use":
                name = block.get("name") or "tool"
                if isinstance(block.get("id"), str):
                    self._tools[block["id"]] = name
                found.append(ev.event("tool_call", ms, role="assistant", tool_name=name,
                                      text=ev.tool_summary(block.get("input"))))
        return found


def _system(record: dict, ms) -> list[dict]:
    subtype = record.get("subtype")
    if subtype == "api_error" or record.get("level") == "error":
        error = record.get("error")
        text = ""
        if isinstance(error, dict):
            text = error.get("formatted") or error.get("message") or ""
        elif isinstance(error, str):
            text = error
        text = text or str(record.get("content") or "API error")
        if record.get("retryInMs") is not None:
            text += f" (retry {record.get('retryAttempt')} of {record.get('maxRetries')})"
        return [ev.event("error", ms, text=text, is_error=True)]
    return []

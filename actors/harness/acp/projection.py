"""ACP ``session/update`` notifications and ``session/request_permission`` requests turned into a
chat's thread changes (items), with the operations of Claude Code's projection
(actors/harness/claude/projection.py): ``("upsert", item)``, ``("append", item_id, text,
skeleton)``, and ``("resolved", request_id)`` when a request ends unanswered (a cancelled turn).

A projection is per agent process: its items get ids ``<id prefix>:<ref>``. The agent numbers
its own requests from 0 in every process (OpenCode does), so a request's id in the thread
carries the prefix too, as Codex's do; ``native`` gives the agent's id back.

Items made here: ``assistant`` and ``thinking`` (streamed chunks, one item per ``messageId``),
``tool`` (tool_call / tool_call_update: ``state`` running/done/error, ``output`` from text
content, ``changes`` from diff content), ``plan`` (the agent's plan entries, or the todos of
its own todo tool where it sends its plan so) and ``approval``
(its ``options`` are the agent's own, answered by optionId). The user's messages are the
host's, not here: ``user_message_chunk`` (a session/load's replay) makes nothing.

Pure translation: no I/O.
"""
from __future__ import annotations

import difflib

TOOL_STATES = {"pending": "running", "in_progress": "running", "completed": "done", "failed": "error"}
DECISION_KINDS = {"allow": ("allow_once", "allow_always"), "allow-always": ("allow_always",),
                  "deny": ("reject_once", "reject_always")}
OUTPUT_CHARS = 64 * 1024  # of a tool's text output, kept on its item
TODO_TOOLS = frozenset({"todowrite"})  # tools whose input is the agent's plan (OpenCode 1.18.33's)


def unified_diff(path: str, old: str | None, new: str) -> str:
    """An ACP diff (whole old and new texts) as the unified diff the other harnesses' items carry."""
    lines = difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile="/dev/null" if old is None else path, tofile=path)
    return "".join(lines)


def _text_of(content) -> str | None:
    """The text of a tool call's ``content`` entries (``{"type": "content", "content": {text}}``)."""
    parts = [c["content"]["text"] for c in content if isinstance(c, dict) and c.get("type") == "content"
             and isinstance(c.get("content"), dict) and isinstance(c["content"].get("text"), str)]
    return "".join(parts)[-OUTPUT_CHARS:] if parts else None


def _changes(update: dict) -> list[dict] | None:
    """A tool call's file changes: ACP's own ``diff`` content (path, oldText, newText), or, where
    an agent gives none, OpenCode's ``rawOutput.metadata.files`` (its apply_patch reports
    ``{filePath, type, patch}``: measured, tests/fixtures/acp/opencode/edit.jsonl)."""
    content = update.get("content") if isinstance(update.get("content"), list) else []
    diffs = [c for c in content if isinstance(c, dict) and c.get("type") == "diff" and isinstance(c.get("path"), str)
             and isinstance(c.get("newText"), str)]
    if diffs:
        return [{"path": d["path"], "kind": "add" if d.get("oldText") is None else "update",
                 "diff": unified_diff(d["path"], d.get("oldText"), d["newText"])} for d in diffs]
    raw = update.get("rawOutput") if isinstance(update.get("rawOutput"), dict) else {}
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    files = [f for f in meta.get("files") or [] if isinstance(f, dict) and isinstance(f.get("filePath"), str)] \
        if isinstance(meta.get("files"), list) else []
    if files:
        return [{"path": f["filePath"], "kind": f.get("type") if isinstance(f.get("type"), str) else "update",
                 "diff": f.get("patch") if isinstance(f.get("patch"), str) else ""} for f in files]
    return None


class AcpProjector:
    provider = "acp"

    def __init__(self, id_prefix: str):
        self.id_prefix = id_prefix
        self._requests: dict[str, dict] = {}  # request id in the thread -> {native, options}
        self._message: str | None = None  # the agent message being streamed (its ref)
        self._chunks = 0  # counts the stretches of text of agents that send no messageId
        self._todo_calls: set = set()  # toolCallIds of an agent's own todo tool (TODO_TOOLS)

    def _id(self, ref) -> str:
        return f"{self.id_prefix}:{ref}"

    def project(self, frame: dict) -> list[tuple]:
        """The operations of one frame read on its own (a test's replay); a running agent's
        frames come through its driver, which calls the same handlers."""
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if frame.get("method") == "session/request_permission" and "id" in frame:
            return self.request(frame["id"], params)
        if frame.get("method") == "session/update" and isinstance(params.get("update"), dict):
            return self.update(params["update"])
        return []

    # ---- session/update ------------------------------------------------------------------------

    def update(self, update: dict) -> list[tuple]:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            return self._chunk(update, thinking=kind == "agent_thought_chunk")
        self._message = None  # text after anything else is a new stretch
        if kind == "tool_call":
            return [("upsert", self._tool(update, first=True)), *self._todos(update)]
        if kind == "tool_call_update" and isinstance(update.get("toolCallId"), str):
            return [("upsert", self._tool(update, first=False)), *self._todos(update)]
        if kind == "plan" and isinstance(update.get("entries"), list):
            return [self._plan(update["entries"])]
        return []

    def _plan(self, entries: list) -> tuple:
        entries = [{"content": e.get("content") if isinstance(e.get("content"), str) else "",
                    "status": e.get("status") if isinstance(e.get("status"), str) else "pending",
                    **({"priority": e["priority"]} if isinstance(e.get("priority"), str) else {})}
                   for e in entries if isinstance(e, dict)]
        # ACP sends the whole plan every time: one item per process, replaced each time.
        return ("upsert", {"id": self._id("plan"), "kind": "plan", "entries": entries})

    def _todos(self, update: dict) -> list[tuple]:
        """An agent whose plan is a tool call of its own (OpenCode's ``todowrite``, which sends no
        ``plan`` update: tests/fixtures/acp/opencode/plan.jsonl) shows it as the plan too: its
        input's ``todos`` (content, status, priority: the plan entry's own fields), whole."""
        ref = update.get("toolCallId")
        if update.get("title") in TODO_TOOLS:
            self._todo_calls.add(ref)  # its later updates retitle it ("2 todos")
        raw = update.get("rawInput") if isinstance(update.get("rawInput"), dict) else {}
        if ref not in self._todo_calls or not isinstance(raw.get("todos"), list):
            return []
        return [self._plan(raw["todos"])]

    def _chunk(self, update: dict, thinking: bool) -> list[tuple]:
        content = update.get("content") if isinstance(update.get("content"), dict) else {}
        text = content.get("text") if content.get("type") == "text" else None
        if not isinstance(text, str):
            return []  # an image or a resource the agent answered with: not shown yet
        ref = update.get("messageId") if isinstance(update.get("messageId"), str) else None
        if ref is None:
            if self._message is None:
                self._chunks += 1
            ref = self._message or f"msg-{self._chunks}"
        self._message = ref
        item_id = self._id(f"{ref}:think" if thinking else ref)
        skeleton = {"id": item_id, "kind": "thinking" if thinking else "assistant", "text": "", "streaming": True}
        return [("append", item_id, text, skeleton)]

    def _tool(self, update: dict, first: bool) -> dict:
        ref = update.get("toolCallId")
        item: dict = {"id": self._id(ref), "kind": "tool", "toolUseId": ref}
        if first:
            item.update(name=None, input={}, output=None, state="running", parentToolUseId=None)
        if isinstance(update.get("title"), str):
            item["name"] = update["title"]
        if isinstance(update.get("kind"), str):
            item["toolKind"] = update["kind"]  # ACP's read/edit/execute/...: what the title cannot say
        if isinstance(update.get("rawInput"), dict) and (first or update["rawInput"]):
            item["input"] = update["rawInput"]
        if update.get("status") in TOOL_STATES:
            item["state"] = TOOL_STATES[update["status"]]
        if isinstance(update.get("locations"), list):
            paths = [loc["path"] for loc in update["locations"] if isinstance(loc, dict)
                     and isinstance(loc.get("path"), str)]
            if paths:
                item["locations"] = paths
        if isinstance(update.get("content"), list):
            output = _text_of(update["content"])
            if output is not None:
                item["output"] = output
        changes = _changes(update)
        if changes is not None:
            item["changes"] = changes
        return item

    # ---- session/request_permission --------------------------------------------------------------

    def request(self, native, params: dict) -> list[tuple]:
        """A permission request: an approval whose choices are the agent's own options."""
        request_id = self._id(native)
        tool = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
        options = [{"optionId": o["optionId"], "name": o.get("name") if isinstance(o.get("name"), str)
                    else o["optionId"], "kind": o.get("kind")}
                   for o in params.get("options") or [] if isinstance(o, dict) and isinstance(o.get("optionId"), str)]
        self._requests[request_id] = {"native": native, "options": options}
        return [("upsert", {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id,
                            "toolUseId": tool.get("toolCallId"), "toolName": tool.get("title"),
                            "toolKind": tool.get("kind"), "input": tool.get("rawInput") or {},
                            "description": tool.get("title"), "options": options,
                            "canAllowAlways": any(o["kind"] == "allow_always" for o in options),
                            "decision": "pending"})]

    def answer_approval(self, request_id, decision: str, message: str | None) -> dict:
        """The agent's own answer: the option the decision names. ``decision`` is allow /
        allow-always / deny, or one of the request's optionIds itself. "allow" takes allow_once,
        else the only allowing option the agent offered; "deny" with no rejecting option is the
        ``cancelled`` outcome (ACP's one answer that allows nothing)."""
        options = (self._requests.get(request_id) or {}).get("options") or []
        chosen = next((o for o in options if o["optionId"] == decision), None)
        for kind in DECISION_KINDS.get(decision, ()) if chosen is None else ():
            chosen = next((o for o in options if o["kind"] == kind), None)
            if chosen is not None:
                break
        if chosen is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}

    def answer_question(self, request_id, questions: list[dict], answers: dict) -> dict:
        return {"outcome": {"outcome": "cancelled"}}  # ACP asks no questions (no question items are made)

    @staticmethod
    def decision_of_options(options: list, result: dict) -> str:
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return "deny"
        kind = next((o["kind"] for o in options if o["optionId"] == outcome.get("optionId")), None)
        return {"allow_once": "allow", "allow_always": "allow-always"}.get(kind, "deny")

    def decision_of(self, result: dict) -> str:
        """What an answer given in the agent's own words decided, in the thread's words (looked
        up among the open requests' options: an optionId is the agent's own word)."""
        options = [o for r in self._requests.values() for o in r["options"]]
        return self.decision_of_options(options, result)

    def turn_ending(self) -> list[tuple]:
        return []  # ACP has no background work that outlives a prompt

    def cancelled(self) -> list[tuple]:
        """The prompt ended: every request still open was withdrawn (the client answered it
        ``cancelled``, as ACP requires on a cancel)."""
        ops = [("resolved", request_id) for request_id in self._requests]
        self._requests.clear()
        return ops

    def stop_requested(self, task_id: str) -> None:
        pass  # no background tasks

    def native(self, request_id):
        entry = self._requests.get(request_id) if isinstance(request_id, str) else None
        return entry["native"] if entry else None

    def settled(self, request_id) -> None:
        self._requests.pop(request_id, None)

    def thread_id_of(self, native):
        return next((mine for mine, entry in self._requests.items() if entry["native"] == native), None)

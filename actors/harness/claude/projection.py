"""Claude Code's frames turned into a chat's thread changes (items).

A projection is per CLI process: its items get ids ``<id prefix>:<ref>`` so a restarted CLI
never overwrites what an earlier one wrote. It answers a list of operations:
``("upsert", item)`` merges an item by id, ``("append", item_id, text, skeleton)`` appends text
to an item (adding ``skeleton`` first if it does not exist yet), ``("background", tasks)`` says
what runs on past its turn, ``("native", fields)`` what the CLI's own ids of the running turn are
(merged into the turn item's ``native``: what a rewind needs, actors/harness/rewind.py). The
user's own messages and the turns are made by the host, not here.

The driver (protocol.py) reads each frame once and hands it to the handler for its kind here;
``project`` is the same dispatch for a frame read on its own (a saved transcript's record).
It also answers the native form of an approval or a question: ``answer_approval`` and
``answer_question`` build the CLI's own reply from a decision (allow / allow-always / deny).
Claude Code's request ids are unique already, so a request's id in the thread is its own.

Pure translation: no I/O.
"""
from __future__ import annotations

DELEGATING_TOOLS = ("Task", "Agent")  # Claude Code's tools that start a subagent
TASK_STATUS = {"completed": "done", "failed": "error", "killed": "stopped", "stopped": "stopped",
               "running": "running", None: "running"}


class ClaudeProjector:
    provider = "claude"

    def __init__(self, id_prefix: str):
        self.id_prefix = id_prefix
        self._blocks: dict[int, str] = {}  # stream content block index -> item id
        self._requests: dict = {}  # request id -> the can_use_tool request
        self._tool_inputs: dict[str, dict] = {}  # tool_use id -> its input (a background task's command)
        self._agents: set[str] = set()  # tool_use ids of the delegating tool calls (their subagents)
        self._shells: dict[str, str] = {}  # background task id -> its item id
        self._by_type = {"stream_event": self.stream_event, "assistant": self.assistant, "user": self.user,
                         "control_request": self.request, "control_cancel_request": self.withdraw,
                         "system": self.system}

    def _id(self, ref: str) -> str:
        return f"{self.id_prefix}:{ref}"

    def project(self, frame: dict) -> list[tuple]:
        """The operations of one frame read on its own (a saved transcript's record, a test's
        replay); a running CLI's frames come through its driver, which calls the same handler."""
        handler = self._by_type.get(frame.get("type"))
        return handler(frame) if handler is not None else []

    # ---- one handler per frame type: the driver (protocol.py) calls the one of each frame -------

    def stream_event(self, frame: dict) -> list[tuple]:
        return self._stream(frame.get("event") or {}, frame.get("api_message_id") or "msg",
                            frame.get("parent_tool_use_id"))

    def assistant(self, frame: dict) -> list[tuple]:
        if frame.get("is_api_error_message"):
            return []  # Claude Code's own words for a failed request: the turn's error says them
        return self._assistant(frame.get("message") or {}, frame.get("parent_tool_use_id")) + _chain_entry(frame)

    def user(self, frame: dict) -> list[tuple]:
        if frame.get("isReplay"):
            return _chain_entry(frame)  # the echo of a message devhost wrote: the host made its item
        return self._tool_results(frame.get("message") or {}, frame.get("tool_use_result")) + _chain_entry(frame)

    def request(self, frame: dict) -> list[tuple]:
        return self._request(frame)

    def withdraw(self, frame: dict) -> list[tuple]:
        return self._withdraw(frame.get("request_id"))

    def system(self, frame: dict) -> list[tuple]:
        subtype = frame.get("subtype")
        if subtype in ("task_started", "task_updated", "task_notification"):
            return self._task(frame)
        if subtype == "background_tasks_changed":
            return [("background", [_background(task) for task in frame.get("tasks") or [] if isinstance(task, dict)])]
        if subtype == "api_retry":
            status = f"{frame['error_status']} " if frame.get("error_status") else ""
            return [("upsert", {"id": self._id(f"retry-{frame.get('uuid')}"), "kind": "note", "level": "info",
                                "text": f"API error {status}{frame.get('error') or ''}; retrying (attempt "
                                        f"{frame.get('attempt')} of {frame.get('max_retries')})."})]
        if subtype == "compact_boundary":
            meta = frame.get("compact_metadata") or {}
            return [("upsert", {"id": self._id(f"compact-{frame.get('uuid')}"), "kind": "compaction",
                                "preTokens": meta.get("pre_tokens")})]
        return []

    def _stream(self, event: dict, message_id: str, parent) -> list[tuple]:
        kind = event.get("type")
        index = event.get("index", 0)
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") in ("text", "thinking"):
                item_kind = "assistant" if block["type"] == "text" else "thinking"
                item_id = self._id(f"{message_id}:{index}" + (":think" if item_kind == "thinking" else ""))
                self._blocks[index] = item_id
                return [("upsert", {"id": item_id, "kind": item_kind, "text": "", "streaming": True,
                                    **({"parentToolUseId": parent} if parent else {})})]
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            text = delta.get("text") if delta.get("type") == "text_delta" else delta.get("thinking")
            if isinstance(text, str) and index in self._blocks:
                return [("append", self._blocks[index], text, None)]
        if kind == "message_stop":
            self._blocks.clear()
        return []

    def _assistant(self, message: dict, parent) -> list[tuple]:
        ops = []
        message_id = message.get("id") or "msg"
        for index, block in enumerate(message.get("content") or []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                ops.append(("upsert", self._text_item(message_id, block, "assistant", parent)))
            elif block.get("type") == "thinking":
                ops.append(("upsert", self._text_item(message_id, block, "thinking", parent)))
            elif block.get("type") == "tool_use":
                tool_input = block.get("input") or {}
                self._tool_inputs[block.get("id")] = tool_input
                ops.append(("upsert", {"id": self._id(block.get("id", f"tool-{index}")), "kind": "tool",
                                       "toolUseId": block.get("id"), "name": block.get("name"),
                                       "input": tool_input, "output": None, "state": "running",
                                       "parentToolUseId": parent}))
                if block.get("name") in DELEGATING_TOOLS:
                    # A delegated agent: an item of its own; its frames name this tool_use as parent.
                    self._agents.add(block.get("id"))
                    ops.append(("upsert", {"id": self._id(f"sub-{block.get('id')}"), "kind": "subagent",
                                           "toolUseId": block.get("id"),
                                           "description": tool_input.get("description") or "",
                                           "subagentType": tool_input.get("subagent_type"), "status": "running",
                                           "parentToolUseId": parent}))
        return ops

    def _task(self, frame: dict) -> list[tuple]:
        """Claude Code's background work (a subagent, a background shell) starting and ending."""
        tool_use_id, task_id = frame.get("tool_use_id"), frame.get("task_id")
        subtype = frame["subtype"]
        if subtype == "task_started":
            if frame.get("task_type") == "local_agent":
                self._agents.add(tool_use_id)
                return [("upsert", {"id": self._id(f"sub-{tool_use_id}"), "kind": "subagent",
                                    "toolUseId": tool_use_id, "taskId": task_id, "status": "running"})]
            self._shells[task_id] = self._id(f"task-{task_id}")
            return [("upsert", {"id": self._shells[task_id], "kind": "task", "taskId": task_id,
                                "toolUseId": tool_use_id, "taskType": frame.get("task_type"),
                                "description": frame.get("description") or "",
                                "command": (self._tool_inputs.get(tool_use_id) or {}).get("command"),
                                "status": "running"})]
        reported = (frame.get("patch") or {}).get("status") if subtype == "task_updated" else frame.get("status")
        status = TASK_STATUS.get(reported, "running")
        if status == "running":
            return []
        if tool_use_id in self._agents:
            return [("upsert", {"id": self._id(f"sub-{tool_use_id}"), "kind": "subagent", "status": status})]
        if task_id in self._shells:
            return [("upsert", {"id": self._shells[task_id], "kind": "task", "status": status})]
        return []

    def _text_item(self, message_id: str, block: dict, kind: str, parent) -> dict:
        # One assistant frame per content block; the stream's item for the same block is completed.
        matching = [item_id for item_id in self._blocks.values() if item_id.startswith(self._id(message_id))
                    and item_id.endswith(":think") == (kind == "thinking")]
        item_id = matching[-1] if matching else self._id(f"{message_id}:{kind}:{len(block.get('text', ''))}")
        text = block.get("text") if kind == "assistant" else block.get("thinking", "")
        item = {"id": item_id, "kind": kind, "text": text or "", "streaming": False}
        if parent:
            item["parentToolUseId"] = parent
        return item

    def _tool_results(self, message: dict, structured) -> list[tuple]:
        ops = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                output = block.get("content")
                if isinstance(output, list):
                    output = "\n".join(part.get("text", "") for part in output if isinstance(part, dict))
                ops.append(("upsert", {"id": self._id(block.get("tool_use_id", "")), "kind": "tool",
                                       "output": output, "state": "error" if block.get("is_error") else "done"}))
        return ops

    def _request(self, frame: dict) -> list[tuple]:
        request = frame.get("request") or {}
        request_id = frame.get("request_id")
        if request.get("subtype") != "can_use_tool":
            return []
        self._requests[request_id] = request
        tool_input = request.get("input") or {}
        if request.get("tool_name") == "AskUserQuestion" and isinstance(tool_input.get("questions"), list):
            questions = [{"id": str(i), "header": q.get("header", ""), "question": q.get("question", ""),
                          "choices": [{"label": o.get("label", ""), "description": o.get("description", "")}
                                      for o in q.get("options") or [] if isinstance(o, dict)],
                          "multiSelect": bool(q.get("multiSelect"))}
                         for i, q in enumerate(tool_input["questions"]) if isinstance(q, dict)]
            return [("upsert", {"id": f"question-{request_id}", "kind": "question", "requestId": request_id,
                                "questions": questions, "answers": None, "state": "pending"})]
        rules = [s for s in request.get("permission_suggestions") or [] if isinstance(s, dict)
                 and s.get("type") == "addRules"]
        item = {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id,
                "toolUseId": request.get("tool_use_id"), "toolName": request.get("tool_name"),
                "input": tool_input, "description": request.get("description"),
                "canAllowAlways": bool(rules), "decision": "pending"}
        if request.get("tool_name") == "ExitPlanMode" and isinstance(tool_input.get("plan"), str):
            # The plan the agent proposes: approved, the chat goes on in the mode the person picks;
            # denied with a message, the agent plans again.
            item["plan"] = {"text": tool_input["plan"], **({"path": tool_input["planFilePath"]}
                                                           if isinstance(tool_input.get("planFilePath"), str) else {})}
        return [("upsert", item)]

    def _withdraw(self, request_id) -> list[tuple]:
        request = self._requests.pop(request_id, None)
        if request is None:
            return []
        if request.get("tool_name") == "AskUserQuestion":
            return [("upsert", {"id": f"question-{request_id}", "kind": "question", "state": "cancelled"})]
        return [("upsert", {"id": f"approval-{request_id}", "kind": "approval", "decision": "cancelled"})]

    def answer_approval(self, request_id, decision: str, message: str | None) -> dict:
        request = self._requests.get(request_id) or {}
        if decision == "deny":
            return {"behavior": "deny", "message": message or "The user denied this."}
        answer = {"behavior": "allow", "updatedInput": request.get("input") or {}}
        if decision == "allow-always":
            # Exactly the rule the CLI proposed, kept in this session's memory.
            rules = [{**s, "destination": "session"} for s in request.get("permission_suggestions") or []
                     if isinstance(s, dict) and s.get("type") == "addRules"]
            answer["updatedPermissions"] = rules
        return answer

    def answer_question(self, request_id, questions: list[dict], answers: dict) -> dict:
        request = self._requests.get(request_id) or {}
        tool_input = dict(request.get("input") or {})
        by_text = {q["question"]: answers.get(q["id"], "") for q in questions}
        tool_input["answers"] = by_text
        return {"behavior": "allow", "updatedInput": tool_input}

    def turn_ending(self) -> list[tuple]:
        return []  # Claude Code reports its background work itself (task_started)

    def stop_requested(self, task_id: str) -> None:
        pass  # Claude Code says "stopped" itself

    def native(self, request_id):
        """The CLI's own id of a request still open in this process (None otherwise)."""
        return request_id if request_id in self._requests else None

    def settled(self, request_id) -> None:
        self._requests.pop(request_id, None)

    def thread_id_of(self, native):
        """The thread's id of a request the CLI asked in this process (None if none is open)."""
        return native if native in self._requests else None

    @staticmethod
    def decision_of(result: dict) -> str:
        """What an answer given in the CLI's own words decided, in the thread's words."""
        if result.get("behavior") == "allow":
            return "allow-always" if result.get("updatedPermissions") else "allow"
        return "deny"


def _chain_entry(frame: dict) -> list[tuple]:
    """A frame of the conversation's own chain (not a subagent's) names the turn's last entry so
    far: ``("native", {"lastUuid"})`` on the running turn, the anchor a rewind of the next turn
    resumes at (``--resume-session-at``, docs/rewind.md). A subagent's frames are its own chain."""
    uuid = frame.get("uuid")
    if frame.get("parent_tool_use_id") is None and isinstance(uuid, str) and uuid:
        return [("native", {"lastUuid": uuid})]
    return []


def _background(task: dict) -> dict:
    """One entry of what still runs in the background, as info.background lists it."""
    return {"taskId": task.get("task_id"), "kind": "subagent" if task.get("task_type") == "local_agent" else "task",
            "description": task.get("description") or ""}

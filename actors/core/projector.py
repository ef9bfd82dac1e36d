"""Native frames of either CLI, turned into thread changes.

A projector is per CLI process: its items get ids ``<generation>:<ref>`` so a restarted CLI
never overwrites what an earlier one wrote. It answers a list of operations:
``("upsert", item)`` merges an item by id, ``("append", item_id, text, skeleton)`` appends text
to an item (adding ``skeleton`` first if it does not exist yet). The user's own messages and
the turns are made by the host, not here.

It also answers the native form of an approval or a question: ``answer_approval`` and
``answer_question`` build the CLI's own reply from a decision (allow / allow-always / deny).
A request's id in the thread (``requestId``) is unique across processes; ``native`` gives the
CLI's own id back (Claude Code's are unique already; Codex numbers its requests from 0 in
every process, so its ids in the thread carry the generation too).
"""
from __future__ import annotations

import json


class ClaudeProjector:
    provider = "claude"

    def __init__(self, generation: str):
        self.gen = generation
        self._blocks: dict[int, str] = {}  # stream content block index -> item id
        self._requests: dict = {}  # request id -> the can_use_tool request
        self._tool_inputs: dict[str, dict] = {}  # tool_use id -> its input (a background task's command)
        self._agents: set[str] = set()  # tool_use ids of the delegating tool calls (their subagents)
        self._shells: dict[str, str] = {}  # background task id -> its item id

    def _id(self, ref: str) -> str:
        return f"{self.gen}:{ref}"

    def project(self, frame: dict) -> list[tuple]:
        kind = frame.get("type")
        parent = frame.get("parent_tool_use_id")
        if kind == "stream_event":
            return self._stream(frame.get("event") or {}, frame.get("api_message_id") or "msg", parent)
        if kind == "assistant":
            if frame.get("is_api_error_message"):
                return []  # Claude Code's own words for a failed request: the turn's error says them
            return self._assistant(frame.get("message") or {}, parent)
        if kind == "user" and not frame.get("isReplay"):
            return self._tool_results(frame.get("message") or {}, frame.get("tool_use_result"))
        if kind == "control_request":
            return self._request(frame)
        if kind == "control_cancel_request":
            return self._withdraw(frame.get("request_id"))
        if kind == "system" and frame.get("subtype") in ("task_started", "task_updated", "task_notification"):
            return self._task(frame)
        if kind == "system" and frame.get("subtype") == "background_tasks_changed":
            return [("background", [_background(task) for task in frame.get("tasks") or [] if isinstance(task, dict)])]
        if kind == "system" and frame.get("subtype") == "api_retry":
            status = f"{frame['error_status']} " if frame.get("error_status") else ""
            return [("upsert", {"id": self._id(f"retry-{frame.get('uuid')}"), "kind": "note", "level": "info",
                                "text": f"API error {status}{frame.get('error') or ''}; retrying (attempt "
                                        f"{frame.get('attempt')} of {frame.get('max_retries')})."})]
        if kind == "system" and frame.get("subtype") == "compact_boundary":
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
        return [("upsert", {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id,
                            "toolUseId": request.get("tool_use_id"), "toolName": request.get("tool_name"),
                            "input": tool_input, "description": request.get("description"),
                            "canAllowAlways": bool(rules), "decision": "pending"})]

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


OUTPUT_CHARS = 64 * 1024  # of a command's streamed output, kept while it runs


DELEGATING_TOOLS = ("Task", "Agent")  # Claude Code's tools that start a subagent
TURN_STATUS = {"completed": "done", "failed": "error", "interrupted": "stopped"}  # a Codex child's turn
TASK_STATUS = {"completed": "done", "failed": "error", "killed": "stopped", "stopped": "stopped",
               "running": "running", None: "running"}


def _background(task: dict) -> dict:
    """One entry of what still runs in the background, as info.background lists it."""
    return {"taskId": task.get("task_id"), "kind": "subagent" if task.get("task_type") == "local_agent" else "task",
            "description": task.get("description") or ""}


class CodexProjector:
    provider = "codex"

    def __init__(self, generation: str):
        self.gen = generation
        self._natives: dict[str, object] = {}  # requestId in the thread -> the CLI's own id
        self._outputs: dict[str, str] = {}  # a running command's output so far (its newest OUTPUT_CHARS)
        self._retries = 0
        self._children: dict[str, dict] = {}  # a child agent's thread id -> {ref, description, running}
        self._commands: dict[str, dict] = {}  # the main thread's running commands: ref -> processId, command
        self._tasks: dict[str, dict] = {}  # commands that outlived their turn: ref -> their task
        self._stopping: set[str] = set()  # task ids devhost asked Codex to end

    def _id(self, ref) -> str:
        return f"{self.gen}:{ref}"

    def project(self, frame: dict) -> list[tuple]:
        method = frame.get("method")
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if "id" in frame and method:
            return self._request(frame["id"], method, params)
        child = self._children.get(params.get("threadId"))
        if child is not None:
            return self._child(child, method, params)
        return self._frame(method, params, main=True)

    def _frame(self, method: str, params: dict, main: bool) -> list[tuple]:
        if method in ("item/started", "item/completed"):
            item = params.get("item") or {}
            if item.get("id") in self._tasks:
                return self._task_ended(item) if method == "item/completed" else []
            return self._item(item, done=method == "item/completed", main=main)
        if method == "item/agentMessage/delta":
            return [("append", self._id(params.get("itemId")), params.get("delta") or "", self._skeleton(
                "assistant", params.get("itemId")))]
        if method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
            return [("append", self._id(f"{params.get('itemId')}:think"), params.get("delta") or "",
                     {"id": self._id(f"{params.get('itemId')}:think"), "kind": "thinking", "text": "",
                      "streaming": True, "endedAt": None})]
        if method == "item/commandExecution/outputDelta":
            ref = params.get("itemId")
            output = (self._outputs.get(ref, "") + (params.get("delta") or ""))[-OUTPUT_CHARS:]
            self._outputs[ref] = output
            return [("upsert", {"id": self._id(ref), "kind": "tool", "output": output})]
        if method == "error" and params.get("willRetry"):
            error = params.get("error") if isinstance(params.get("error"), dict) else {}
            self._retries += 1
            return [("upsert", {"id": self._id(f"retry-{self._retries}"),
                                "kind": "note", "level": "info", "text": error.get("message") or "Retrying…"})]
        if method == "serverRequest/resolved":
            request_id = self._id(params.get("requestId"))
            self._natives.pop(request_id, None)
            return [("resolved", request_id)]
        return []

    def _skeleton(self, kind: str, ref) -> dict:
        return {"id": self._id(ref), "kind": kind, "text": "", "streaming": True}

    # ---- child agents (features.multi_agent_v2) and background terminals -----------------------

    def _child(self, child: dict, method: str, params: dict) -> list[tuple]:
        """A frame of a child agent's own thread: its items go under its subagent item, and its
        turns say whether it runs."""
        if method == "turn/started" or method == "turn/completed":
            status = "running" if method == "turn/started" else \
                TURN_STATUS.get((params.get("turn") or {}).get("status"), "done")
            child["running"] = status == "running"
            return [("upsert", {"id": self._id(f"sub-{child['ref']}"), "kind": "subagent", "status": status}),
                    self._background()]
        ops = self._frame(method, params, main=False)
        for op in ops:
            if op[0] == "upsert":
                op[1]["parentToolUseId"] = child["ref"]
            elif op[0] == "append" and op[3] is not None:
                op[3]["parentToolUseId"] = child["ref"]
        return ops

    def _spawned(self, item: dict) -> list[tuple]:
        ref, thread = item.get("id"), item.get("agentThreadId")
        if not isinstance(thread, str) or thread in self._children:
            return []
        name = (item.get("agentPath") or "").rstrip("/").rsplit("/", 1)[-1] or "agent"
        self._children[thread] = {"ref": ref, "description": name, "running": True}
        return [("upsert", {"id": self._id(f"sub-{ref}"), "kind": "subagent", "toolUseId": ref, "taskId": thread,
                            "description": name, "agentPath": item.get("agentPath"),
                            "subagentType": None, "model": item.get("model"), "status": "running",
                            "parentToolUseId": None}),
                self._background()]

    def turn_ending(self) -> list[tuple]:
        """The main turn ends: a command still running (Codex let it outlive its yield time) goes
        on as a background task of its own."""
        ops = []
        for ref, command in self._commands.items():
            task = {"id": self._id(f"task-{ref}"), "kind": "task", "taskId": command["processId"],
                    "toolUseId": ref, "taskType": "terminal", "description": command["command"] or "",
                    "command": command["command"], "status": "running"}
            self._tasks[ref] = task
            ops += [("upsert", {"id": self._id(ref), "kind": "tool", "state": "done", "background": True}),
                    ("upsert", task)]
        self._commands.clear()
        return ops + [self._background()] if ops else ops

    def _task_ended(self, item: dict) -> list[tuple]:
        task = self._tasks.pop(item.get("id"))
        stopped = task["taskId"] in self._stopping
        self._stopping.discard(task["taskId"])
        status = "stopped" if stopped else "done" if item.get("status") == "completed" else "error"
        ended = {"id": task["id"], "kind": "task", "status": status, "output": item.get("aggregatedOutput")}
        if isinstance(item.get("exitCode"), int) and not stopped:
            ended["exitCode"] = item["exitCode"]
        return [("upsert", ended), self._background()]

    def stop_requested(self, task_id: str) -> None:
        """devhost asked Codex to end this task: its end reads stopped, not failed."""
        self._stopping.add(task_id)

    def _background(self) -> tuple:
        return ("background", [{"taskId": thread, "kind": "subagent", "description": child["description"]}
                               for thread, child in self._children.items() if child["running"]]
                + [{"taskId": task["taskId"], "kind": "task", "description": task["description"]}
                   for task in self._tasks.values()])

    def _item(self, item: dict, done: bool, main: bool = True) -> list[tuple]:
        kind, ref = item.get("type"), item.get("id")
        if kind == "subAgentActivity":
            return self._spawned(item) if item.get("kind") == "started" else []
        if kind == "collabAgentToolCall":
            state = {"completed": "done", "failed": "error"}.get(item.get("status"), "running")
            return [("upsert", {"id": self._id(ref), "kind": "tool", "toolUseId": ref,
                                "name": f"agents.{item.get('tool')}", "output": None,
                                "input": {"agents": [self._children[t]["description"] for t in
                                                     item.get("receiverThreadIds") or [] if t in self._children]},
                                "state": state if done else "running", "parentToolUseId": None})]
        if kind == "agentMessage":
            return [("upsert", {**self._skeleton("assistant", ref), "text": item.get("text") or "",
                                "streaming": not done, **({"phase": item["phase"]} if item.get("phase") else {})})] \
                if done else [("upsert", self._skeleton("assistant", ref))]
        if kind == "reasoning" and done:
            text = "\n\n".join(s for s in (item.get("summary") or []) if isinstance(s, str))
            return [("upsert", {"id": self._id(f"{ref}:think"), "kind": "thinking", "text": text,
                                "streaming": False, "endedAt": None})]
        if kind == "commandExecution":
            if done:
                self._outputs.pop(ref, None)
                self._commands.pop(ref, None)
            elif main and isinstance(item.get("processId"), str):
                self._commands[ref] = {"processId": item["processId"], "command": item.get("command")}
            state = {"completed": "done", "failed": "error", "declined": "error"}.get(item.get("status"), "running")
            return [("upsert", {"id": self._id(ref), "kind": "tool", "toolUseId": ref, "name": "shell",
                                "input": {"command": item.get("command"), "cwd": item.get("cwd")},
                                "output": item.get("aggregatedOutput"), "state": state if done else "running",
                                "parentToolUseId": None,
                                **({"exitCode": item["exitCode"]} if isinstance(item.get("exitCode"), int) else {})})]
        if kind == "fileChange":
            state = {"completed": "done", "failed": "error", "declined": "error"}.get(item.get("status"), "running")
            changes = [{"path": c.get("path"), "kind": (c.get("kind") or {}).get("type", "update"),
                        "diff": c.get("diff", "")} for c in item.get("changes") or [] if isinstance(c, dict)]
            return [("upsert", {"id": self._id(ref), "kind": "tool", "toolUseId": ref, "name": "apply_patch",
                                "input": {}, "output": None, "changes": changes,
                                "state": state if done else "running", "parentToolUseId": None})]
        if kind == "contextCompaction" and done:
            return [("upsert", {"id": self._id(ref), "kind": "compaction", "preTokens": None})]
        return []

    def _request(self, native, method: str, params: dict) -> list[tuple]:
        request_id = self._id(native)  # a restarted CLI asks "0" again: the generation keeps them apart
        if method == "item/tool/requestUserInput" or method.endswith("/requestApproval"):
            self._natives[request_id] = native
        if method == "item/tool/requestUserInput":
            questions = [{"id": q.get("id", str(i)), "header": q.get("header", ""), "question": q.get("question", ""),
                          "choices": [{"label": o.get("label", ""), "description": o.get("description", "")}
                                      for o in q.get("options") or [] if isinstance(o, dict)],
                          "multiSelect": False}
                         for i, q in enumerate(params.get("questions") or []) if isinstance(q, dict)]
            return [("upsert", {"id": f"question-{request_id}", "kind": "question", "requestId": request_id,
                                "questions": questions, "answers": None, "state": "pending"})]
        if method.endswith("/requestApproval"):
            is_command = method.startswith("item/commandExecution")
            return [("upsert", {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id,
                                "toolUseId": params.get("itemId"), "toolName": "shell" if is_command else "apply_patch",
                                "input": {"command": params.get("command"), "cwd": params.get("cwd")} if is_command
                                else {}, "description": params.get("reason"), "canAllowAlways": True,
                                "decision": "pending"})]
        return []

    def answer_approval(self, request_id, decision: str, message: str | None) -> dict:
        return {"decision": {"allow": "accept", "allow-always": "acceptForSession", "deny": "decline"}[decision]}

    def answer_question(self, request_id, questions: list[dict], answers: dict) -> dict:
        return {"answers": {q["id"]: {"answers": [answers[q["id"]]] if q["id"] in answers else []}
                            for q in questions}}

    def native(self, request_id):
        """The CLI's own id of a request still open in this process (None otherwise)."""
        return self._natives.get(request_id) if isinstance(request_id, str) else None

    def settled(self, request_id) -> None:
        self._natives.pop(request_id, None)

    def thread_id_of(self, native):
        """The thread's id of a request the CLI asked in this process (None if none is open)."""
        return next((mine for mine, theirs in self._natives.items() if theirs == native), None)

    @staticmethod
    def decision_of(result: dict) -> str:
        """What an answer given in the CLI's own words decided, in the thread's words."""
        decision = result.get("decision")
        return {"accept": "allow", "acceptForSession": "allow-always"}.get(decision, "deny") \
            if isinstance(decision, str) else "deny"


PROJECTORS = {"claude-code": ClaudeProjector, "codex": CodexProjector}


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))

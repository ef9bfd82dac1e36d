"""Codex's app-server frames turned into a chat's thread changes (items).

A projection is per CLI process: its items get ids ``<id prefix>:<ref>`` so a restarted CLI
never overwrites what an earlier one wrote. Its operations are those of Claude Code's
(actors/harness/claude/projection.py), ``("resolved", request_id)`` when Codex settles a
request itself, and ``("native", {"turnId"})`` when a turn of the main thread starts. Codex
numbers its requests from 0 in every process, so a request's id in the
thread (``requestId``) carries the id prefix too; ``native`` gives the CLI's own id back.

The driver (protocol.py) reads each frame once and hands it here; ``project`` is the same
dispatch for a frame read on its own. Pure translation: no I/O.
"""
from __future__ import annotations

OUTPUT_CHARS = 64 * 1024  # of a command's streamed output, kept while it runs
TURN_STATUS = {"completed": "done", "failed": "error", "interrupted": "stopped"}  # a Codex child's turn


class CodexProjector:
    provider = "codex"

    def __init__(self, id_prefix: str):
        self.id_prefix = id_prefix
        self._natives: dict[str, object] = {}  # requestId in the thread -> the CLI's own id
        self._outputs: dict[str, str] = {}  # a running command's output so far (its newest OUTPUT_CHARS)
        self._retries = 0
        self._children: dict[str, dict] = {}  # a child agent's thread id -> {ref, description, running}
        self._commands: dict[str, dict] = {}  # the main thread's running commands: ref -> processId, command
        self._tasks: dict[str, dict] = {}  # commands that outlived their turn: ref -> their task
        self._stopping: set[str] = set()  # task ids devhost asked Codex to end

    def _id(self, ref) -> str:
        return f"{self.id_prefix}:{ref}"

    def project(self, frame: dict) -> list[tuple]:
        """The operations of one frame read on its own (a test's replay); a running CLI's frames
        come through its driver, which calls the same handlers."""
        method = frame.get("method")
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if "id" in frame and method:
            return self.request(frame["id"], method, params)
        return self.notification(method, params)

    # ---- the handlers the driver (protocol.py) calls, one per frame -----------------------------

    def request(self, native, method: str, params: dict) -> list[tuple]:
        """A request of the CLI's own (an approval, a question)."""
        return self._request(native, method, params)

    def notification(self, method, params: dict) -> list[tuple]:
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
        if method == "turn/started" and main:
            # Codex's id of the running turn, on the turn item: thread/revert's beforeTurnId
            # when this turn is rewound (actors/harness/rewind.py).
            turn_id = (params.get("turn") or {}).get("id")
            return [("native", {"turnId": turn_id})] if isinstance(turn_id, str) and turn_id else []
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
            # Named by its processId, which stopping it needs; without one, by its item id
            # (named_by_item: the driver looks the process up when asked to stop it).
            task = {"id": self._id(f"task-{ref}"), "kind": "task", "taskId": command["processId"] or ref,
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

    def named_by_item(self, task_id: str) -> bool:
        """A background command listed under its item id: Codex never said its processId."""
        return (self._tasks.get(task_id) or {}).get("taskId") == task_id

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
            elif main:
                # A command that asked first starts without its processId (Codex gives it only on
                # item/completed): it is still one that may outlive the turn.
                process = item.get("processId") if isinstance(item.get("processId"), str) else None
                self._commands[ref] = {"processId": process, "command": item.get("command")}
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
        request_id = self._id(native)  # a restarted CLI asks "0" again: the id prefix keeps them apart
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

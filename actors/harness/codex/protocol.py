"""Codex's app-server protocol (JSON-RPC over stdio): command lines, requests, frames it reads.

Pure translation, no I/O (the CLI's files are files.py's). Measured behaviour of codex-cli
0.169.0 this module relies on (recorded in tests/fixtures/codex-frames/):
- every request carries ``params``; replies come by id; the server's own requests
  (approvals) use an id space of their own, answered with ``{"id", "result"}``;
- one thread per session: ``thread/start`` (or ``thread/resume`` of a saved one), then a
  ``turn/start`` per turn; during a turn a message goes in by ``turn/steer`` with
  ``expectedTurnId``; a steer that arrives just after the turn ended is refused ("no active
  turn to steer"), so the message starts a new turn instead — it is never lost or sent twice;
- ``turn/start`` while a turn runs joins that turn (same id), which covers the moment
  between sending ``turn/start`` and learning the new turn's id;
- ``clientUserMessageId`` comes back as ``clientId`` on the ``userMessage`` item at pickup;
- ``turn/completed`` ends every turn: completed, interrupted or failed (with ``turn.error``).
"""
from __future__ import annotations

import os
import time

from actors.core import limits
from actors.harness import effects as fx
from actors.harness import modes
from actors.harness import skills as skill_rules
from actors.harness.paths import inside
from actors.harness.codex.projection import CodexProjector

HARNESS_ID = "codex"
LABEL = "Codex"
TESTED_VERSION = "0.169.0"  # the version the tests pin (tests/peers.sh); `devhostd doctor` compares
DEFAULT_COMMAND = ("codex",)
CLIENT_INFO = {"name": "devhost", "title": "devhost", "version": "0.1.0"}
FAILED_TURN = "Native Codex turn failed"
NOT_SENT_INTERRUPT = "not sent: an interrupt ended the turn before Codex took it up"
NETWORK_WAIT_LIMIT = 120.0  # seconds of "Reconnecting... waiting for network" before devhost stops the turn
NETWORK_WAIT_KEY = "network-wait"
ANSWERABLE_REQUESTS = ("item/commandExecution/requestApproval", "item/fileChange/requestApproval",
                       "item/permissions/requestApproval", "item/tool/requestUserInput")
APPROVAL_DECISIONS = ("accept", "acceptForSession", "decline", "cancel")
REPLY_DEADLINE = 30.0  # seconds a request may go unanswered before devhost stops waiting on it


PLAN_MODE = False  # its plan collaboration mode does not stop edits (measured: codex-plan): not offered


def mode_settings(mode: str, environ=None, plan: bool = False) -> modes.CodexSettings:
    return modes.codex_settings(mode)


def command_line(command: tuple[str, ...], model: str | None = None, resume_id: str | None = None,
                 settings: modes.CodexSettings | None = None) -> list[str]:
    # Model, thread and mode travel in JSON-RPC requests, never as flags.
    return [*command, "app-server"]


def listing_command_line(command: tuple[str, ...]) -> list[str]:
    return [*command, "app-server"]


def listing_requests() -> list[dict]:
    return [{"id": "devhost-init", "method": "initialize", "params": {"clientInfo": CLIENT_INFO}},
            {"method": "initialized"},
            {"id": "devhost-models", "method": "model/list", "params": {}}]


def listing_reply(frame: dict) -> list[dict] | None:
    if frame.get("id") != "devhost-models" or "method" in frame:
        return None
    if "error" in frame:
        error = frame["error"] if isinstance(frame["error"], dict) else {}
        raise ValueError(f"{LABEL} refused to list models: {error.get('message') or 'no reason given'}")
    return models_from_list(frame.get("result") or {})


def models_from_list(result: dict) -> list[dict]:
    models = []
    for entry in result.get("data") or []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and not entry.get("hidden"):
            models.append({"id": entry.get("model") or entry["id"], "label": entry.get("displayName") or entry["id"],
                           "description": entry.get("description") or ""})
    return models


class CodexDriver:
    """Per-process protocol state: the thread, the running turn, requests awaiting replies."""

    harness_id = HARNESS_ID
    label = LABEL

    def __init__(self, cwd: str = "", model: str | None = None, resume_id: str | None = None,
                 projection: CodexProjector | None = None, settings: modes.CodexSettings | None = None,
                 root: str = ""):
        # The process's items: ids with a prefix of their own (the time it started), so a
        # restarted CLI never overwrites what an earlier one wrote (nor reuses its request ids).
        self.projection = projection or CodexProjector(str(int(time.time() * 1000)))
        self._cwd = cwd
        self._model = model  # the session's requested model; None = Codex's configured one
        self._configured_model = None
        self._resume_id = resume_id
        self._next_id = 0
        self._calls: dict[int, tuple[str, dict]] = {}  # id -> (method, context)
        self.thread_id: str | None = None
        self._turn_id: str | None = None
        self._turn_requested = False  # a turn/start is out, its turn not known yet
        self._held: list[tuple[str, list]] = []  # messages that wait for the thread
        self._model_for_next_turn: str | None = None  # set by a send during a turn
        self.waiting: set[str] = set()
        self._steered: set[str] = set()  # steers Codex accepted into the running turn, not started yet
        self._network_wait_turn: str | None = None  # the turn Codex is waiting for the network in
        self._turn_failure: str | None = None  # why devhost stopped the turn, when it did
        self._children: dict[str, str | None] = {}  # a child agent's thread id -> its running turn
        self._windows: list[dict] = []  # the plan's usage windows, as Codex last reported them
        self._compact_held = False  # a compaction asked for before the thread was ready
        self._revert_held: str | None = None  # a rewind asked for before the thread was ready
        # The mode: what devhostd accepts itself follows ``settings`` at once; the CLI's policy
        # is ``_applied`` (the thread's, or the last turn/start's), ``_settings_for_next_turn`` waits.
        self.settings = self._applied = settings
        self._settings_for_next_turn: modes.CodexSettings | None = None
        self._root = root or cwd
        self._changes: dict[str, tuple] = {}  # a fileChange item's id -> the paths it changes
        self.skills: list[dict] | None = None  # skills/list's last answer, for the chat's folder

    # ---- frames devhost writes ---------------------------------------------------------------

    def _call(self, method: str, params: dict, **context) -> dict:
        self._next_id += 1
        self._calls[self._next_id] = (method, context)
        return {"id": self._next_id, "method": method, "params": params}

    def _deadline(self, frame: dict, seconds: float = REPLY_DEADLINE) -> fx.Deadline:
        return fx.Deadline(frame["id"], seconds)

    def start_frames(self) -> list[dict]:
        return [self._call("initialize", {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}})]

    def message_frames(self, message_id: str, text: str, images: list[tuple[str, str]],
                       model: str | None = None, skills=(), mentions=()) -> list:
        """Frames (and Deadline effects) for one message; ``model``: None keeps, "" resets.
        A skill goes as a ``skill`` input item (its SKILL.md's path); a file as its path in the
        text: a ``mention`` item naming a file reaches the model as nothing (measured:
        tests/fixtures/modes/codex-mentions.jsonl)."""
        if mentions:
            listed = "\n".join(f"- {os.path.relpath(p, self._cwd) if inside(p, self._cwd) else p}" for p in mentions)
            text = (text + "\n\n" if text else "") + f"[Mentioned files]\n{listed}"
        items = [{"type": "text", "text": text, "text_elements": []}] if text else []
        items += [{"type": "image", "url": f"data:{media_type};base64,{data}"} for media_type, data in images]
        items += [{"type": "skill", "name": name, "path": path} for name, path in skills if path]
        self.waiting.add(message_id)
        if model is not None:
            self._model_for_next_turn = model
        if self.thread_id is None:
            self._held.append((message_id, items))  # goes out when the thread is ready
            return []
        return self._deliver(message_id, items)

    def _deliver(self, message_id: str, items: list) -> list:
        if self._turn_id is not None:
            frame = self._call("turn/steer", {"threadId": self.thread_id, "expectedTurnId": self._turn_id,
                                              "clientUserMessageId": message_id, "input": items},
                               message_id=message_id, items=items)
        else:
            frame = self._start_turn(message_id, items)
        return [frame, self._deadline(frame)]

    def _start_turn(self, message_id: str, items: list) -> dict:
        params = {"threadId": self.thread_id, "clientUserMessageId": message_id, "input": items}
        if self._model_for_next_turn is not None:
            # A model set on turn/start sticks for later turns; "" goes back to the configured one.
            params["model"] = self._model_for_next_turn or self._configured_model
            if not params["model"]:
                del params["model"]
            self._model_for_next_turn = None
        if self._settings_for_next_turn is not None:
            # Set on turn/start, a policy holds for this turn and the later ones (measured).
            self._applied, self._settings_for_next_turn = self._settings_for_next_turn, None
            params.update(self._policy(self._applied, "sandboxPolicy"))
        self._turn_requested = True
        return self._call("turn/start", params, message_id=message_id, items=items)

    @staticmethod
    def _policy(settings: modes.CodexSettings | None, sandbox_key: str = "sandbox") -> dict:
        if settings is None:
            return {}
        return {"approvalPolicy": settings.approval_policy,
                sandbox_key: settings.sandbox if sandbox_key == "sandbox" else settings.sandbox_policy()}

    @property
    def effective_mode(self) -> str | None:
        return self._applied.effective if self._applied else None

    def set_mode_frames(self, settings: modes.CodexSettings) -> list:
        """Moves the thread to ``settings``: at once between turns (thread/settings/update),
        else on the next turn/start. Never needs a new process."""
        self.settings = settings
        if self.thread_id is None or self._turn_id is not None or self._turn_requested:
            self._settings_for_next_turn = settings
            return []
        self._applied, self._settings_for_next_turn = settings, None
        frame = self._call("thread/settings/update", {"threadId": self.thread_id,
                                                      **self._policy(settings, "sandboxPolicy")})
        return [frame, self._deadline(frame)]

    def compact_frames(self) -> list:
        """Folds the thread's context (thread/compact/start), which Codex runs as a turn of its
        own; held until the thread is ready."""
        if self.thread_id is None:
            self._compact_held = True
            return []
        frame = self._call("thread/compact/start", {"threadId": self.thread_id})
        self._turn_requested = True
        return [frame, self._deadline(frame)]

    def rewind_frames(self, before_turn: str) -> list:
        """Takes the thread's history back to before the turn ``before_turn`` (its id from
        ``turn/started``): ``thread/revert`` on the live thread, held until the thread is ready.
        Only the conversation: the files are devhostd's own (storage/checkpoints). Its reply is
        a Rewound effect; the next ``turn/start`` leaves that turn and every later one out
        (measured: docs/rewind.md)."""
        if self.thread_id is None:
            self._revert_held = before_turn
            return []
        frame = self._call("thread/revert", {"threadId": self.thread_id, "beforeTurnId": before_turn})
        return [frame, self._deadline(frame)]

    def set_model_frames(self, model: str) -> list:
        self._model_for_next_turn = model
        return []

    def skills_frames(self) -> list:
        """Asks for the skills of the chat's folder (skills/list); its answer is a Skills effect."""
        frame = self._call("skills/list", {"cwds": [self._cwd]})
        return [frame, self._deadline(frame, 10.0)]

    def stop_waiting_for(self, message_id: str) -> None:
        """The host gave up on a message's acknowledgement: it no longer counts on it to start a turn."""
        self.waiting.discard(message_id)

    def interrupt_frames(self) -> list:
        if self.thread_id is None or self._turn_id is None:
            return []
        frame = self._call("turn/interrupt", {"threadId": self.thread_id, "turnId": self._turn_id})
        return [frame, self._deadline(frame)]

    def respond_frames(self, request_id, result: dict, kind: str = "") -> list[dict]:
        if kind in ANSWERABLE_REQUESTS[:2] and result.get("decision") not in APPROVAL_DECISIONS:
            # Object decisions (e.g. an exec-policy amendment) persist beyond the chat: not from a page.
            raise ValueError(f"an approval answer is {{\"decision\": one of {', '.join(APPROVAL_DECISIONS)}}}")
        return [{"id": request_id, "result": result}]

    def stop_frames(self) -> list[dict]:
        return []  # app-server exits 0 on stdin EOF

    # ---- frames the CLI writes -----------------------------------------------------------------

    def decode(self, frame: dict) -> tuple[bool, list]:
        """Returns (keep in history, effects): read() without the thread's operations."""
        keep, found, _ = self.read(frame)
        return keep, found

    def read(self, frame: dict) -> tuple[bool, list, list]:
        """The one reading of a frame: (keep in history, effects for the link, operations for
        the thread). One dispatch serves both: the projection's handler gives the operations."""
        method = frame.get("method")
        if method is None:
            # Answers to devhost's own requests (kept out of the history), or nothing we know.
            return False, self._reply(frame) if "id" in frame else [], []
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if "id" in frame:
            if method == "item/fileChange/requestApproval" and self.settings is not None and modes.codex_accepts(
                    self.settings, self._changes.get(params.get("itemId")), self._root, self._cwd):
                # The mode lets edits in the checkout through: accepted here, nobody asked.
                return False, [fx.Write(({"id": frame["id"], "result": {"decision": "accept"}},))], []
            ops = self.projection.request(frame["id"], method, params)
            if method not in ANSWERABLE_REQUESTS:
                # Nothing in devhost can answer it (a client tool call, an MCP elicitation, a
                # token refresh): say so at once, so Codex fails that step instead of waiting.
                return True, [fx.Write(({"id": frame["id"], "error": {
                    "code": -32601, "message": f"devhost does not answer {method}"}},))], ops
            return True, [fx.RequestOpened(frame["id"], method)], ops  # an approval or question
        found = self._notification(method, params)
        if method == "turn/started":
            found.append(fx.PromptTaken())
        return True, found, self.projection.notification(method, params)

    def _notification(self, method: str, params: dict) -> list:
        thread = params.get("threadId")
        if isinstance(thread, str) and self.thread_id is not None and thread != self.thread_id:
            return self._child_notification(thread, method, params)
        if method == "error" and params.get("willRetry") and "waiting for network" in str(
                (params.get("error") or {}).get("message", "")):
            # With unbounded connection retries Codex never fails a turn whose provider is
            # unreachable; devhost gives it NETWORK_WAIT_LIMIT, then stops the turn and says why.
            if self._network_wait_turn != self._turn_id:
                self._network_wait_turn = self._turn_id
                return [fx.Deadline(NETWORK_WAIT_KEY, NETWORK_WAIT_LIMIT)]
            return []
        if method in ("item/started", "item/agentMessage/delta", "turn/completed"):
            self._network_wait_turn = None  # progress (or the end): the provider is reachable again
        if method == "turn/started":
            turn = params.get("turn") or {}
            self._turn_id = turn.get("id") or self._turn_id
            self._turn_requested = False
            return [fx.TurnStarted(turn.get("id"))]
        if method in ("item/started", "item/completed"):
            item = params.get("item") or {}
            if item.get("type") == "fileChange" and isinstance(item.get("id"), str):
                # Its approval names only the item: the paths are known from here.
                if method == "item/completed":
                    self._changes.pop(item["id"], None)
                else:
                    self._changes[item["id"]] = tuple(c.get("path") for c in item.get("changes") or []
                                                      if isinstance(c, dict))
        if method == "item/started":
            item = params.get("item") or {}
            client_id = item.get("clientId")
            if item.get("type") == "userMessage" and isinstance(client_id, str):
                self.waiting.discard(client_id)
                self._steered.discard(client_id)
                return [fx.Delivery(client_id, "started")]
            return []
        if method == "turn/completed":
            return self._turn_completed(params.get("turn") or {})
        if method == "serverRequest/resolved" and "requestId" in params:
            return [fx.RequestClosed(params["requestId"])]
        if method == "account/rateLimits/updated":
            return self._rate_limits(params.get("rateLimits"))
        if method == "thread/tokenUsage/updated":
            usage = params.get("tokenUsage") or {}
            total = usage.get("last") or {}
            found: list = [fx.Usage(tuple((k, v) for k, v in total.items() if isinstance(v, int)))]
            facts = [("contextTokens", total.get("totalTokens")), ("contextWindow", usage.get("modelContextWindow"))]
            facts = tuple((k, v) for k, v in facts if isinstance(v, int) and not isinstance(v, bool))
            return found + ([fx.Facts(facts)] if facts else [])
        return []

    def _rate_limits(self, limits_now) -> list:
        """The plan's usage windows (sent after every model answer): kept for the reset time of a
        usage limit, and the primary window's use reported."""
        if not isinstance(limits_now, dict):
            return []
        windows = [w for w in (limits_now.get("primary"), limits_now.get("secondary")) if isinstance(w, dict)]
        self._windows = windows or self._windows
        if not windows:
            return []
        primary = windows[0]
        used = primary.get("usedPercent")
        utilization = round(used / 100, 4) if isinstance(used, (int, float)) else None
        status = "rejected" if utilization is not None and utilization >= 1 else \
            "allowed_warning" if utilization is not None and utilization >= limits.WARNING_UTILIZATION else "allowed"
        return [fx.PlanUsage(tuple(limits.plan_usage(
            limits.window_name(primary.get("windowDurationMins")), utilization,
            limits.epoch_ms(primary.get("resetsAt")), status).items()))]

    def _limit_of(self, info, message: str) -> dict | None:
        """A failed turn's limit: the plan's usage window (usageLimitExceeded, reset from the
        window that is used up), a rate limit (too many failed attempts on 429, with when it may go
        again where known), or an overloaded model (503, 529, or an overloaded server)."""
        if info == "usageLimitExceeded":
            limit = {"kind": "usage", "message": message}
            full = [w for w in self._windows
                    if isinstance(w.get("usedPercent"), (int, float)) and w["usedPercent"] >= 100]
            window = (full or self._windows or [None])[0]
            if window and limits.epoch_ms(window.get("resetsAt")) is not None:
                limit["resetsAt"] = limits.epoch_ms(window["resetsAt"])
            if window and limits.window_name(window.get("windowDurationMins")):
                limit["window"] = limits.window_name(window["windowDurationMins"])
            return limit
        failed = info.get("responseTooManyFailedAttempts") if isinstance(info, dict) else None
        status = failed.get("httpStatusCode") if isinstance(failed, dict) else None
        if status == 429:  # too many requests: this account's rate, not a busy model
            full = [w for w in self._windows
                    if isinstance(w.get("usedPercent"), (int, float)) and w["usedPercent"] >= 100]
            return limits.rate_limit(message, int(time.time() * 1000),
                                     limits.epoch_ms(full[0].get("resetsAt")) if full else None)
        if info == "serverOverloaded" or status in (503, 529):
            return {"kind": "overload", "message": message}
        return None

    def _child_notification(self, thread: str, method: str, params: dict) -> list:
        """A child agent's thread (Codex's multi-agent tools): its turns are its own, never the
        chat's; only which of them runs is kept, so it can be stopped."""
        if method == "turn/started":
            self._children[thread] = (params.get("turn") or {}).get("id")
        elif method == "turn/completed":
            self._children[thread] = None
        return []

    def stop_task_frames(self, task_id: str, kind: str = "task") -> list:
        """Ends a child agent's running turn, or a command that runs on in the background (a
        background terminal, by its process id); [] when there is nothing of it to end."""
        if self.thread_id is None:
            return []
        if kind == "subagent":
            turn = self._children.get(task_id)
            if not turn:
                return []
            frame = self._call("turn/interrupt", {"threadId": task_id, "turnId": turn})
        elif self.projection.named_by_item(task_id):
            # Its processId is not known yet: the thread's terminals name it by item id.
            frame = self._call("thread/backgroundTerminals/list", {"threadId": self.thread_id}, stop=task_id)
        else:
            frame = self._terminate(task_id)
        return [frame, self._deadline(frame)]

    def _terminate(self, process_id: str) -> dict:
        return self._call("thread/backgroundTerminals/terminate", {"threadId": self.thread_id, "processId": process_id})

    def _turn_completed(self, turn: dict) -> list:
        if turn.get("id") not in (None, self._turn_id) and self._turn_id is not None:
            return []  # not the turn this driver runs
        self._turn_id = None
        self._turn_requested = False
        status = turn.get("status")
        # Codex discards input that was steered in but not picked up before the turn ended. One
        # an interrupt stopped that way never reached the model, and says so (only a steer Codex
        # accepted and never started: a message without its clientId is never taken for one).
        kept = {m for m in self.waiting if self._is_in_flight(m)}
        steered, self._steered = self._steered & self.waiting - kept, set()
        dropped = [fx.Delivery(m, "cancelled", NOT_SENT_INTERRUPT) for m in sorted(steered)] \
            if turn.get("status") == "interrupted" else []
        self.waiting = kept
        if status == "failed":
            error = turn.get("error") if isinstance(turn.get("error"), dict) else {}
            message = error.get("message") if isinstance(error.get("message"), str) else ""
            message = message.strip() or FAILED_TURN
            return [*dropped, fx.TurnEnded(error=message, limit=self._limit_of(error.get("codexErrorInfo"), message))]
        if status == "interrupted":
            failure, self._turn_failure = self._turn_failure, None
            return [*dropped, fx.TurnEnded(error=failure) if failure else fx.TurnEnded(interrupted=True)]
        return [*dropped, fx.TurnEnded()]

    def _is_in_flight(self, message_id: str) -> bool:
        return any(context.get("message_id") == message_id for _, context in self._calls.values())

    def _reply(self, frame: dict) -> list:
        entry = self._calls.pop(frame.get("id"), None)
        if entry is None:
            return []
        method, context = entry
        error = frame.get("error")
        message = (error.get("message") if isinstance(error, dict) else None) or "no reason given"
        result = frame.get("result") if isinstance(frame.get("result"), dict) else {}
        if method == "initialize":
            if error:
                return self._start_failed(f"Codex refused to initialize: {message}")
            follow = [{"method": "initialized"}]
            if self._resume_id:
                params = {"threadId": self._resume_id, "cwd": self._cwd}
                start = self._call("thread/resume", params)
            else:
                params = {"cwd": self._cwd}
                start = self._call("thread/start", params)
            if self._model:
                start["params"]["model"] = self._model
            start["params"].update(self._policy(self._applied))
            # Its answer is waited on by the link's start watchdog (actors/cli_link.py), as every step of the start.
            return [fx.Write(tuple(follow + [start]))]
        if method in ("thread/start", "thread/resume"):
            return self._thread_ready(method, result, error, message)
        if method == "turn/start":
            return self._turn_start_reply(context, result, error, message)
        if method == "turn/steer":
            if not error:
                self._steered.add(context["message_id"])
                return [fx.Delivery(context["message_id"], "queued")]
            if "no active turn" in message or "expected active turn id" in message:
                # The turn ended between our steer and its arrival: the message starts a new turn.
                self._turn_id = None
                frame = self._start_turn(context["message_id"], context["items"])
                return [fx.Write((frame,)), self._deadline(frame)]
            self.waiting.discard(context["message_id"])
            return [fx.Delivery(context["message_id"], "error", f"Codex refused the message: {message}")]
        if method == "skills/list":
            if not error:
                self.skills = skill_rules.codex_reported(result)
            return [fx.Skills(None if error else tuple(self.skills))]
        if method == "thread/revert":
            if error:
                return [fx.Rewound(False, f"Codex could not rewind the conversation: {message}")]
            return [fx.Rewound(True, "Codex took the conversation back to before that turn")]
        if method == "thread/settings/update" and error:
            self._settings_for_next_turn = self.settings  # the next turn/start carries it instead
            return [fx.ControlFailed(f"Codex refused the new mode (it holds from the next turn): {message}")]
        if method == "turn/interrupt" and error and "no active turn" not in message:
            return [fx.ControlFailed(f"Codex refused the interrupt: {message}")]
        if method == "thread/compact/start" and error:
            self._turn_requested = False
            return [fx.ControlFailed(f"Codex could not compact the conversation: {message}"),
                    *([] if self._turn_id
                      else [fx.TurnEnded(error=f"Codex could not compact the conversation: {message}")])]
        if method == "thread/backgroundTerminals/list" and "stop" in context:
            process = next((t.get("processId") for t in result.get("data") or [] if isinstance(t, dict)
                            and t.get("itemId") == context["stop"] and isinstance(t.get("processId"), str)), None)
            if process is not None:
                frame = self._terminate(process)
                return [fx.Write((frame,)), self._deadline(frame)]
            result = {"terminated": False}  # not among the thread's terminals: it had ended
        if method.startswith("thread/backgroundTerminals/") and (error or result.get("terminated") is False):
            return [fx.ControlFailed("Codex could not stop the background command: "
                                     f"{message if error else 'it had ended'}")]
        return []

    def _thread_ready(self, method: str, result: dict, error, message: str) -> list:
        if error:
            if method == "thread/resume" and "no rollout found" in message:
                # A thread that never ran a turn was never saved: start a fresh one, keep the messages.
                self._resume_id = None
                start = self._call("thread/start",
                                   {"cwd": self._cwd, **({"model": self._model} if self._model else {}),
                                    **self._policy(self._applied)})
                return [fx.ControlFailed("Codex had not saved that conversation (it never ran a turn); "
                                         "a new conversation was started and your message goes there"),
                        fx.Write((start,))]
            return self._start_failed(f"Codex could not open the conversation: {message}")
        thread = result.get("thread") or {}
        self.thread_id = thread.get("id") or self.thread_id
        if not self._model and isinstance(result.get("model"), str):
            self._configured_model = result["model"]
        found: list = [fx.NativeSession(self.thread_id), fx.Ready()]
        if isinstance(result.get("model"), str):
            found.append(fx.ModelInUse(result["model"]))
        if self._compact_held:
            self._compact_held = False
            frames = self.compact_frames()
            found += [fx.Write((frames[0],)), frames[1]]
        if self._revert_held is not None:
            frames = self.rewind_frames(self._revert_held)
            self._revert_held = None
            found += [fx.Write((frames[0],)), frames[1]]
        held, self._held = self._held, []
        for message_id, items in held:
            frames = self._deliver(message_id, items)
            found += [fx.Write(tuple(f for f in frames if isinstance(f, dict)))]
            found += [f for f in frames if isinstance(f, fx.Deadline)]
        return found

    def _start_failed(self, reason: str) -> list:
        failed: list = [fx.ControlFailed(reason)]
        for message_id, _ in self._held:
            self.waiting.discard(message_id)
            failed.append(fx.Delivery(message_id, "error", reason))
        self._held.clear()
        return failed + [fx.StartFailed(reason)]

    def _turn_start_reply(self, context: dict, result: dict, error, message: str) -> list:
        message_id = context["message_id"]
        if error:
            self._turn_requested = False
            self.waiting.discard(message_id)
            ended = [] if self._turn_id else [fx.TurnEnded(error=f"Codex refused the message: {message}")]
            return [fx.Delivery(message_id, "error", f"Codex refused the message: {message}")] + ended
        turn = result.get("turn") or {}
        if isinstance(turn.get("id"), str) and turn.get("status") == "inProgress":
            self._turn_id = turn["id"]
        return [fx.Delivery(message_id, "queued")]

    def expire(self, request_id) -> list:
        """A request got no reply in time: stop waiting so nothing wedges on it."""
        if request_id == NETWORK_WAIT_KEY:
            if self._network_wait_turn is None or self._network_wait_turn != self._turn_id:
                return []
            self._turn_failure = "Codex could not reach its model provider for " \
                                 f"{int(NETWORK_WAIT_LIMIT)} s; the turn was stopped"
            return [fx.ControlFailed(self._turn_failure), *self.interrupt_frames()]
        entry = self._calls.pop(request_id, None)
        if entry is None:
            return []
        method, context = entry
        if method == "skills/list":
            return [fx.Skills(None)]  # the disk says instead
        if method == "thread/revert":
            return [fx.Rewound(False, "Codex did not answer the rewind in time; the conversation may or may "
                                      "not have been rewound")]
        found: list = [fx.ControlFailed(f"Codex did not answer {method} in time")]
        if method in ("turn/start", "turn/steer"):
            self._turn_requested = False
            # The message may or may not have arrived: the send reads "unconfirmed", never resent.
            found.append(fx.Delivery(context["message_id"], "unconfirmed"))
        return found


Driver = CodexDriver

"""Claude Code's stream-json protocol: command lines, frames devhost writes, frames it reads.

Pure translation, no I/O (the CLI's files are files.py's). Measured behaviour of the real CLI
(2.1.328), recorded in tests/fixtures/claude-frames/; the parts this module relies on:
- a user message with a ``uuid`` gets ``command_lifecycle`` frames (queued on receipt,
  started at pickup, then completed/cancelled) and, with ``--replay-user-messages``, an echo
  at pickup carrying the same uuid;
- ``system/init`` comes at the start of every turn, with the session id and model;
- exactly one ``result`` per turn; ``is_error`` (not ``subtype``) says whether it failed;
- ``can_use_tool`` control requests wait for a ``control_response``; an interrupt withdraws
  them with ``control_cancel_request``.
"""
from __future__ import annotations

import os
import time

from actors.core import limits
from actors.harness import effects as fx
from actors.harness import modes
from actors.harness import skills as skill_rules
from actors.harness.paths import inside
from actors.harness.claude.projection import ClaudeProjector

HARNESS_ID = "claude-code"
LABEL = "Claude Code"
TESTED_VERSION = "2.1.328"  # the version the tests pin (tests/peers.sh); `devhostd doctor` compares
DEFAULT_COMMAND = ("claude",)

_FLAGS = (
    "-p",
    "--input-format", "stream-json",
    "--output-format", "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--replay-user-messages",
    # Routes permission prompts to devhost as can_use_tool requests; without it the CLI
    # silently denies every call that needs approval.
    "--permission-prompt-tool", "stdio",
)
_CANCEL_QUEUED = "interrupt_cancel_queued_v1"
_SETTLED = {"completed", "cancelled", "discarded", "refused"}
NOT_SENT_INTERRUPT = "not sent: an interrupt cancelled it before Claude Code took it up"


PLAN_MODE = True  # Claude Code's own plan permission mode: a person's choice (chat.configure {plan})


def mode_settings(mode: str, environ=os.environ, plan: bool = False) -> modes.ClaudeSettings:
    """The CLI's settings for a devhostd runtime mode (or for planning), for a process started by this user."""
    if plan:
        return modes.CLAUDE_PLAN
    return modes.claude_settings(mode, as_root=os.geteuid() == 0, sandbox_declared=environ.get("IS_SANDBOX") == "1")


def command_line(command: tuple[str, ...], model: str | None = None, resume_id: str | None = None,
                 settings: modes.ClaudeSettings | None = None, resume_at: str | None = None) -> list[str]:
    """``resume_at``: a rewind's anchor, the uuid of the last chain entry to keep (the last
    user/assistant frame of the turn before the rewound one). Claude Code's hidden
    ``--resume-session-at`` (print mode, with ``--resume`` only) loads the transcript up to and
    including it: the same session id, the file is not truncated, and the next message is
    chained to the anchor, so a later plain ``--resume`` follows that branch (docs/rewind.md)."""
    argv = [*command, *_FLAGS, *(settings.flags() if settings else ())]
    if model:
        argv.append(f"--model={model}")  # one argv item: a value can never read as a flag
    if resume_id:
        argv.append(f"--resume={resume_id}")
        if resume_at:
            argv.append(f"--resume-session-at={resume_at}")
    return argv


def listing_command_line(command: tuple[str, ...]) -> list[str]:
    """A process that answers ``initialize`` (which lists models) and runs no turn."""
    return [*command, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]


def listing_requests() -> list[dict]:
    """What the catalog writes to learn the models: ``initialize`` lists them, no turn runs."""
    return [{"type": "control_request", "request_id": "devhost-models", "request": {"subtype": "initialize"}}]


def listing_reply(frame: dict) -> list[dict] | None:
    """The model list once ``frame`` answers listing_requests(); None for any other frame."""
    response = frame.get("response") if frame.get("type") == "control_response" else None
    if not isinstance(response, dict) or response.get("request_id") != "devhost-models":
        return None
    if response.get("subtype") != "success":
        raise ValueError(f"{LABEL} refused to list models: {response.get('error') or 'no reason given'}")
    return models_from_initialize(response.get("response") or {})


def models_from_initialize(response: dict) -> list[dict]:
    models = []
    for entry in response.get("models") or []:
        if isinstance(entry, dict) and isinstance(entry.get("value"), str):
            models.append({
                "id": entry["value"],
                "label": entry.get("displayName") or entry["value"],
                "description": entry.get("description") or "",
            })
    return models


class ClaudeDriver:
    """Per-process protocol state: which requests are ours, which messages are in flight."""

    harness_id = HARNESS_ID
    label = LABEL

    def __init__(self, cwd: str = "", model: str | None = None, resume_id: str | None = None,
                 projection: ClaudeProjector | None = None, settings: modes.ClaudeSettings | None = None,
                 root: str = ""):
        # cwd, model and resume id are on the command line already (see command_line()).
        # settings: the mode's (None: the CLI's own, nothing allowed by devhostd); root: the checkout.
        self.settings = self._launched = settings
        self._cwd, self._root = cwd, root or cwd
        # The process's items: ids with a prefix of their own (the time it started), so a
        # restarted CLI never overwrites what an earlier one wrote.
        self.projection = projection or ClaudeProjector(str(int(time.time() * 1000)))
        self._session_id: str | None = None  # the last session id a frame carried
        self._request_counter = 0
        self._turn_active = False  # a turn runs or a written message will start one
        self._turn_running = False  # between a "started" lifecycle frame and the turn's result
        self._started: set[str] = set()
        self._model_for_next_turn: str | None = None  # a model change sent during a turn
        self._ours: dict[str, str] = {}  # request_id -> subtype of requests devhost made
        self.capabilities: tuple[str, ...] = ()
        self.waiting: set[str] = set()  # written, not yet taken up or settled
        self._interrupting = False
        self._rejected: dict | None = None  # the last rate_limit_event that refused (its reset)
        self._commands: list = []  # the initialize answer's commands (skills among them)
        self.skills: list[dict] | None = None  # what system/init named, once it did

    def _control(self, subtype: str, **fields) -> dict:
        self._request_counter += 1
        request_id = f"devhost-{self._request_counter}"
        self._ours[request_id] = subtype
        return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}

    def start_frames(self) -> list[dict]:
        return [self._control("initialize")]

    def message_frames(self, message_id: str, text: str, images: list[tuple[str, str]],
                       model: str | None = None, skills=(), mentions=()) -> list[dict]:
        """The user message; ``model`` (None keeps, "" resets) applies now if idle, else after the turn.
        ``skills`` and ``mentions`` go as the CLI's own (measured: tests/fixtures/modes/claude-mentions.jsonl):
        the first skill as its slash command at the start, each file as ``@path`` (which the CLI
        expands into the file, relative to its cwd)."""
        text = self.referenced(text, skills, mentions)
        frames = []
        if model is not None:
            if self._turn_active:
                self._model_for_next_turn = model
            else:
                frames += self.set_model_frames(model)
        self._turn_active = True
        return frames + self._user_frame(message_id, text, images)

    def referenced(self, text: str, skills=(), mentions=()) -> str:
        if mentions:
            listed = " ".join(_at(os.path.relpath(path, self._cwd) if inside(path, self._cwd) else path)
                              for path in mentions)
            text = f"{text}\n\n{listed}" if text else listed
        if skills:
            # One slash command a message: a second skill is named for the model, which has the Skill tool.
            others = "".join(f"\n\nUse the {name} skill." for name, _ in skills[1:])
            text = f"/{skills[0][0]} {text}{others}".rstrip()
        return text

    def _user_frame(self, message_id: str, text: str, images: list[tuple[str, str]]) -> list[dict]:
        if images:
            content = [
                {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
                for media_type, data in images
            ]
            if text:
                content.append({"type": "text", "text": text})
        else:
            content = text
        self.waiting.add(message_id)
        return [{"type": "user", "message": {"role": "user", "content": content}, "uuid": message_id}]

    @property
    def effective_mode(self) -> str | None:
        return self.settings.effective if self.settings else None

    def set_mode_frames(self, settings: modes.ClaudeSettings) -> list[dict] | None:
        """Frames that move this process to ``settings`` at once (measured: set_permission_mode
        applies even while a can_use_tool waits); None when only a new process can."""
        if self.settings is None or settings.needs_launch(self._launched):
            return None
        before, self.settings = self.settings, settings
        if settings.permission_mode == before.permission_mode:
            return []  # only what devhostd allows itself changes
        return [self._control("set_permission_mode", mode=settings.permission_mode)]

    def plan_approved_frames(self, request_id, answer: dict, settings: modes.ClaudeSettings) -> tuple[list, bool]:
        """The person approved the plan (ExitPlanMode allowed) and picked the mode to go on in:
        the answer carries the CLI's own setMode, so the rest of the turn runs under it (measured:
        tests/fixtures/modes/claude-plan.jsonl). A mode only a new process has: the turn goes on
        supervised and (frames, True) says the settings swap is owed. Not a page's answer, so
        session_only does not apply: the mode is the one the person picked through devhostd."""
        owed = settings.needs_launch(self._launched)
        self.settings = modes.CLAUDE_UNTIL_SWAP if owed else settings
        answer = {**answer, "updatedPermissions": [
            {"type": "setMode", "mode": self.settings.permission_mode, "destination": "session"}]}
        return [{"type": "control_response",
                 "response": {"subtype": "success", "request_id": request_id, "response": answer}}], owed

    def set_model_frames(self, model: str) -> list[dict]:
        # "default" returns to the CLI's configured model.
        return [self._control("set_model", model=model or "default")]

    def stop_waiting_for(self, message_id: str) -> None:
        """The host gave up on a message's acknowledgement: it no longer counts on it to start a turn."""
        self.waiting.discard(message_id)

    def interrupt_frames(self) -> list[dict]:
        self._interrupting = True
        fields = {"cancel_queued": True} if _CANCEL_QUEUED in self.capabilities else {}
        return [self._control("interrupt", **fields)]

    def stop_task_frames(self, task_id: str, kind: str = "task") -> list[dict]:
        """Ends a background task (a subagent or a background shell, ``kind``) by its task id;
        the CLI answers with task_updated "killed" and task_notification "stopped"."""
        return [self._control("stop_task", task_id=task_id)]

    def expire(self, request_id) -> list:
        return []  # Claude Code's replies are not waited on: nothing to expire

    def rewind_frames(self, before_turn: str | None) -> None:
        """None: Claude Code cannot rewind a running process's conversation; the link starts
        the next process at the anchor instead (command_line ``resume_at``)."""
        return None

    def stop_frames(self) -> list[dict]:
        # end_session makes the CLI exit 0 by itself; signals are only the fallback.
        return [self._control("end_session")]

    def respond_frames(self, request_id, result: dict, kind: str = "can_use_tool") -> list[dict]:
        if result.get("interrupt") is True:
            self._interrupting = True  # a deny that also stops the turn ends it as an interrupt
        return [{"type": "control_response",
                 "response": {"subtype": "success", "request_id": request_id, "response": session_only(result)}}]

    def decode(self, frame: dict) -> tuple[bool, list]:
        """Returns (keep in history, effects): read() without the thread's operations."""
        keep, found, _ = self.read(frame)
        return keep, found

    def read(self, frame: dict) -> tuple[bool, list, list]:
        """The one reading of a frame: (keep in history, effects for the link, operations for
        the thread). One dispatch on its type serves both: the projection's handler for the type
        gives the operations."""
        kind = frame.get("type")
        found: list = []
        session_id = frame.get("session_id")
        if session_id != self._session_id and isinstance(session_id, str) and session_id:
            # Every frame carries it: said when it changes, so a batch's frames go out together.
            self._session_id = session_id
            found.append(fx.NativeSession(session_id))
        projection = self.projection
        if kind == "stream_event":
            return True, found, projection.stream_event(frame)
        if kind == "assistant":
            if frame.get("parent_tool_use_id") is None and not frame.get("is_api_error_message"):
                found.extend(_context(frame.get("message")))
            return True, found, projection.assistant(frame)
        if kind == "user":
            if frame.get("isReplay") and isinstance(frame.get("uuid"), str):
                found.append(fx.Delivery(frame["uuid"], "started"))
                self.waiting.discard(frame["uuid"])
            return True, found, projection.user(frame)
        if kind == "system":
            self._system(frame, found)
            return True, found, projection.system(frame)
        if kind == "command_lifecycle":
            found.extend(self._lifecycle(frame))
            if frame.get("state") in ("queued", "started"):
                found.append(fx.PromptTaken())
        elif kind == "rate_limit_event":
            found.extend(self._rate_limit(frame.get("rate_limit_info")))
        elif kind == "result":
            found.extend(_totals(frame))  # before the turn ends: its cost is the turn's
            found.append(self._result(frame))
            found.append(_usage(frame))
            self._turn_running = False
            self._turn_active = bool(self.waiting)  # a queued message starts the next turn
            if self._model_for_next_turn is not None:
                found.append(fx.Write(tuple(self.set_model_frames(self._model_for_next_turn))))
                self._model_for_next_turn = None
        elif kind == "control_request":
            request = frame.get("request") or {}
            if self.settings is not None and modes.claude_allows(self.settings, request, self._root, self._cwd):
                # The mode lets it through: answered here, never shown as a question to anyone.
                answer = {"behavior": "allow", "updatedInput": request.get("input") or {}}
                return False, found + [fx.Write(tuple(self.respond_frames(frame.get("request_id"), answer)))], []
            found.append(fx.RequestOpened(frame.get("request_id"), str(request.get("subtype", "unknown"))))
            return True, found, projection.request(frame)
        elif kind == "control_cancel_request":
            found.append(fx.RequestClosed(frame.get("request_id")))
            return True, found, projection.withdraw(frame)
        elif kind == "control_response":
            return False, found + self._reply(frame.get("response") or {}), []
        elif kind == "keep_alive":
            return False, found, []
        return True, found, []

    def _system(self, frame: dict, found: list) -> None:
        subtype = frame.get("subtype")
        if subtype == "api_retry":
            number = lambda key: frame.get(key) if isinstance(frame.get(key), int) else None  # noqa: E731
            found.append(fx.Retry(number("attempt"), number("max_retries"), number("error_status"),
                                  frame.get("error") if isinstance(frame.get("error"), str) else None))
        elif subtype == "init":
            # system/init (not initialize) lists the interrupt and lifecycle capabilities.
            self._learn_capabilities(frame.get("capabilities"))
            if not self._turn_running:
                # A turn nobody sent a message for: Claude Code starts one by itself when
                # background work (a subagent, a background shell) ends, to report on it.
                self._turn_running = self._turn_active = True
                found.append(fx.TurnStarted())
            if isinstance(frame.get("model"), str):
                found.append(fx.ModelInUse(frame["model"]))
            if isinstance(frame.get("skills"), list):
                self.skills = skill_rules.claude_reported(self._commands, frame["skills"])
            if isinstance(frame.get("slash_commands"), list):
                found.append(fx.Facts((("slashCommands", tuple(c for c in frame["slash_commands"]
                                                                if isinstance(c, str))),)))

    def _learn_capabilities(self, listed) -> None:
        if isinstance(listed, list):
            self.capabilities = tuple(dict.fromkeys([*self.capabilities, *(c for c in listed if isinstance(c, str))]))

    def _lifecycle(self, frame: dict) -> list:
        message_id, state = frame.get("command_uuid"), frame.get("state")
        if not isinstance(message_id, str):
            return []
        if state == "queued":
            return [fx.Delivery(message_id, "queued")]
        if state == "started":
            self.waiting.discard(message_id)
            self._started.add(message_id)
            self._turn_active = self._turn_running = True
            return [fx.Delivery(message_id, "started"), fx.TurnStarted()]
        if state in _SETTLED:
            self.waiting.discard(message_id)
            settled = [fx.MessageSettled(message_id)]
            if state in ("discarded", "refused"):
                settled.insert(0, fx.Delivery(message_id, "error", f"Claude Code {state} the message"))
            elif state == "cancelled" and message_id not in self._started:
                # A follow-up queued behind a turn an interrupt stopped: the CLI drops it unsent
                # (measured: tests/fixtures/claude-frames/controls2.jsonl); it never reached the model.
                settled.insert(0, fx.Delivery(message_id, "cancelled", NOT_SENT_INTERRUPT))
            if message_id not in self._started and not self._turn_running and not self.waiting:
                # Dropped before any turn took it up: no result will come to end the turn it opened.
                self._turn_active = False
                settled.append(fx.TurnEnded())
            self._started.discard(message_id)
            return settled
        return []

    def _result(self, frame: dict) -> fx.TurnEnded:
        interrupting, self._interrupting = self._interrupting, False
        if not frame.get("is_error"):
            return fx.TurnEnded()
        reason = frame.get("terminal_reason")
        if interrupting and reason in ("aborted_streaming", "aborted_tools"):
            return fx.TurnEnded(interrupted=True)
        text = frame.get("result")
        if not isinstance(text, str) or not text.strip():
            errors = [e for e in frame.get("errors") or [] if isinstance(e, str)]
            text = "; ".join(errors) or \
                f"Claude Code turn failed ({reason or frame.get('subtype') or 'no reason given'})"
        return fx.TurnEnded(error=text.strip(), limit=self._limit_of(frame, text.strip()))

    def _rate_limit(self, info) -> list:
        """rate_limit_event (subscription logins only): the window's use, and its reset when the
        service refused (a usage_limit_reached result follows). The window's own status says
        ``allowed_warning`` even where the event's says ``allowed``."""
        if not isinstance(info, dict):
            return []
        self._rejected = info if info.get("status") == "rejected" else None
        window = info.get("rateLimitType") if isinstance(info.get("rateLimitType"), str) else None
        if window is None:
            return []
        detail = (info.get("unifiedWindows") or {}).get(window) or {}
        utilization = info.get("utilization", detail.get("utilization"))
        return [fx.PlanUsage(tuple(limits.plan_usage(
            window, utilization if isinstance(utilization, (int, float)) else None,
            limits.epoch_ms(info.get("resetsAt")), detail.get("status") or info.get("status")).items()))]

    def _limit_of(self, frame: dict, message: str) -> dict | None:
        """A failed turn's limit: the plan's usage window (usage_limit_reached, with its reset),
        a rate limit (429) or an overloaded model (529) whose retries ran out."""
        rejected, self._rejected = self._rejected, None
        if frame.get("api_error") == "usage_limit_reached":
            info = rejected or {}
            limit = {"kind": "usage", "message": message}
            if limits.epoch_ms(info.get("resetsAt")) is not None:
                limit["resetsAt"] = limits.epoch_ms(info["resetsAt"])
            if isinstance(info.get("rateLimitType"), str):
                limit["window"] = info["rateLimitType"]
            return limit
        if frame.get("api_error_status") == 429 or frame.get("api_error_type") == "rate_limit_error":
            return limits.rate_limit(message, int(time.time() * 1000))
        if frame.get("api_error_status") == 529 or frame.get("api_error_type") == "overloaded_error":
            return {"kind": "overload", "message": message}
        return None

    def _reply(self, response: dict) -> list:
        subtype = self._ours.pop(response.get("request_id"), None)
        if subtype is None:
            return []
        if response.get("subtype") == "error" and subtype == "set_model":
            return [fx.ModelRefused(f"Claude Code refused the model: {response.get('error') or 'no reason given'}")]
        if response.get("subtype") == "error":
            return [fx.ControlFailed(f"Claude Code refused {subtype}: {response.get('error') or 'no reason given'}")]
        payload = response.get("response") or {}
        if subtype == "initialize":
            self._learn_capabilities(payload.get("capabilities"))
            if isinstance(payload.get("commands"), list):
                self._commands = payload["commands"]
            return [fx.Ready(self.capabilities)]
        if subtype == "set_model" and isinstance(payload.get("model"), str):
            return [fx.ModelInUse(payload["model"])]
        return []


def _at(path: str) -> str:
    """A file reference as the CLI's prompt takes it: ``@path``, quoted when it holds a space."""
    return f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"


def _context(message) -> list:
    """How much of the context the last model request held: its input, cached or not. (An
    assistant frame's output count is the stream's start, not its end.)"""
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return []
    counts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if not any(isinstance(n, int) for n in counts):
        return []
    return [fx.Facts((("contextTokens", sum(n for n in counts if isinstance(n, int))),))]


def _totals(result: dict) -> list:
    """The process's cost so far (total_cost_usd adds up over its turns) and the model's window."""
    facts = []
    if isinstance(result.get("total_cost_usd"), (int, float)) and not isinstance(result["total_cost_usd"], bool):
        facts.append(("costTotalUsd", result["total_cost_usd"]))
    windows = [m.get("contextWindow") for m in (result.get("modelUsage") or {}).values() if isinstance(m, dict)]
    windows = [w for w in windows if isinstance(w, int) and w > 0]
    if windows:
        facts.append(("contextWindow", max(windows)))
    return [fx.Facts(tuple(facts))] if facts else []


def _usage(result: dict) -> fx.Usage:
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    fields = (("input_tokens", usage.get("input_tokens")), ("output_tokens", usage.get("output_tokens")),
              ("duration_ms", result.get("duration_ms")), ("total_cost_usd", result.get("total_cost_usd")))
    return fx.Usage(tuple((k, v) for k, v in fields if isinstance(v, (int, float)) and not isinstance(v, bool)))


_SAFE_PERMISSION_UPDATES = {"addRules", "replaceRules", "removeRules"}


def session_only(result: dict) -> dict:
    """An approval answer whose permission updates stay in this session's memory.

    A page may say "always allow this" for the session; it may not write settings files, add
    directories or switch the permission mode, which would outlast the chat or widen its reach.
    """
    updates = result.get("updatedPermissions")
    if updates is None:
        return result
    kept = [{**update, "destination": "session"} for update in updates if isinstance(update, dict)
            and update.get("type") in _SAFE_PERMISSION_UPDATES] if isinstance(updates, list) else []
    cleaned = {key: value for key, value in result.items() if key != "updatedPermissions"}
    if kept:
        cleaned["updatedPermissions"] = kept
    return cleaned


Driver = ClaudeDriver

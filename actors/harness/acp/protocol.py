"""The Agent Client Protocol (JSON-RPC 2.0, one object a line over the agent's stdio), as devhostd
drives any agent that speaks it: command lines, the frames devhostd writes, the frames it reads.

Pure translation, no I/O. One driver serves every ACP agent: what differs between them (its id,
label, command) is an ``AcpSpec`` (actors/harness/acp/__init__.py). Measured behaviour of
OpenCode 1.18.33 (``opencode acp``) this module relies on, recorded in
tests/fixtures/acp/opencode/:
- ``initialize`` then ``session/new`` (or ``session/load``, which replays the conversation as
  ``user_message_chunk`` / ``agent_message_chunk`` updates *before* its answer); the client
  declares no fs or terminal ability, so the agent uses its own tools and asks only
  ``session/request_permission``;
- one ``session/prompt`` per turn, answered when the turn ends with its ``stopReason``
  (``end_turn``; ``cancelled`` after ``session/cancel``, a notification); a rejected
  permission ends the turn with ``end_turn`` and a failed tool call;
- the agent numbers its own requests from 0 in each process;
- at stdin's close the agent exits 0 at once, mid-turn too, without answering the prompt.
"""
from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import replace

from actors.harness import effects as fx
from actors.harness import modes
from actors.harness.acp import abilities as ab
from actors.harness.acp.projection import AcpProjector
from actors.harness.acp.replay import Replay
from actors.harness.paths import inside

PROTOCOL_VERSION = 1
CLIENT_INFO = {"name": "devhost", "title": "devhost", "version": "0.1.0"}
# devhostd serves none of the client's optional abilities: the agent reads, writes and runs with
# its own tools (each behind its own session/request_permission), and nothing of the page's
# machine is reached through devhostd on the agent's behalf.
CLIENT_CAPABILITIES = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
REPLY_DEADLINE = 30.0  # seconds a control request (a mode, a model) may go unanswered
NOT_SENT_INTERRUPT = "not sent: an interrupt ended the turn before the agent took it up"
DROPPED_KEPT = 50  # the last reasons for frames the driver could not read, kept for the log
STOP_REASONS = {"max_tokens": "the model's output limit", "max_turn_requests": "its limit of model requests",
                "refusal": "the model refused"}
PLAN_MODE = False  # devhostd's plan (a person's choice) is not wired to an agent's own plan mode yet


class AcpSettings:
    """devhostd's runtime mode for an ACP agent. ACP has no sandbox or approval policy of its
    own to set, so devhostd's own answers to session/request_permission are the whole mode:
    ``allows`` what devhostd answers itself. "auto" (edits and commands inside Codex's sandbox)
    has no such sandbox here, so it runs as the next narrower mode, auto-accept-edits: a chat
    never runs wider than asked."""

    _ALLOWS = {"supervised": modes.NOBODY, "auto-accept-edits": modes.EDITS_IN_CHECKOUT,
               "auto": modes.EDITS_IN_CHECKOUT, "full-access": modes.EVERYTHING}
    _EFFECTIVE = {"supervised": "supervised", "auto-accept-edits": "auto-accept-edits",
                  "auto": "auto-accept-edits", "full-access": "full-access"}

    def __init__(self, mode: str):
        mode = mode if mode in self._ALLOWS else "supervised"
        self.mode, self.allows, self.effective = mode, self._ALLOWS[mode], self._EFFECTIVE[mode]

    def __eq__(self, other) -> bool:
        return isinstance(other, AcpSettings) and other.mode == self.mode

    def __repr__(self) -> str:
        return f"AcpSettings({self.mode!r})"


def mode_settings(mode: str, environ=None, plan: bool = False) -> AcpSettings:
    return AcpSettings(mode)


def command_line(command: tuple[str, ...], model: str | None = None, resume_id: str | None = None,
                 settings: AcpSettings | None = None, **_unused) -> list[str]:
    # The manifest's command is the whole command (e.g. ["opencode", "acp"]); model, session and
    # mode travel in JSON-RPC requests, never as flags.
    return list(command)


def allows_itself(settings: AcpSettings | None, params: dict, root: str, cwd: str) -> str | None:
    """The optionId devhostd answers a permission request with by itself under ``settings``, or
    None (the person answers). Edits in the checkout (ACP kind ``edit``, every location inside
    it) under auto-accept-edits, everything under full-access; always an ``allow_once`` option,
    so no rule outlives the request."""
    if settings is None or settings.allows == modes.NOBODY:
        return None
    options = [o for o in params.get("options") or [] if isinstance(o, dict) and o.get("kind") == "allow_once"
               and isinstance(o.get("optionId"), str)]
    if not options:
        return None
    if settings.allows == modes.EVERYTHING:
        return options[0]["optionId"]
    tool = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
    paths = [loc.get("path") for loc in tool.get("locations") or [] if isinstance(loc, dict)]
    if tool.get("kind") == "edit" and paths and all(isinstance(p, str) and os.path.isabs(p) and inside(p, root)
                                                    for p in paths):
        return options[0]["optionId"]
    return None


class AcpDriver:
    """Per-process protocol state: the session, the prompt in flight, messages waiting for it,
    requests awaiting replies. ``harness_id`` and ``label`` come from the spec (a subclass per
    agent, made by actors/harness/acp/__init__.py)."""

    harness_id = "acp"
    label = "ACP agent"

    def __init__(self, cwd: str = "", model: str | None = None, resume_id: str | None = None,
                 projection: AcpProjector | None = None, settings: AcpSettings | None = None, root: str = ""):
        self.projection = projection or AcpProjector(str(int(time.time() * 1000)))
        self._cwd, self._root = cwd, root or cwd
        self._model = model  # the session's requested model; None = the agent's own default
        self._resume_id = resume_id
        self.settings = settings
        self.abilities = ab.Abilities()
        self.session_id: str | None = None
        self._next_id = 0
        self._calls: dict[int, tuple[str, dict]] = {}  # id -> (method, context)
        self._prompt: tuple[int, str] | None = None  # (call id, message id) of the running prompt
        self._prompt_started = False  # the agent showed it works on it (an update, or its answer)
        self._held: deque = deque()  # (message id, blocks, model): waiting for the session or the prompt
        self._model_call: int | None = None  # a model change the next prompt waits for
        self._loading: Replay | None = None  # a session/load's replay coming in, gathered as items
        self._interrupting = False
        self._asked: set = set()  # the agent's open permission requests (its ids)
        self.waiting: set[str] = set()  # messages written or held, not yet taken up
        self.skills = None  # ACP lists no skills: the chat's folder answers (actors/chat/skills.py)
        self.dropped: deque = deque(maxlen=DROPPED_KEPT)  # why a frame was not read, newest last
        self._told_abilities: dict | None = None  # the abilities record the chat last heard

    # ---- frames devhostd writes ------------------------------------------------------------------

    def _call(self, method: str, params: dict, **context) -> dict:
        self._next_id += 1
        self._calls[self._next_id] = (method, context)
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}

    @staticmethod
    def _answer(request_id, result: dict) -> dict:
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    @staticmethod
    def _refuse(request_id, code: int, message: str) -> dict:
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}

    def start_frames(self) -> list[dict]:
        return [self._call("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                          "clientCapabilities": CLIENT_CAPABILITIES, "clientInfo": CLIENT_INFO})]

    def message_frames(self, message_id: str, text: str, images: list[tuple[str, str]],
                       model: str | None = None, skills=(), mentions=()) -> list:
        """One message: a session/prompt of a text block and an image block per image. ACP takes
        one prompt at a time, so a message during a turn waits for the turn's end (it is taken
        up then, as the next turn). Skills go as their slash command (ACP's commands are text);
        files as their paths in the text."""
        if mentions:
            listed = "\n".join(f"- {os.path.relpath(p, self._cwd) if inside(p, self._cwd) else p}" for p in mentions)
            text = (text + "\n\n" if text else "") + f"[Mentioned files]\n{listed}"
        if skills:
            text = f"/{skills[0][0]} {text}".rstrip()
        blocks = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "image", "mimeType": media_type, "data": data} for media_type, data in images]
        self.waiting.add(message_id)
        self._held.append((message_id, blocks, model))
        if self.session_id is None or self._prompt is not None or self._model_call is not None:
            # Said to the link at once: devhostd holds it (the agent gets it when free).
            return [fx.Delivery(message_id, "queued")] if self._prompt is not None else []
        return self._next_prompt()

    def _next_prompt(self) -> list:
        """Writes the next held message, after a model change it asks for (which it waits for)."""
        if not self._held or self.session_id is None or self._prompt is not None or self._model_call is not None:
            return []
        message_id, blocks, model = self._held[0]
        if model is not None and model != (self.abilities.model or ""):
            frames = self.set_model_frames(model or self._model or "")
            if frames:
                self._held[0] = (message_id, blocks, None)
                self._model_call = frames[0]["id"]
                return frames
        self._held.popleft()
        frame = self._call("session/prompt", {"sessionId": self.session_id, "prompt": blocks},
                           message_id=message_id, images=any(b["type"] == "image" for b in blocks))
        self._prompt, self._prompt_started = (frame["id"], message_id), False
        return [frame]

    def set_model_frames(self, model: str) -> list:
        """The agent's own way to change the model: session/set_config_option (its ``model``
        option) or session/set_model; [] when it offers neither (the model stays)."""
        selector = self.abilities.model_selector
        if selector is None or not model or self.session_id is None:
            return []
        if selector.method == "session/set_config_option":
            params = {"sessionId": self.session_id, "configId": selector.config_id, "value": model}
        else:
            params = {"sessionId": self.session_id, "modelId": model}
        frame = self._call(selector.method, params, model=model)
        return [frame, fx.Deadline(frame["id"], REPLY_DEADLINE)]

    def set_agent_mode_frames(self, mode_id: str) -> list | None:
        """The agent's own mode (OpenCode's build/plan): session/set_mode or its config option;
        None when the agent offers no modes, or not that one."""
        selector = self.abilities.mode_selector
        if selector is None or self.session_id is None or mode_id not in {m.id for m in self.abilities.modes}:
            return None
        if selector.method == "session/set_config_option":
            params = {"sessionId": self.session_id, "configId": selector.config_id, "value": mode_id}
        else:
            params = {"sessionId": self.session_id, "modeId": mode_id}
        frame = self._call(selector.method, params, mode=mode_id)
        return [frame, fx.Deadline(frame["id"], REPLY_DEADLINE)]

    @property
    def effective_mode(self) -> str | None:
        return self.settings.effective if self.settings else None

    def set_mode_frames(self, settings: AcpSettings) -> list:
        """devhostd's runtime mode: its own answers to permission requests change at once; the
        agent is told nothing (ACP has no policy to set), so no new process is ever needed."""
        self.settings = settings
        return []

    def plan_approved_frames(self, request_id, answer: dict, settings: AcpSettings) -> tuple[list, bool]:
        # No ACP approval carries a plan (PLAN_MODE is off): only reached if one ever did.
        self.settings = settings
        return self.respond_frames(request_id, answer), False

    def stop_waiting_for(self, message_id: str) -> None:
        self.waiting.discard(message_id)

    def interrupt_frames(self) -> list:
        """session/cancel (a notification) for the running prompt, and ``cancelled`` for every
        permission request it left open, as ACP requires; messages held behind the prompt are
        dropped unsent, as the other harnesses drop what an interrupt caught queued. [] when no
        prompt runs: nothing to stop."""
        if self._prompt is None or self.session_id is None:
            return []
        self._interrupting = True
        found: list = [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": self.session_id}}]
        for request_id in sorted(self._asked, key=str):
            found += [self._answer(request_id, {"outcome": {"outcome": "cancelled"}}), fx.RequestClosed(request_id)]
        self._asked.clear()
        for message_id, _, _ in self._held:
            self.waiting.discard(message_id)
            found.append(fx.Delivery(message_id, "cancelled", NOT_SENT_INTERRUPT))
        self._held.clear()
        return found

    def stop_task_frames(self, task_id: str, kind: str = "task") -> list:
        return []  # ACP has no background tasks to end

    def compact_frames(self) -> list:
        return [fx.ControlFailed(f"{self.label} cannot compact its context through ACP")]  # no such method

    def rewind_frames(self, before_turn) -> None:
        return None  # ACP has no rewind: the link says the agent cannot rewind its conversation

    def stop_frames(self) -> list:
        # ACP has no shutdown request: closing stdin (the link's next step) ends the agent, at
        # once and with status 0 (measured: OpenCode, tests/fixtures/acp/opencode/exit.jsonl).
        return []

    def respond_frames(self, request_id, result: dict, kind: str = "session/request_permission") -> list:
        """The answer to a permission request: ``{"outcome": {...}}`` (the projection builds it);
        ValueError for anything else, so nothing malformed reaches the agent."""
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") not in ("selected", "cancelled") or (
                outcome["outcome"] == "selected" and not isinstance(outcome.get("optionId"), str)):
            raise ValueError('an ACP permission answer is {"outcome": {"outcome": "selected", "optionId": …}} '
                             'or {"outcome": {"outcome": "cancelled"}}')
        self._asked.discard(request_id)
        return [self._answer(request_id, {"outcome": outcome})]

    # ---- frames devhostd reads -------------------------------------------------------------------

    def decode(self, frame: dict) -> tuple[bool, list]:
        keep, found, _ = self.read(frame)
        return keep, found

    def _drop(self, reason: str) -> tuple[bool, list, list]:
        self.dropped.append(reason)
        return False, [], []

    def read(self, frame) -> tuple[bool, list, list]:
        """The one reading of a frame: (keep in history, effects for the link, operations for
        the thread). A frame that is not JSON-RPC as ACP has it is dropped with its reason
        (``dropped``), never raised. When what the agent can do changed with it (advertised or
        seen), the chat's info hears it (``abilities``)."""
        keep, effects, operations = self._read(frame)
        record = self.abilities.record() if self.abilities.protocol_version is not None else None
        if record is not None and record != self._told_abilities:
            self._told_abilities = record
            effects = [*effects, fx.Facts((("abilities", record),))]
        return keep, effects, operations

    def _read(self, frame) -> tuple[bool, list, list]:
        if not isinstance(frame, dict):
            return self._drop(f"not a JSON object: {type(frame).__name__}")
        method = frame.get("method")
        if method is None:
            if "id" not in frame:
                return self._drop("neither a request, a notification nor a reply")
            return self._reply(frame)
        if not isinstance(method, str):
            return self._drop(f"a method that is not a string: {method!r}")
        params = frame.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return self._drop(f"{method}: params that are not an object")
        if "id" in frame:
            return self._request(frame["id"], method, params)
        if method != "session/update":
            return True, [], []  # a notification of the agent's own (an extension): kept, nothing to do
        update = params.get("update")
        if not isinstance(update, dict) or not isinstance(update.get("sessionUpdate"), str):
            return self._drop("session/update without an update kind")
        if self.session_id is not None and params.get("sessionId") not in (None, self.session_id):
            return self._drop(f"session/update of another session ({params.get('sessionId')!r})")
        if self._loading is not None:
            # session/load replays the conversation: gathered as items of their own (Earlier, once
            # loaded), which only a chat that never held it takes; never projected as a turn.
            self._loading.update(update)
            return False, [], []
        return True, self._update(update), self.projection.update(update)

    def _update(self, update: dict) -> list:
        kind = update["sessionUpdate"]
        found: list = []
        if self._prompt is not None and not self._prompt_started and kind not in (
                "available_commands_update", "config_option_update", "current_mode_update", "session_info_update"):
            found += self._taken()
        if kind == "available_commands_update":
            self.abilities = ab.with_commands(self.abilities, update.get("availableCommands"))
            found.append(fx.Facts((("slashCommands", self.abilities.commands),)))
        elif kind == "current_mode_update":
            self.abilities = ab.with_mode(self.abilities, update.get("currentModeId") or update.get("modeId"))
        elif kind == "config_option_update":
            before = self.abilities.model
            self.abilities = ab.with_config_options(self.abilities, update.get("configOptions"))
            if self.abilities.model and self.abilities.model != before:
                found.append(fx.ModelInUse(self.abilities.model))
        elif kind == "usage_update":
            facts = [("contextTokens", update.get("used")), ("contextWindow", update.get("size"))]
            cost = update.get("cost") if isinstance(update.get("cost"), dict) else {}
            if cost.get("currency") == "USD":
                facts.append(("costTotalUsd", cost.get("amount")))
            facts = [(k, v) for k, v in facts if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if facts:
                found.append(fx.Facts(tuple(facts)))
        return found

    def _taken(self) -> list:
        """The agent shows it works on the prompt: its message is taken up."""
        self._prompt_started = True
        message_id = self._prompt[1]
        self.waiting.discard(message_id)
        return [fx.Delivery(message_id, "started"), fx.PromptTaken()]

    def _request(self, request_id, method: str, params: dict) -> tuple[bool, list, list]:
        if method != "session/request_permission":
            # devhostd declared no fs or terminal ability and serves nothing else: said at once,
            # so the agent fails that step instead of waiting.
            return True, [fx.Write((self._refuse(request_id, -32601, f"devhost does not serve {method}"),))], []
        options = params.get("options")
        if not isinstance(options, list) or not any(isinstance(o, dict) and isinstance(o.get("optionId"), str)
                                                    for o in options):
            self.dropped.append("session/request_permission without options")
            return False, [fx.Write((self._refuse(request_id, -32602, "a permission request needs options"),))], []
        self.abilities = ab.observed(self.abilities, "permissionRequests", True)
        chosen = allows_itself(self.settings, params, self._root, self._cwd)
        if chosen is not None:
            # The mode lets it through: answered here, nobody asked.
            return False, [fx.Write((self._answer(request_id, {"outcome": {"outcome": "selected",
                                                                           "optionId": chosen}}),))], []
        self._asked.add(request_id)
        found = self._taken() if self._prompt is not None and not self._prompt_started else []
        return True, found + [fx.RequestOpened(request_id, method)], self.projection.request(request_id, params)

    def _reply(self, frame: dict) -> tuple[bool, list, list]:
        entry = self._calls.pop(frame.get("id"), None)
        if entry is None:
            return self._drop(f"a reply to no request of ours ({frame.get('id')!r})")
        method, context = entry
        error = frame.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {}
            message = str(error.get("message") or "no reason given")
        result = frame.get("result") if isinstance(frame.get("result"), dict) else {}
        if method == "initialize":
            if error is not None:
                return False, self._start_failed(f"{self.label} refused to initialize: {message}"), []
            self.abilities = ab.from_initialize(result)
            if self._resume_id and self.abilities.load_session:
                self._loading = Replay()
                start = self._call("session/load", {"sessionId": self._resume_id, "cwd": self._cwd,
                                                    "mcpServers": []})
                return False, [fx.Write((start,))], []
            found: list = []
            if self._resume_id:
                found.append(fx.ControlFailed(f"{self.label} cannot load a saved conversation (it does not offer "
                                              "session/load); a new conversation was started"))
            return False, found + [fx.Write((self._call("session/new", {"cwd": self._cwd, "mcpServers": []}),))], []
        if method in ("session/new", "session/load"):
            return False, self._session_ready(method, result, error, message if error is not None else ""), []
        if method == "session/prompt":
            return True, self._prompt_ended(context, result, error, message if error is not None else ""), \
                self.projection.cancelled()
        if "model" in context:
            return False, self._model_reply(frame.get("id"), context["model"], result, error, message
                                            if error is not None else ""), []
        if "mode" in context:
            if error is not None:
                return False, [fx.ControlFailed(f"{self.label} refused the mode {context['mode']}: {message}")], []
            self.abilities = ab.with_mode(ab.with_config_options(self.abilities, result.get("configOptions")),
                                          context["mode"])
        return False, [], []

    def _session_ready(self, method: str, result: dict, error, message: str) -> list:
        replay, self._loading = self._loading, None
        if error is not None:
            if method == "session/load":
                self.abilities = ab.observed(self.abilities, "loadSession", False)
                if error.get("code") == -32601:
                    self.abilities = ab.did(self.abilities, "load-refused")
                # The saved conversation cannot be opened: a new one, and the messages go there.
                self._resume_id = None
                return [fx.ControlFailed(f"{self.label} could not load the saved conversation ({message}); a new "
                                         "conversation was started and your message goes there"),
                        fx.Write((self._call("session/new", {"cwd": self._cwd, "mcpServers": []}),))]
            return self._start_failed(f"{self.label} could not start a session: {message}")
        session = result.get("sessionId") if method == "session/new" else self._resume_id
        if not isinstance(session, str) or not session:
            return self._start_failed(f"{self.label} answered {method} without a session id")
        self.session_id = session
        self.abilities = ab.with_session(self.abilities, result)
        if method == "session/load":
            self.abilities = ab.observed(self.abilities, "loadSession", True)
        earlier = replay.items() if replay is not None else []
        found: list = [fx.Earlier(tuple(earlier))] if earlier else []
        found += [fx.NativeSession(session), fx.Ready(tuple(k for k, v in (
            ("loadSession", self.abilities.load_session), ("image", self.abilities.images)) if v))]
        if self.abilities.model:
            found.append(fx.ModelInUse(self.abilities.model))
        if self._model and self._model != self.abilities.model and self._held:
            # The session's requested model goes with its first message (which waits for it).
            message_id, blocks, model = self._held[0]
            self._held[0] = (message_id, blocks, self._model if model is None else model)
        elif self._model and self._model != self.abilities.model:
            frames = self.set_model_frames(self._model)
            found += [fx.Write(tuple(f for f in frames if isinstance(f, dict))),
                      *(f for f in frames if not isinstance(f, dict))]
        found += self._write_next()
        return found

    def _write_next(self) -> list:
        frames = self._next_prompt()
        dicts = tuple(f for f in frames if isinstance(f, dict))
        return ([fx.Write(dicts)] if dicts else []) + [f for f in frames if not isinstance(f, dict)]

    def _model_reply(self, call_id, model: str, result: dict, error, message: str) -> list:
        waited = call_id == self._model_call
        self._model_call = None if waited else self._model_call
        if error is not None:
            found: list = [fx.ModelRefused(f"{self.label} refused the model {model}: {message}")]
        else:
            if isinstance(result.get("configOptions"), list):  # the agent says what is current now
                self.abilities = ab.with_config_options(self.abilities, result["configOptions"])
            else:  # session/set_model answers {}: the model asked for holds from now
                self.abilities = replace(self.abilities, model=model)
            found = [fx.ModelInUse(self.abilities.model)]
        return found + (self._write_next() if waited else [])

    def _prompt_ended(self, context: dict, result: dict, error, message: str) -> list:
        message_id = context["message_id"]
        found: list = [] if self._prompt_started else self._taken()
        self._prompt = None
        interrupting, self._interrupting = self._interrupting, False
        closed = [fx.RequestClosed(r) for r in sorted(self._asked, key=str)]
        self._asked.clear()
        if error is not None:
            if context.get("images") and error.get("code") == -32602:
                self.abilities = ab.did(ab.observed(self.abilities, "images", False), "image-refused")
            if not self._prompt_started:
                found = [fx.Delivery(message_id, "error", f"{self.label} refused the message: {message}")]
                self.waiting.discard(message_id)
            ended = fx.TurnEnded(error=f"{self.label} refused the message: {message}")
        else:
            reason = result.get("stopReason")
            usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
            found.append(fx.Usage(tuple((k, v) for k, v in usage.items()
                                        if isinstance(v, int) and not isinstance(v, bool))))
            if context.get("images"):
                self.abilities = ab.observed(self.abilities, "images", True)
            if interrupting:
                self.abilities = ab.observed(self.abilities, "cancel", reason == "cancelled")
            if reason == "cancelled":
                ended = fx.TurnEnded(interrupted=True) if interrupting else \
                    fx.TurnEnded(error=f"{self.label} cancelled the turn")
            elif reason in STOP_REASONS:
                ended = fx.TurnEnded(error=f"{self.label} stopped the turn: {STOP_REASONS[reason]}")
            else:
                ended = fx.TurnEnded()  # end_turn, or a reason newer than this module: the turn is over
        found += [*closed, fx.MessageSettled(message_id), ended]
        return found + self._write_next()

    def _start_failed(self, reason: str) -> list:
        failed: list = [fx.ControlFailed(reason)]
        for message_id, _, _ in self._held:
            self.waiting.discard(message_id)
            failed.append(fx.Delivery(message_id, "error", reason))
        self._held.clear()
        return failed + [fx.StartFailed(reason)]

    def expire(self, request_id) -> list:
        """A control request got no answer in time: stop waiting on it (a message waiting for a
        model change goes out without it)."""
        entry = self._calls.pop(request_id, None)
        if entry is None:
            return []
        method, _ = entry
        found: list = [fx.ControlFailed(f"{self.label} did not answer {method} in time")]
        if request_id == self._model_call:
            self._model_call = None
            found += self._write_next()
        return found


Driver = AcpDriver

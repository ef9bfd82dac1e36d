"""A conversation's link to its CLI: one process at a time, told apart by its serial.

A plain object owned by the Chat actor (actors/chat/). It starts the CLI (a CliProcess
actor), writes the harness driver's frames to it, decodes what it writes back into the
driver's effects, keeps the native requests it waits on, the deadlines, and every message in
flight until the CLI shows what became of it (its acknowledgement).

Messages come from an *origin*: a Chat-API socket (its subscriber id) or the chat core
(``CORE``: its turns and steers). Sends of one origin go out one at a time, each after the
previous one's acknowledgement; the result goes back to its origin only. What the link cannot
decide alone it tells its owner (``LinkOwner``): a result, the evidence about a message, the
end of a turn, a note for a person. Its timers (the start's watchdog, an acknowledgement's
wait, a request's deadline) come back to the link itself, through the actor (actors/tell.py
``call_later``). Nobody else writes its fields: the chat says what happens (``abandon``,
``end_for_fault``, ``forget_conversation``) and the link changes its own state.

Each CLI process is started with the link's ``process_serial``, which the process puts on
everything it tells (its frames, its failure, its exit). The serial goes up at every start and
at every retirement, so what a retired or earlier process still says is never taken for the
current one's.
"""
from __future__ import annotations

import os
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Protocol

import gevent.event

from actors import chatlog, proctree
from actors.cli_process import CliProcess
from actors.guard import on_threadpool, spawn_logged
from actors.harness import effects as fx
from actors.messages import Send, is_lowercase_uuid
from actors.session_rules import compose_message
from actors.tell import call_later

ACK_TIMEOUT = 15.0  # seconds without evidence before a send reads "unconfirmed"
# Seconds a new CLI has to get ready (its handshake, and Codex's thread): one watchdog for every
# harness, so a CLI that never answers cannot leave its session "starting" for ever.
START_DEADLINE = 60.0
CLI_STOP_WAIT = 10.0  # seconds a stopping chat waits for a CLI's tree to end (SIGTERM, then SIGKILL)
CORE = "core"  # the origin of what the chat core sends


class LinkOwner(Protocol):
    def link_started(self) -> None: ...
    def link_dispatched(self, origin, command: Send, joined: bool) -> None: ...
    def link_result(self, origin, command_id: str, delivery: str | None, error: str | None) -> None: ...
    def link_evidence(self, message_id: str, delivery: str) -> None: ...
    def link_turn_ended(self, effect: fx.TurnEnded) -> None: ...
    def link_notice(self, message: str) -> None: ...
    def link_start_failed(self, message: str) -> None: ...
    def link_turn_started(self) -> None: ...
    def link_plan_usage(self, usage: dict) -> None: ...
    def link_facts(self, facts: dict) -> None: ...
    def link_changed(self) -> None: ...  # the record changed outside a batch of frames


@dataclass
class InFlight:
    origin: object
    command_id: str
    sent_at: float
    timer: object = None


class CliLink:
    def __init__(self, *, chat_id: str, harness, root: str, command: tuple[str, ...], model: str | None,
                 native_id: str | None, actor_ref, owner: LinkOwner, ack_timeout: float = ACK_TIMEOUT,
                 log: chatlog.ChatLog | None = None, agent_token=None, workdir: str | None = None,
                 start_deadline: float = START_DEADLINE):
        self._chat_id = chat_id
        self._agent_token = agent_token  # () -> the chat's DEVHOSTD_TOKEN, or None (no core to reach)
        self._chatlog = log or chatlog.ChatLog(chat_id, harness.HARNESS_ID, root)
        self._opened: dict = {}  # native request id -> when it was asked (monotonic)
        self.harness = harness
        self.root = root  # the session's folder (its page's checkout)
        self.workdir = workdir or root  # where the CLI runs: root, or the folder in it a resumed conversation began in
        self.command = command
        self.model = model  # what devhost asked for; None = the CLI's configured default
        self.native_id = native_id  # the CLI's own conversation id, once known (or to resume)
        self._actor_ref = actor_ref
        self._owner = owner
        self._ack_timeout = ack_timeout
        self.start_deadline = start_deadline
        self.model_in_use = None
        self._model_before_change = model
        self.driver = None
        self.cli = None
        self._cli_ref = None
        self.process_serial = 0  # see the module's docstring
        self.starting = False
        self.turn_active = False
        self.turn_started_at = None
        self.cli_turn = None  # the CLI's id of the running turn, where it gives one
        self.retrying = None  # the CLI's last retry of a model request in this turn (record: ``retrying``)
        self.last_event_at = None
        self.pending: dict = {}  # native request id -> kind, in arrival order
        self.in_flight: dict[str, InFlight] = {}  # native message id -> send awaiting its ack
        self._outbox: dict[object, deque] = {}  # per origin: sends waiting for the previous ack
        self._used_command_ids: set[str] = set()
        self._live = 0
        self._retired: list = []  # refs of retired processes that may still be ending
        self.gone = gevent.event.Event()  # set while no process of this chat runs, retired ones included
        self.gone.set()

    @property
    def running(self) -> bool:
        return self.cli is not None

    def _log(self, event: str, **fields) -> None:
        self._chatlog(event, **fields)

    # ---- the process ---------------------------------------------------------------------------

    def start(self) -> None:
        self.process_serial += 1
        resume_id = self.native_id
        # The CLI's folders are globbed and its file read on the hub's threadpool (file work
        # never holds the hub); this chat waits, the others go on.
        if resume_id and on_threadpool(self.harness.find_conversation_cwd, resume_id, os.environ) is None:
            # The CLI died before it saved anything: there is nothing to resume, so the message
            # starts a new conversation rather than fail on a resume the CLI would refuse.
            self._log("session.restart", native=resume_id, note="conversation was never saved; starting a new one")
            self._owner.link_notice(f"{self.harness.LABEL} had not saved the conversation before it stopped; "
                                    "a new conversation was started and your message goes there")
            resume_id = None
        argv = self.harness.command_line(self.command, model=self.model, resume_id=resume_id)
        # (a folder removed since: the session's own folder, where the CLI can resume it too)
        folder = self.workdir if self.workdir == self.root or os.path.isdir(self.workdir) else self.root
        self.driver = self.harness.Driver(cwd=folder, model=self.model, resume_id=resume_id)
        self.starting = True
        self._live += 1
        self.gone.clear()
        self._cli_ref = CliProcess.start(self._actor_ref, self.process_serial, argv, folder,
                                         proctree.make_tag(self._chat_id), self.harness.LABEL, self._agent_env(),
                                         session_id=self._chat_id)
        self.cli = self._cli_ref.proxy()
        self._owner.link_started()
        self.write(self.driver.start_frames())
        call_later(self.start_deadline, self._actor_ref, self._start_deadline_passed, self.process_serial)

    def is_current(self, process_serial: int) -> bool:
        """Whether what a process of that serial says counts (it is the current process's)."""
        return process_serial == self.process_serial

    def start_overdue(self, process_serial: int) -> bool:
        """True when the process of that serial is still the current one and still not ready."""
        return process_serial == self.process_serial and self.starting and self.cli is not None

    def _start_deadline_passed(self, process_serial: int) -> None:
        if self.start_overdue(process_serial):
            self._start_failed(f"{self.harness.LABEL} did not get ready within {self.start_deadline:g} s "
                               "of starting, so devhost ended it; send again to start it anew")
            self._owner.link_changed()

    def _start_failed(self, message: str) -> None:
        self.starting = False
        self._owner.link_start_failed(message)  # the chat ends the process (end_for_fault)

    def _agent_env(self) -> dict[str, str]:
        """What the agent's own shell needs to reach devhostd's agent-side commands (`devhostd
        visual publish`): its chat and that chat's token. Never the core's secret."""
        env = {"DEVHOSTD_CHAT": self._chat_id}
        if self._agent_token is not None:
            env["DEVHOSTD_TOKEN"] = self._agent_token()
        return env

    def stop(self) -> None:
        """Asks the CLI to stop and ends its tree; its exit is still reported (on_cli_exit)."""
        if self.cli is not None:
            self.write(self.driver.stop_frames())
            self.cli.terminate()

    def retire(self, reason: str) -> None:
        """Ends the CLI without its exit counting against the chat: what it still writes is
        ignored, nothing of it is waited on any more, and every send in flight or queued is
        answered with ``reason`` (none of them can be acknowledged by a retired process, and a
        queue left behind one would never move again)."""
        self.stop()
        self.process_serial += 1  # what it still says counts no more
        if self._cli_ref is not None:
            self._retired.append(self._cli_ref)  # still ending: shut() waits for it too
        self.cli = None
        self._cli_ref = None
        self.starting = False
        self.turn_active = False
        self.pending.clear()
        self.fail_sends(reason)
        self._outbox.clear()

    def exited(self, process_serial: int) -> bool:
        """Counts an exit; True when it is the current process's (the chat must react): its
        requests are no longer waited on and its turn is over."""
        self._live -= 1
        if self._live <= 0:
            self.gone.set()
        if process_serial != self.process_serial:
            return False
        self.cli = None
        self._cli_ref = None
        self.starting = False
        self.pending.clear()
        self.turn_active = False
        return True

    def abandon(self, reason: str) -> None:
        """Nothing of the CLI is waited on any more (the session closed, the history broke):
        every send is answered with ``reason``, no request is pending, no turn runs. The
        process, if any, is left to the caller to stop."""
        self.fail_sends(reason)
        self.pending.clear()
        self.turn_active = False

    def end_for_fault(self, reason: str) -> None:
        """The CLI cannot go on (never ready, stopped reading, broke its protocol): its turn is
        over, every send is answered with ``reason`` and the process is ended; its requests
        stay listed until its exit, which follows."""
        self.turn_active = False
        self.fail_sends(reason)
        self.terminate()

    def terminate(self) -> None:
        """Ends the process at once, with no stop frames (its exit follows)."""
        if self.cli is not None:
            self.cli.terminate()

    def forget_conversation(self) -> None:
        """The next CLI starts a new conversation instead of resuming this one (a clear)."""
        self.native_id = None

    def heard(self) -> None:
        """The current CLI wrote something (the heartbeat measures quiet from here)."""
        self.last_event_at = time.monotonic()

    def shut(self) -> None:
        """The actor stops: each CliProcess's on_stop ends its process tree. No exit reaches a
        stopped chat, so ``gone`` is set here once they all stopped (a daemon stopping waits for
        the CLIs of chats killed just before)."""
        refs = [ref for ref in [self._cli_ref, *self._retired] if ref is not None]
        self._retired.clear()
        if not refs:
            return
        gone = self.gone

        def stop_all() -> None:
            try:
                for ref in refs:
                    try:
                        ref.stop(block=True, timeout=CLI_STOP_WAIT)
                    except Exception:  # noqa: BLE001 - stopped already, or stuck: the daemon's sweep ends it
                        pass
            finally:
                gone.set()
        spawn_logged(stop_all)

    def write(self, items: list) -> None:
        """Writes a driver's frames to the CLI; effects among them (deadlines) are applied."""
        frames = [item for item in items if isinstance(item, dict)]
        for item in items:
            if not isinstance(item, dict):
                self.apply(item)
        if frames and self.cli is not None:
            self.cli.write(frames)

    # ---- sending -------------------------------------------------------------------------------

    def send(self, origin, command: Send, prompt: str) -> None:
        queue = self._outbox.setdefault(origin, deque())
        if queue or any(entry.origin == origin for entry in self.in_flight.values()):
            queue.append((command, prompt, time.monotonic()))  # sends from one origin are delivered in order
            return
        self._dispatch(origin, command, prompt)

    def _dispatch(self, origin, command: Send, prompt: str, queued_at: float | None = None) -> None:
        message_id = command.command_id if is_lowercase_uuid(command.command_id) else str(uuid.uuid4())
        if command.command_id in self._used_command_ids:
            # The CLI silently drops a repeated message id; a resend is the person's call, with a new id.
            self._owner.link_result(origin, command.command_id, None,
                                    "this commandId was already sent in this session; devhost never resends a "
                                    "message: check the conversation, then send again with a new commandId")
            self._next(origin)
            return
        self._used_command_ids.add(command.command_id)
        if self.cli is None:
            self.start()
        model = command.model if command.model is not None and command.model != (self.model or "") else None
        if model is not None:
            # The record shows the choice at once; a refusal by the CLI puts the previous one back.
            self._model_before_change = self.model
            self.model = model or None
        joined = self.turn_active
        entry = InFlight(origin, command.command_id, time.monotonic())
        entry.timer = call_later(self._ack_timeout, self._actor_ref, self.ack_timed_out, message_id)
        self.in_flight[message_id] = entry
        text = compose_message(command.text, prompt)
        self.write(self.driver.message_frames(message_id, text, list(command.images), model))
        self._log("message.sent", command=command.command_id, attachments=len(command.images),
                  outbox=f"{time.monotonic() - queued_at:.2f}s" if queued_at is not None else None,
                  turn=self._chatlog.turn if joined else None, joined=True if joined else None)
        if not self.turn_active:
            self._begin_turn()
        self._owner.link_dispatched(origin, command, joined)

    def refuse_queued(self, reason: str, sockets_only: bool = False) -> None:
        """Answers every queued send (of the sockets only, or of every origin) with an error."""
        for queued_origin, queue in self._outbox.items():
            if sockets_only and queued_origin == CORE:
                continue
            while queue:
                command, *_ = queue.popleft()
                self._owner.link_result(queued_origin, command.command_id, None, reason)

    def fail_sends(self, reason: str) -> None:
        """Answers every send in flight and every queued one with an error; dispatches nothing."""
        self.refuse_queued(f"not sent: {reason}")
        for message_id in list(self.in_flight):
            self.ack(message_id, None, reason, dispatch_next=False)

    def forget_origin(self, origin) -> None:
        self._outbox.pop(origin, None)

    def ack(self, message_id: str, delivery: str | None, error: str | None, dispatch_next: bool = True) -> None:
        entry = self.in_flight.pop(message_id)
        if entry.timer is not None:
            entry.timer.kill(block=False)
        self._log("message.ack", command=entry.command_id, delivery=delivery or "error",
                  after=f"{time.monotonic() - entry.sent_at:.2f}s", error=error)
        self._owner.link_result(entry.origin, entry.command_id, delivery, error)
        if dispatch_next:
            self._next(entry.origin)

    def _next(self, origin) -> None:
        queue = self._outbox.get(origin)
        if queue:
            command, prompt, queued_at = queue.popleft()
            self._dispatch(origin, command, prompt, queued_at)

    def ack_timed_out(self, message_id: str) -> None:
        if message_id in self.in_flight:
            self.driver.waiting.discard(message_id)  # no longer counted on to start a turn
            self._owner.link_evidence(message_id, "unconfirmed")
            self.ack(message_id, "unconfirmed", None)

    # ---- requests and interrupts ---------------------------------------------------------------

    def interrupt(self) -> bool:
        if self.cli is None or not (self.turn_active or self.pending):
            return False  # nothing runs: an interrupt has nothing to stop (the CLI would ignore it too)
        self.write(self.driver.interrupt_frames())
        self._log("turn.interrupt", turn=self._chatlog.turn, pending=len(self.pending))
        return True

    def waits_on(self, request_id) -> bool:
        """Whether the CLI waits for an answer to that native request."""
        return request_id in self.pending

    def pending_ids(self) -> list:
        """The native requests waiting for an answer, in the order they came."""
        return list(self.pending)

    def stop_turn(self) -> bool:
        """Asks a ready CLI to stop its turn; False when none holds one it can stop (still
        starting, or its turn has no id yet)."""
        frames = self.driver.interrupt_frames() if self.cli is not None and not self.starting else []
        if frames:
            self.write(frames)
        return bool(frames)

    def stop_task(self, task_id: str, kind: str) -> bool:
        """Asks the CLI to end one background task; False when it cannot (or none runs)."""
        frames = self.driver.stop_task_frames(task_id, kind) if self.cli is not None else []
        if frames:
            self.write(frames)
        return bool(frames)

    def compact(self) -> None:
        """Asks the CLI to fold its context natively (Codex), starting it when none runs."""
        if self.cli is None:
            self.start()
        self.write(self.driver.compact_frames())

    def respond(self, request_id, result: dict) -> None:
        """Answers a native request (ValueError: the driver refuses the answer; nothing sent)."""
        frames = self.driver.respond_frames(request_id, result, self.pending[request_id])
        kind = self.pending.pop(request_id)
        self.write(frames)
        self._log("request.answered", request=request_id, kind=kind, waited=self._waited(request_id),
                  delivered=self.cli is not None)

    def _deadline_passed(self, process_serial: int, request_id) -> None:
        if process_serial == self.process_serial and self.driver is not None:
            self.expire(request_id)
            self._owner.link_changed()

    def expire(self, request_id) -> None:
        self._log("error", kind="timeout", request=request_id, waited=self._waited(request_id))
        self.write(self.driver.expire(request_id))  # frames to write (an interrupt) and effects

    # ---- what the CLI says ---------------------------------------------------------------------

    def apply(self, effect) -> bool:
        """Applies one effect of the driver; True when the session's record changed."""
        if isinstance(effect, fx.Ready):
            self.starting = False
            return True
        if isinstance(effect, fx.NativeSession):
            if effect.session_id != self.native_id:
                self.native_id = effect.session_id
                self._log("session.native", native=self.native_id)
                return True
            return False
        if isinstance(effect, fx.Delivery):
            self._owner.link_evidence(effect.message_id, effect.delivery)
            if effect.message_id in self.in_flight:
                self.ack(effect.message_id, None if effect.delivery == "error" else effect.delivery, effect.error)
            return False
        if isinstance(effect, fx.MessageSettled):
            self._owner.link_evidence(effect.message_id, "settled")
            if effect.message_id in self.in_flight:
                self.ack(effect.message_id, "queued", None)  # the CLI had it, whatever became of it
            return False
        if isinstance(effect, fx.TurnStarted):
            self.starting = False
            if not self.turn_active:
                self._begin_turn()
                self._owner.link_turn_started()  # no message of ours started it: the CLI did
            self.cli_turn = effect.cli_turn or self.cli_turn
            return True
        if isinstance(effect, fx.TurnEnded):
            self._end_turn(effect)
            self._owner.link_turn_ended(effect)
            return True
        if isinstance(effect, fx.RequestOpened):
            self.pending[effect.request_id] = effect.kind
            self._opened[effect.request_id] = time.monotonic()
            self._log("request.open", turn=self._chatlog.turn, request=effect.request_id, kind=effect.kind)
            return True
        if isinstance(effect, fx.RequestClosed):
            kind = self.pending.pop(effect.request_id, None)
            if kind is not None:
                self._log("request.cancelled", request=effect.request_id, kind=kind,
                          waited=self._waited(effect.request_id))
                return True
            return False
        if isinstance(effect, fx.ModelInUse):
            self.model_in_use = effect.model
            self._owner.link_facts({"model": effect.model})
            return False
        if isinstance(effect, fx.Facts):
            self._owner.link_facts(dict(effect.fields))
            return False
        if isinstance(effect, fx.Write):
            self.write(list(effect.frames))
            return False
        if isinstance(effect, fx.Deadline):
            call_later(effect.seconds, self._actor_ref, self._deadline_passed, self.process_serial, effect.request_id)
            return False
        if isinstance(effect, fx.StartFailed):
            self._start_failed(effect.message)
            return True
        if isinstance(effect, fx.Retry):
            self.retrying = {k: v for k, v in (("attempt", effect.attempt), ("of", effect.of),
                                               ("status", effect.status), ("error", effect.error)) if v is not None}
            self._log("turn.retry", turn=self._chatlog.turn, attempt=effect.attempt, of=effect.of,
                      status=effect.status, error=effect.error)
            return True
        if isinstance(effect, fx.PlanUsage):
            usage = dict(effect.usage)
            self._log("usage.window", window=usage.get("window"), used=usage.get("utilization"),
                      status=usage.get("status"), resets=chatlog.iso_ms(usage.get("resetsAt")))
            self._owner.link_plan_usage(usage)
            return True
        if isinstance(effect, fx.Usage):
            self._log("turn.usage", turn=self._chatlog.turn, **dict(effect.fields))
            return False
        if isinstance(effect, fx.ModelRefused):
            self.model = self._model_before_change
            self._log("error", kind="model", error=effect.message)
            self._owner.link_notice(effect.message)
            return True
        if isinstance(effect, fx.ControlFailed):
            self._log("error", kind="protocol", error=effect.message)
            self._owner.link_notice(effect.message)
            return False
        return False

    def _begin_turn(self) -> None:
        self.turn_active = True
        self.turn_started_at = time.monotonic()
        self._log("turn.start", turn=self._chatlog.next_turn(), model=self.model or "default")

    def _end_turn(self, effect: fx.TurnEnded) -> None:
        outcome = "interrupted" if effect.interrupted else ("failed" if effect.error else "completed")
        duration = time.monotonic() - (self.turn_started_at or time.monotonic())
        self._log("turn.end", turn=self._chatlog.turn, cli_turn=self.cli_turn, outcome=outcome, took=f"{duration:.1f}s",
                  model=self.model_in_use, error=effect.error)
        self.cli_turn = None
        self.retrying = None
        self.turn_active = bool(self.driver.waiting)  # a queued message starts the next turn
        self.turn_started_at = time.monotonic() if self.turn_active else None

    def _waited(self, request_id) -> str | None:
        opened = self._opened.pop(request_id, None)
        return f"{time.monotonic() - opened:.1f}s" if opened is not None else None

    def quiet_for(self, now: float) -> float:
        return now - (self.last_event_at or self.turn_started_at or now)

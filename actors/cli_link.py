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

It owns a process's life (its start, readiness and their watchdog, stop, retirement, exit),
the driver, the link's turn and the model. Three parts own the rest, each changed only through
its methods: ``processes`` (actors/cli_link_process.py: the CliProcess actors, current and
retired, their serial, ``gone``), ``sends`` (actors/cli_link_sends.py: the queues per origin,
the messages in flight, their acknowledgement timers) and ``requests``
(actors/cli_link_requests.py: the native requests waiting for an answer). ``apply`` routes each
of the driver's effects to the one that owns what it changes.

Each CLI process is started with the link's ``process_serial``, which the process puts on
everything it tells (its frames, its failure, its exit). The serial goes up at every start and
at every retirement, so what a retired or earlier process still says is never taken for the
current one's.
"""
from __future__ import annotations

import os
import time
from typing import Protocol

from actors import chatlog
from actors.cli_link_process import LinkProcesses
from actors.cli_link_requests import PendingRequests
from actors.cli_link_sends import ACK_TIMEOUT, Sends
from actors.guard import on_threadpool
from actors.harness import effects as fx
from actors.messages import Send
from actors.session_rules import compose_message
from actors.tell import call_later

# Seconds a new CLI has to get ready (its handshake, and Codex's thread): one watchdog for every
# harness, so a CLI that never answers cannot leave its session "starting" for ever.
START_DEADLINE = 60.0


class LinkOwner(Protocol):
    def link_started(self) -> None: ...
    def link_dispatched(self, origin, command: Send, joined: bool) -> None: ...
    def link_result(self, origin, command_id: str, delivery: str | None, error: str | None) -> None: ...
    def link_evidence(self, message_id: str, delivery: str) -> None: ...
    def link_not_sent(self, origin, command_id: str, reason: str) -> None: ...  # dropped by the CLI unsent
    def link_turn_ended(self, effect: fx.TurnEnded) -> None: ...
    def link_notice(self, message: str) -> None: ...
    def link_start_failed(self, message: str) -> None: ...
    def link_turn_started(self) -> None: ...
    def link_turn_opening(self) -> None: ...  # a message is about to open a turn: nothing is written yet
    def link_plan_usage(self, usage: dict) -> None: ...
    def link_facts(self, facts: dict) -> None: ...
    def link_skills(self, listed: tuple | None) -> None: ...
    def link_changed(self) -> None: ...  # the record changed outside a batch of frames
    def link_rewound(self, ok: bool, message: str) -> None: ...  # what became of a rewind (``rewind``)


def model_change(requested: str | None, current: str | None) -> str | None:
    """The model a message asks to change to ("": the CLI's default), or None when it keeps the
    one in use."""
    return requested if requested is not None and requested != (current or "") else None


def retry_record(effect: fx.Retry) -> dict:
    """The record's ``retrying``: what the CLI said of its retry, without what it left out."""
    return {key: value for key, value in (("attempt", effect.attempt), ("of", effect.of),
                                          ("status", effect.status), ("error", effect.error)) if value is not None}


def turn_outcome(effect: fx.TurnEnded) -> str:
    return "interrupted" if effect.interrupted else ("failed" if effect.error else "completed")


class CliLink:
    def __init__(self, *, chat_id: str, harness, root: str, command: tuple[str, ...], model: str | None,
                 native_id: str | None, actor_ref, owner: LinkOwner, ack_timeout: float = ACK_TIMEOUT,
                 log: chatlog.ChatLog | None = None, agent_token=None, workdir: str | None = None,
                 start_deadline: float = START_DEADLINE, runtime_mode: str = "supervised", plan: bool = False,
                 account: str | None = None, account_env=None):
        self._chat_id = chat_id
        self.account = account  # the manifest's account the CLI runs under; None: its default config home
        self._launched_account = account  # the one the running process was started under
        self._account_env = account_env or (lambda name: {})  # name -> its home's variable (storage/accounts.py)
        self.runtime_mode = runtime_mode  # what the chat asked for (info.runtimeMode)
        self.plan = plan  # the person asked for a plan first (info.permissionMode "plan")
        self.mode_needs_launch = False  # the running CLI cannot take the mode asked for: a new process must
        self._held: list[tuple] = []  # (origin, command, prompt): page sends waiting for the settings swap
        self._agent_token = agent_token  # () -> the chat's DEVHOSTD_TOKEN, or None (no core to reach)
        self._chatlog = log or chatlog.ChatLog(chat_id, harness.HARNESS_ID, root)
        self.harness = harness
        self.root = root  # the session's folder (its page's checkout)
        self.workdir = workdir or root  # where the CLI runs: root, or the folder in it a resumed conversation began in
        self.command = command
        self.model = model  # what devhost asked for; None = the CLI's configured default
        self.native_id = native_id  # the CLI's own conversation id, once known (or to resume)
        self._actor_ref = actor_ref
        self._owner = owner
        self.start_deadline = start_deadline
        self.model_in_use = None
        self._model_before_change = model
        self.driver = None
        self.processes = LinkProcesses(chat_id=chat_id, label=harness.LABEL, actor_ref=actor_ref)
        self.starting = False
        self.turn_active = False
        self.turn_started_at = None
        self.cli_turn = None  # the CLI's id of the running turn, where it gives one
        self.retrying = None  # the CLI's last retry of a model request in this turn (record: ``retrying``)
        self.last_event_at = None
        # A rewind's anchor for Claude Code (--resume-session-at): used by every start until a
        # process started with it takes a message (only then is the branch in the transcript).
        self.resume_at: str | None = None
        self._resumed_at: str | None = None  # the anchor the running process was started with
        self.requests = PendingRequests(self._log)
        self.sends = Sends(owner=owner, actor_ref=actor_ref, log=self._log, deliver=self._deliver,
                           unconfirmed=self._unconfirmed, ack_timeout=ack_timeout)

    @property
    def running(self) -> bool:
        return self.processes.running

    @property
    def process_serial(self) -> int:
        return self.processes.serial

    @property
    def gone(self):
        """Set while no process of this chat runs, retired ones included."""
        return self.processes.gone

    def _log(self, event: str, **fields) -> None:
        self._chatlog(event, **fields)

    # ---- the process ---------------------------------------------------------------------------

    def start(self) -> None:
        serial = self.processes.next_serial()
        resume_id = self.native_id
        # The CLI's folders are globbed and its file read on the hub's threadpool (file work
        # never holds the hub); this chat waits, the others go on.
        # (looked for under the account's own home: another home's CLI cannot resume it)
        files_env = {**os.environ, **self.home_env()}
        if resume_id and on_threadpool(self.harness.find_conversation_cwd, resume_id, files_env) is None:
            # The CLI died before it saved anything: there is nothing to resume, so the message
            # starts a new conversation rather than fail on a resume the CLI would refuse.
            self._log("session.restart", native=resume_id, note="conversation was never saved; starting a new one")
            self._owner.link_notice(f"{self.harness.LABEL} had not saved the conversation before it stopped; "
                                    "a new conversation was started and your message goes there")
            resume_id = None
        settings = self._settings()
        self._resumed_at = self.resume_at if resume_id else None
        at = {"resume_at": self._resumed_at} if self._resumed_at else {}
        argv = self.harness.command_line(self.command, model=self.model, resume_id=resume_id, settings=settings, **at)
        # (a folder removed since: the session's own folder, where the CLI can resume it too)
        folder = self.workdir if self.workdir == self.root or os.path.isdir(self.workdir) else self.root
        self.driver = self.harness.Driver(cwd=folder, model=self.model, resume_id=resume_id, settings=settings,
                                          root=self.root)
        self.mode_needs_launch = False
        self._launched_account = self.account
        self.starting = True
        self.processes.launch(argv, folder, self._agent_env())
        self._owner.link_started()
        self.write(self.driver.start_frames())
        call_later(self.start_deadline, self._actor_ref, self._start_deadline_passed, serial)

    @property
    def effective_mode(self) -> str:
        """The mode the CLI runs under now (the one it will start under, when none runs)."""
        if self.driver is not None and self.running and self.driver.effective_mode:
            return self.driver.effective_mode
        return self._settings().effective

    def _settings(self):
        return self.harness.mode_settings(self.runtime_mode, os.environ, plan=self.plan)

    def set_mode(self, mode: str | None = None, plan: bool | None = None) -> None:
        """A new runtime mode, or planning on or off: applied to the running CLI where it can
        take it, else a new process is owed (swap_pending; actors/chat/swap.py says when it starts)."""
        self.runtime_mode = mode or self.runtime_mode
        self.plan = self.plan if plan is None else plan
        if self.driver is None or not self.running:
            return
        frames = self.driver.set_mode_frames(self._settings())
        self.mode_needs_launch = frames is None
        if frames:
            self.write(frames)

    def plan_approved(self, request_id, answer: dict, mode: str) -> None:
        """The person approved the agent's plan and goes on in ``mode``: the answer moves the CLI
        there at once, or the rest of the turn runs supervised and the swap is owed."""
        self.plan, self.runtime_mode = False, mode
        frames, owed = self.driver.plan_approved_frames(request_id, answer, self._settings())
        self.mode_needs_launch = owed
        self.requests.answered(request_id, delivered=self.running)
        self.write(frames)

    def set_account(self, account: str | None) -> None:
        """Another account (its config home): a running CLI read the old one's login and
        transcripts, so a new process is owed, as for a mode the running CLI cannot take
        (swap_pending; actors/chat/swap.py says when it starts)."""
        self.account = account  # swap_pending compares it with the running process's

    @property
    def swap_pending(self) -> bool:
        """The running CLI cannot take the chat's settings: a new process is owed (actors/chat/swap.py)."""
        return (self.mode_needs_launch or self.account != self._launched_account) and self.running

    def restart_for_settings(self) -> None:
        """The settings swap: the CLI is ended and started again on its own conversation under
        the chat's settings. The chat's swap calls it only when nothing lives in the process."""
        if not self.swap_pending:
            return
        self._log("session.restart", native=self.native_id, note=f"runtime mode {self.runtime_mode}")
        self.retire("not delivered: the chat's CLI was restarted for its new runtime mode")
        self.start()

    def hold(self, origin, command: Send, prompt: str) -> None:
        """A page's send that waits for the settings swap (it is dispatched, in order, after it)."""
        self._held.append((origin, command, prompt))

    def release_held(self) -> None:
        held, self._held = self._held, []
        for origin, command, prompt in held:
            self.send(origin, command, prompt)

    def is_current(self, process_serial: int) -> bool:
        """Whether what a process of that serial says counts (it is the current process's)."""
        return process_serial == self.process_serial

    def start_overdue(self, process_serial: int) -> bool:
        """True when the process of that serial is still the current one and still not ready."""
        return process_serial == self.process_serial and self.starting and self.running

    def _start_deadline_passed(self, process_serial: int) -> None:
        if self.start_overdue(process_serial):
            self._start_failed(f"{self.harness.LABEL} did not get ready within {self.start_deadline:g} s "
                               "of starting, so devhost ended it; send again to start it anew")
            self._owner.link_changed()

    def _start_failed(self, message: str) -> None:
        self.starting = False
        self._owner.link_start_failed(message)  # the chat ends the process (end_for_fault)

    def home_env(self) -> dict[str, str]:
        """The variable of the account's config home (none for the default account): where the
        CLI keeps its login and its transcripts."""
        return self._account_env(self.account)

    def _agent_env(self) -> dict[str, str]:
        """What the agent's own shell needs to reach devhostd's agent-side commands (`devhostd
        visual publish`): its chat and that chat's token. Never the core's secret. And the
        account's config home (CLAUDE_CONFIG_DIR, CODEX_HOME), which the manifest names; for an
        ACP agent, what makes it ask before it acts (actors/harness/acp ASKING_ENVIRONMENT)."""
        env = {**getattr(self.harness, "AGENT_ENVIRONMENT", {}), **self.home_env(), "DEVHOSTD_CHAT": self._chat_id}
        if self._agent_token is not None:
            env["DEVHOSTD_TOKEN"] = self._agent_token()
        return env

    def stop(self) -> None:
        """Asks the CLI to stop and ends its tree; its exit is still reported (on_cli_exit)."""
        if self.running:
            self.write(self.driver.stop_frames())
            self.processes.terminate()

    def retire(self, reason: str) -> None:
        """Ends the CLI without its exit counting against the chat: what it still writes is
        ignored, nothing of it is waited on any more, and every send in flight or queued is
        answered with ``reason`` (none of them can be acknowledged by a retired process, and a
        queue left behind one would never move again)."""
        self.stop()
        self.processes.retire()  # what it still says counts no more; shut() waits for it too
        self.starting = False
        self.turn_active = False
        self.requests.clear()
        self.sends.fail_all(reason)

    def exited(self, process_serial: int) -> bool:
        """Counts an exit; True when it is the current process's (the chat must react): its
        requests are no longer waited on and its turn is over."""
        if not self.processes.exited(process_serial):
            return False
        self.starting = False
        self.requests.clear()
        self.turn_active = False
        return True

    def abandon(self, reason: str) -> None:
        """Nothing of the CLI is waited on any more (the session closed, the history broke):
        every send is answered with ``reason``, no request is pending, no turn runs. The
        process, if any, is left to the caller to stop."""
        self.sends.fail_all(reason)
        self.requests.clear()
        self.turn_active = False

    def end_for_fault(self, reason: str) -> None:
        """The CLI cannot go on (never ready, stopped reading, broke its protocol): its turn is
        over, every send is answered with ``reason`` and the process is ended; its requests
        stay listed until its exit, which follows."""
        self.turn_active = False
        self.sends.fail_all(reason)
        self.terminate()

    def terminate(self) -> None:
        """Ends the process at once, with no stop frames (its exit follows)."""
        self.processes.terminate()

    def forget_conversation(self) -> None:
        """The next CLI starts a new conversation instead of resuming this one (a clear)."""
        self.native_id = None
        self.resume_at = None  # a rewind's anchor belongs to the conversation forgotten

    def rewind(self, anchor) -> None:
        """Takes the CLI's conversation back to ``anchor`` (actors/harness/rewind.py ``Anchor``),
        the files aside; the owner hears what became of it (``link_rewound``), now or when the
        CLI answers. Codex reverts its live thread (``thread/revert``; a CLI is started on the
        conversation when none runs). Claude Code cannot rewind a running process: it is
        retired, and the next start resumes at the anchor (``--resume-session-at``); a rewind of
        the first turn starts a new conversation instead. Refused while a turn runs."""
        if self.turn_active:
            self._owner.link_rewound(False, "a turn is running: stop it before rewinding the conversation")
            return
        self._log("session.rewind", native=self.native_id, at=anchor.before_turn or anchor.resume_at,
                  fresh=True if anchor.fresh else None)
        if anchor.before_turn is not None:
            if not self.running:
                self.start()  # resumes the thread; the revert waits for it (the driver holds it)
            frames = self.driver.rewind_frames(anchor.before_turn)
            if frames is None:
                self._owner.link_rewound(False, f"{self.harness.LABEL} cannot rewind its conversation")
                return
            self.write(frames)
            return
        if self.running:
            self.retire("not delivered: the conversation was rewound")
        if anchor.fresh:
            self.resume_at = None
            self.forget_conversation()
            self._owner.link_rewound(True, "the next message starts a new conversation")
        else:
            self.resume_at = anchor.resume_at
            self._owner.link_rewound(True, "the next message continues the conversation from before that turn")

    def _anchor_failed(self, reason: str) -> None:
        """The process started at a rewind's anchor failed before it took a message (a stale
        uuid: Claude Code says "No message found with message.uuid of: …" and exits 1). The
        anchor is dropped, so the next start resumes the whole conversation instead of failing
        the same way for ever, and the owner hears the rewind did not hold."""
        self._log("session.rewound", ok=False, error=reason)
        self.resume_at = self._resumed_at = None
        self._owner.link_rewound(False, f"{self.harness.LABEL} could not resume the conversation from before that "
                                        f"turn ({reason}); the next message continues the whole conversation")

    def heard(self) -> None:
        """The current CLI wrote something (the heartbeat measures quiet from here)."""
        self.last_event_at = time.monotonic()

    def shut(self) -> None:
        """The actor stops: every process of the chat is ended (``gone`` is set once they are)."""
        self.processes.shut()

    def write(self, items: list) -> None:
        """Writes a driver's frames to the CLI; effects among them (deadlines) are applied."""
        frames = [item for item in items if isinstance(item, dict)]
        for item in items:
            if not isinstance(item, dict):
                self.apply(item)
        self.processes.write(frames)

    # ---- sending (the queues and acknowledgements are the sends' own) ------------------------

    def send(self, origin, command: Send, prompt: str) -> None:
        """A message for the CLI; the caller has made sure no settings swap waits (the chat's
        swap holds messages until then), so one still owed happens now, before it."""
        self.restart_for_settings()  # the new settings hold from this message's turn
        self.sends.send(origin, command, prompt)

    def refuse_queued(self, reason: str, sockets_only: bool = False) -> None:
        """Answers every queued send (of the sockets only, or of every origin) with an error."""
        self._refuse_held(reason)
        self.sends.refuse_queued(reason, sockets_only)

    def fail_sends(self, reason: str) -> None:
        """Answers every send in flight and every queued one with an error; dispatches nothing."""
        self._refuse_held(f"not sent: {reason}")
        self.sends.fail_all(reason)

    def _refuse_held(self, reason: str) -> None:
        held, self._held = self._held, []
        for origin, command, _prompt in held:
            self._owner.link_result(origin, command.command_id, None, reason)

    def forget_origin(self, origin) -> None:
        self.sends.forget_origin(origin)

    def _deliver(self, origin, command: Send, prompt: str, message_id: str, queued_at: float | None) -> None:
        """Writes a send whose turn came (the sends' ``deliver``), starting the CLI if none runs."""
        if not self.running:
            self.start()
        model = model_change(command.model, self.model)
        if model is not None:
            # The record shows the choice at once; a refusal by the CLI puts the previous one back.
            self._model_before_change = self.model
            self.model = model or None
        joined = self.turn_active
        if not joined:
            self._owner.link_turn_opening()  # the checkout's checkpoint, before the CLI has the message
        text = compose_message(command.text, prompt)
        self.write(self.driver.message_frames(message_id, text, list(command.images), model,
                                              skills=command.skills, mentions=command.mentions))
        self._log("message.sent", command=command.command_id, attachments=len(command.images),
                  outbox=f"{time.monotonic() - queued_at:.2f}s" if queued_at is not None else None,
                  turn=self._chatlog.turn if joined else None, joined=True if joined else None)
        if not self.turn_active:
            self._begin_turn()
        self._owner.link_dispatched(origin, command, joined)

    def _unconfirmed(self, message_id: str) -> None:
        self.driver.stop_waiting_for(message_id)  # no longer counted on to start a turn

    # ---- requests and interrupts ---------------------------------------------------------------

    def interrupt(self) -> bool:
        if not self.running or not (self.turn_active or self.requests):
            return False  # nothing runs: an interrupt has nothing to stop (the CLI would ignore it too)
        self.write(self.driver.interrupt_frames())
        self._log("turn.interrupt", turn=self._chatlog.turn, pending=len(self.requests))
        return True

    def waits_on(self, request_id) -> bool:
        """Whether the CLI waits for an answer to that native request."""
        return self.requests.waits_on(request_id)

    def pending_ids(self) -> list:
        """The native requests waiting for an answer, in the order they came."""
        return self.requests.ids()

    def stop_turn(self) -> bool:
        """Asks a ready CLI to stop its turn; False when none holds one it can stop (still
        starting, or its turn has no id yet)."""
        frames = self.driver.interrupt_frames() if self.running and not self.starting else []
        if frames:
            self.write(frames)
        return bool(frames)

    def stop_task(self, task_id: str, kind: str) -> bool:
        """Asks the CLI to end one background task; False when it cannot (or none runs)."""
        frames = self.driver.stop_task_frames(task_id, kind) if self.running else []
        if frames:
            self.write(frames)
        return bool(frames)

    def compact(self) -> None:
        """Asks the CLI to fold its context natively (Codex), starting it when none runs."""
        if not self.running:
            self.start()
        self.write(self.driver.compact_frames())

    def respond(self, request_id, result: dict) -> None:
        """Answers a native request (ValueError: the driver refuses the answer; nothing sent)."""
        frames = self.driver.respond_frames(request_id, result, self.requests.kind_of(request_id))
        self.requests.answered(request_id, delivered=self.running)
        self.write(frames)

    def _deadline_passed(self, process_serial: int, request_id) -> None:
        if process_serial == self.process_serial and self.driver is not None:
            self.expire(request_id)
            self._owner.link_changed()

    def expire(self, request_id) -> None:
        self.requests.expired(request_id)
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
            if self._resumed_at is not None and effect.delivery in ("queued", "started"):
                # The CLI took a message on the rewound branch: from now on it is the transcript's
                # latest, and a plain --resume follows it.
                self.resume_at = self._resumed_at = None
            self.sends.delivered(effect.message_id, effect.delivery, effect.error)
            return False
        if isinstance(effect, fx.Earlier):
            self._owner.link_earlier(list(effect.items))
            return True
        if isinstance(effect, fx.Rewound):
            self._log("session.rewound", ok=effect.ok, error=None if effect.ok else effect.message)
            self._owner.link_rewound(effect.ok, effect.message)
            return False
        if isinstance(effect, fx.MessageSettled):
            self.sends.settled(effect.message_id)
            return False
        if isinstance(effect, fx.TurnStarted):
            self.starting = False
            if not self.turn_active:
                self._begin_turn()
                self._owner.link_turn_started()  # no message of ours started it: the CLI did
            self.cli_turn = effect.cli_turn or self.cli_turn
            return True
        if isinstance(effect, fx.TurnEnded):
            if effect.error and self._resumed_at is not None:
                self._anchor_failed(effect.error)
            self._end_turn(effect)
            self._owner.link_turn_ended(effect)
            return True
        if isinstance(effect, fx.RequestOpened):
            self.requests.opened(effect.request_id, effect.kind, self._chatlog.turn)
            return True
        if isinstance(effect, fx.RequestClosed):
            return self.requests.closed(effect.request_id)
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
            self.retrying = retry_record(effect)
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
        if isinstance(effect, fx.Skills):
            self._owner.link_skills(effect.listed)
            return False
        return False

    def _begin_turn(self) -> None:
        self.turn_active = True
        self.turn_started_at = time.monotonic()
        self._log("turn.start", turn=self._chatlog.next_turn(), model=self.model or "default")

    def _end_turn(self, effect: fx.TurnEnded) -> None:
        outcome = turn_outcome(effect)
        duration = time.monotonic() - (self.turn_started_at or time.monotonic())
        self._log("turn.end", turn=self._chatlog.turn, cli_turn=self.cli_turn, outcome=outcome, took=f"{duration:.1f}s",
                  model=self.model_in_use, error=effect.error)
        self.cli_turn = None
        self.retrying = None
        self.turn_active = bool(self.driver.waiting)  # a queued message starts the next turn
        self.turn_started_at = time.monotonic() if self.turn_active else None

    def quiet_for(self, now: float) -> float:
        return now - (self.last_event_at or self.turn_started_at or now)

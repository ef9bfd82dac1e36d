"""The Chat actor: one conversation, seen by both surfaces, as a small actor over its parts.

Like Mopidy's core actor over its controllers, ``Chat`` owns every object of the conversation
and routes what comes in to the one that owns it; each part owns its state and changes another
part only by calling it (nobody writes another part's fields). Who owns what:

- ``link`` (actors/cli_link.py): the CLI process and its serial, what is written to it and
  decoded from it, the native requests it waits on, the link's turn, messages in flight per
  origin and their acknowledgements (its parts: cli_link_process.py, cli_link_sends.py,
  cli_link_requests.py).
- ``native`` (actors/native_face.py): the Chat API's session: the event history of native
  frames and the sockets reading it.
- ``durable`` (actors/durable_face.py): the chat core's chat: the thread of items and its info
  (changed only through its methods: ``update_info`` and the queue's and items' own), the
  record and log on disk (``durable.record``: durable_record.py), core clients
  (durable_clients.py), bookmarks, visuals and attachments (``durable.kept``: durable_kept.py).
- ``session`` (session.py): whether the session is open, its error, why devhost ends a faulty
  CLI, a broken history, a chat that cannot be saved; settings, close, reopen, clear, kill.
- ``turns`` (turns.py): what the chat core sends: send, queue, steer, stop, the drain after a
  turn, the model chosen for the next message, the note of stopped background work.
- ``take_up`` (take_up.py): taking a turn stopped by a usage limit up again, and its timer.
- ``idle`` (idle.py): letting an idle CLI go after ``[devtools.chat] idle_cli_minutes``, its timer.
- ``requests`` (requests.py): approvals and questions, answered from either surface.
- ``tasks`` (tasks.py): background work (subagents, shells): stopping it, finding its transcript.
- ``keeping`` (keeping.py): bookmarks, visuals, attachments, the agents' token.
- ``checkpoints`` (checkpoints.py): a snapshot of the checkout before every turn, the turn's
  changes after it, taking them back.

This module holds what is the actor's own: its lifecycle, the surfaces' entry points (thin:
each goes to its owner), the CLI's events (``on_cli_*``, told by its CliProcess), what the link
tells (``link_*``: the ``LinkOwner``), the session's record and its publication, the heartbeat.
Timers of the parts come back as ``Call`` messages (actors/tell.py) that run the part's own
bound method here. It never asks another actor.
"""
from __future__ import annotations

import os
import time

import gevent
import pykka

from actors import chatlog
from actors.chat.checkpoints import Checkpoints
from actors.chat.idle import IdleCli
from actors.chat.keeping import Keeping
from actors.chat.requests import Requests
from actors.chat.session import Session
from actors.chat.skills import Skills
from actors.chat.swap import Swap
from actors.chat.take_up import TakeUp
from actors.chat.tasks import Tasks
from actors.chat.turns import Turns
from actors.cli_link import ACK_TIMEOUT, START_DEADLINE, CliLink
from actors.durable_face import DurableFace, provider_of
from actors.errors import ChatError
from actors.guard import guarded
from actors.harness import effects as fx
from actors.harness.mode_names import stored_mode
from actors.messages import Send
from actors.native_face import NativeFace
from actors.status import session_status
from actors.tell import Call, call_later, tell
from storage.accounts import account_env

# A turn quiet this long gets a log line saying what it waits on (a test may make it quick).
HEARTBEAT_SECONDS = float(os.environ.get("DEVHOSTD_HEARTBEAT_SECONDS") or 30.0)


class Chat(pykka.ThreadingActor):
    def __init__(self, *, chat_id: str, harness, cwd: str, command: tuple[str, ...], model: str | None,
                 store, clients, registry=None, session_id: str | None = None, runtime_mode: str = "full-access",
                 stored=None, resuming_on=False, resume: str | None = None, open_session: bool = True,
                 start_cli: bool = False, history=None, ack_timeout: float = ACK_TIMEOUT, imported=None,
                 limit_resume=False, visual_store=None, agent_tokens=None, workdir: str | None = None,
                 start_deadline: float = START_DEADLINE, account: str | None = None, accounts=None,
                 checkpoints_root: str | None = None, idle_cli_minutes=None):
        super().__init__()
        self.chat_id = chat_id
        self.harness = harness
        self.log_subject = f"session {chat_id}"  # a failure of this chat's logged as its own (actors/guard.py)
        self._registry = registry
        self._resuming_on = resuming_on if callable(resuming_on) else (lambda: resuming_on)
        self._start_cli = start_cli
        self._heartbeat = None  # the heartbeat's timer, while a turn runs
        self._beats = 0
        self._last_status = None
        self.log = chatlog.ChatLog(chat_id, harness.HARNESS_ID, cwd)
        # [core] resume_at_reset: a bool or a callable asked at every use (an edited manifest counts).
        takes_limits_up = limit_resume if callable(limit_resume) else (lambda: limit_resume)
        self.durable = DurableFace(chat_id=chat_id, harness=harness, cwd=cwd, model=model, runtime_mode=runtime_mode,
                                   store=store, clients=clients, registry=registry, actor_ref=self.actor_ref,
                                   stored=stored, resume=resume, imported=imported, log=self.log,
                                   on_store_changed=self._store_changed, workdir=workdir,
                                   limit_resume=bool(takes_limits_up()))
        info = self.durable.info
        if not self.durable.fresh:
            info["runtimeMode"] = stored_mode(info)  # a record of before modes were enforced: supervised
        # The manifest's account the chat runs under (None: the CLI's default home); a chat on
        # disk keeps its own. ``accounts``: the manifest's, as it is now (it is re-read).
        info["account"] = account if self.durable.fresh else info.get("account")
        self.accounts = accounts or (lambda: {})
        provider = provider_of(harness)
        self.native = NativeFace(session_id or chat_id, history)
        self.link = CliLink(chat_id=chat_id, harness=harness, root=info["cwd"], workdir=info.get("workdir"),
                            command=command,
                            model=(info.get("selection") or {}).get("model"), native_id=info.get("agentSessionId"),
                            actor_ref=self.actor_ref, owner=self, ack_timeout=ack_timeout, log=self.log,
                            agent_token=(lambda: agent_tokens.token_for(chat_id)) if agent_tokens else None,
                            start_deadline=start_deadline, runtime_mode=info.get("runtimeMode", "full-access"),
                            plan=info.get("permissionMode") == "plan",
                            account=info["account"],
                            account_env=lambda name: account_env(self.accounts(), provider, name))
        # Said with the info's next announcement (a chat's first info is its creation's).
        info["effectiveRuntimeMode"] = self.link.effective_mode
        self.take_up = TakeUp(self, takes_limits_up)
        self.session = Session(self, open_session)
        self.turns = Turns(self)
        self.swap = Swap(self)
        self.requests = Requests(self)
        self.tasks = Tasks(self)
        self.keeping = Keeping(self, visual_store, agent_tokens)
        self.skills = Skills(self)
        self.checkpoints = Checkpoints(self, checkpoints_root)
        # [devtools.chat] idle_cli_minutes: a number or a callable asked at every use (None, 0: never).
        self.idle = IdleCli(self, idle_cli_minutes if callable(idle_cli_minutes) else (lambda: idle_cli_minutes))

    # ---- lifecycle -----------------------------------------------------------------------------

    def on_start(self) -> None:
        event = "session.load" if not self.durable.fresh else \
            "session.resume" if self.link.native_id else "session.start"
        self.log(event, project=self.link.root, model=self.link.model or "default", native=self.link.native_id)
        if self.durable.fresh:
            self.durable.write_record()
        else:
            self.turns.settle_after_restart(bool(self._resuming_on()))
        if self._start_cli and not self.link.running:
            self.link.start()  # link_started follows
        self.take_up.arm()  # a take-up owed before a restart keeps its time
        self.durable.clients.tell_registry(self.durable.info)
        self.publish()

    def on_stop(self) -> None:
        self._disarm_heartbeat()
        self.take_up.cancel_timer()
        self.idle.cancel_timer()
        self.checkpoints.stop()
        self.link.fail_sends("the session was removed")
        self.native.close_sockets(1000)  # the daemon is stopping, or the chat was killed
        self.link.shut()
        self.native.close()

    def on_receive(self, message) -> None:
        if isinstance(message, Call):
            self._run(message)

    @guarded
    def _run(self, message: Call) -> None:
        message.function(*message.args)  # a part's timer, back inside the actor

    # ---- the Chat API (a session) --------------------------------------------------------------

    def record(self) -> dict:
        info = self.durable.info
        record = {"id": self.native.session_id, "chatId": self.chat_id, "harness": self.harness.HARNESS_ID,
                  "projectRootPath": self.link.root, "status": self._status(), "model": self.link.model,
                  "title": info.get("suggestedTitle"), "createdAt": info.get("createdAt"),
                  # asked, and what the CLI runs under (narrower where it has no setting as wide)
                  "runtimeMode": self.link.runtime_mode, "effectiveRuntimeMode": self.link.effective_mode,
                  "account": info.get("account")}  # the manifest's name; None: the CLI's default home
        if info.get("permissionMode"):
            record["permissionMode"] = info["permissionMode"]  # "plan" while the agent plans
        if self.link.native_id:
            record["nativeSessionId"] = self.link.native_id
        if info.get("background"):
            record["background"] = len(info["background"])  # subagents and shells still running
        if info.get("limit"):
            record["limit"] = info["limit"]  # the last turn stopped on a usage limit or an overloaded model
        if self.link.retrying and self.link.turn_active:
            # The CLI is retrying a failed model request: a reply under way may come out short.
            record["retrying"] = self.link.retrying
        error = self.durable.record.store_error or self.session.error
        if error and self.session.open:
            record["error"] = error
        return record

    def cli_gone(self) -> gevent.event.Event:
        return self.link.gone

    def attach(self, sink):
        """Registers a socket: (id, record, pending ids, a reader of events 1..now); live ones follow."""
        subscriber, reader = self.native.attach(sink)
        return subscriber, self.record(), self.link.pending_ids(), reader

    @guarded
    def detach(self, subscriber: int) -> None:
        self.native.detach(subscriber)
        self.link.forget_origin(subscriber)
        self.release_if_idle()
        self.idle.review()  # the last socket streaming the CLI's events went: the CLI may go idle

    def release_if_idle(self) -> None:
        """A conversation no CLI writes and no chat socket reads holds no file: its native
        history is released (its items stay; the next events go on numbering after it)."""
        if not self.link.running and not self.native.reads_native():
            self.native.release()

    def thread_attach(self, sink, since: int | None = None, history_limit: int | None = None) -> dict:
        """Registers a thread socket (the panel's): the session's record and the chat's items
        (a snapshot, its newest ``history_limit`` items when given, or the events after
        ``since`` while the log still has them all); live item
        events, states, its own sends' results and notices follow. Its subscriber id is an
        origin of sends like a chat socket's."""
        subscriber = self.native.attach_item_reader(sink)
        answer = self.durable.attach(sink, since, history_limit)
        answer["reader"] = answer.pop("subscriber")
        return {**answer, "subscriber": subscriber, "session": self.record()}

    @guarded
    def thread_detach(self, subscriber: int, reader: int) -> None:
        self.durable.detach(reader)
        self.detach(subscriber)

    @guarded
    def send(self, subscriber: int, command: Send, prompt: str) -> None:
        refusal = self.session.refuses_sends()
        if refusal is not None:
            self.native.answer(subscriber, command.command_id, error=refusal)
            return
        if command.mentions or command.skills:  # a page's @-mentions and skill: checked before anything goes out
            try:
                command = self.turns.page_references(command)
            except ChatError as exc:
                self.native.answer(subscriber, command.command_id, error=str(exc))
                return
        self.native.watched(subscriber)
        if self.swap.waits():  # never to the old process: it may allow more than the person does now
            self.link.hold(subscriber, command, self.turns.telling_what_stopped(command.text, prompt))
            self.swap.held()
            self.publish()
            return
        self.link.send(subscriber, command, self.turns.telling_what_stopped(command.text, prompt))

    @guarded
    def interrupt(self, subscriber: int) -> None:
        # A page's interrupt cancels what pages queued, not what the chat core queued.
        self.link.refuse_queued("not sent: an interrupt cancelled queued input", sockets_only=True)
        if self.session.open:
            self.link.interrupt()

    @guarded
    def respond(self, subscriber: int, request_id, result: dict) -> None:
        self.requests.respond(subscriber, request_id, result)

    def close(self, code: int = 1000) -> dict:
        """Closes the session (1000: on request, 1001: the daemon stops) and ends its CLI."""
        return self.session.close(code)

    def reopen(self, session_id: str) -> dict:
        return self.session.reopen(session_id)

    def rename(self, title: str) -> dict:
        """The person's own name for the conversation (a checked title: web/routes/conversations.py)
        replaces the one its first message gave; kept in the info, so it lasts."""
        self.durable.update_info(suggestedTitle=title)
        self.publish()
        return self.record()

    # ---- the chat core (a chat): each call goes to the part that owns it -------------------------

    def info(self) -> dict:
        return self.durable.info

    def core_attach(self, sink, since: int | None = None, history_limit: int | None = None) -> dict:
        self.take_up.on()  # the answer's info says what the manifest says now
        return self.durable.attach(sink, since, history_limit)

    def core_detach(self, subscriber: int) -> None:
        self.durable.detach(subscriber)

    def history(self, cursor: str | None = None, limit: int = 60) -> dict:
        return self.durable.history(cursor, limit)

    def configure(self, model: str | None = None, runtime_mode: str | None = None,
                  resume_at_reset: bool | None = None, restart_words: dict | None = None,
                  plan: bool | None = None, account=...) -> dict:
        """``account``: a manifest name, None for the default account, ``...`` to keep it."""
        info = self.session.configure(model, runtime_mode, resume_at_reset, restart_words, plan, account)
        self.idle.review()  # a take-up given up, or a swap asked, changes what keeps the CLI
        return info

    def core_send(self, text: str, delivery: str | None = None, uploads: list | None = None,
                  references: dict | None = None) -> dict:
        return self.turns.core_send(text, delivery, uploads, references)

    def skills_listed(self):
        """An AsyncResult of the folder's skills (the CLI's word, or the disk's)."""
        return self.skills.listed()

    def unqueue(self, message_id: str) -> dict:
        return self.turns.unqueue(message_id)

    def send_now(self, message_id: str) -> dict:
        return self.turns.send_now(message_id)

    def cancel(self, subagents: bool = False) -> dict:
        self.turns.cancel()
        if subagents:
            self.tasks.stop_subagents()
        return {}

    def approve(self, request_id, decision: str, message: str | None = None, runtime_mode: str | None = None) -> dict:
        return self.requests.approve(request_id, decision, message, runtime_mode)

    def answer(self, request_id, answers: dict) -> dict:
        return self.requests.answer(request_id, answers)

    def dismiss(self, item_id: str) -> dict:
        return self.requests.dismiss(item_id)

    def stop_task(self, task_id: str) -> dict:
        return self.tasks.stop_task(task_id)

    def stop_subagent(self, subagent_id: str) -> dict:
        return self.tasks.stop_subagent(subagent_id)

    def subagent_source(self, subagent_id: str) -> dict:
        return self.tasks.subagent_source(subagent_id)

    def subagent_watch(self, subagent_id: str, told) -> dict:
        """The agent's source; ``told()`` (never blocking) each time the CLI says it did something."""
        return self.tasks.watch(subagent_id, told)

    @guarded
    def subagent_unwatch(self, subagent_id: str, told) -> None:
        self.tasks.unwatch(subagent_id, told)

    def attachment(self, attachment_id: str) -> dict:
        return self.keeping.attachment(attachment_id)

    @guarded
    def visuals_changed(self, listed: list) -> None:
        self.keeping.visuals_changed(listed)

    def add_bookmark(self, item_id: str, name: str | None = None) -> dict:
        return self.keeping.add_bookmark(item_id, name)

    def rename_bookmark(self, item_id: str, name: str) -> dict:
        return self.keeping.rename_bookmark(item_id, name)

    def remove_bookmark(self, item_id: str) -> dict:
        return self.keeping.remove_bookmark(item_id)

    def changes(self, turn_id: str) -> dict:
        return self.checkpoints.changes(turn_id)

    def revert(self, turn_id: str, paths=None, hunks=None, force: bool = False) -> dict:
        return self.checkpoints.revert(turn_id, paths, hunks, force)

    def rewind(self, turn_id: str, force: bool = False) -> dict:
        return self.session.rewind(turn_id, force)

    def clear(self, force: bool = False) -> dict:
        return self.session.clear(force)

    def compact(self) -> dict:
        return self.turns.compact()

    def kill(self) -> dict:
        return self.session.kill()

    def freeze(self) -> None:
        """Shutdown: the running turn stays running in the record, so the next start can tell."""
        self.durable.freeze()

    def _store_changed(self) -> None:
        self.session.store_changed()

    # ---- what the link tells (LinkOwner) -------------------------------------------------------

    def link_started(self) -> None:
        self.session.cli_started()
        self.durable.new_process(self.link.driver.projection)  # its reported cost starts from what the chat cost so far
        # info.running: whether a process lives; and the mode it runs under
        self.durable.update_info(running=True, effectiveRuntimeMode=self.link.effective_mode)

    def mode_now(self) -> None:
        """info.effectiveRuntimeMode: the mode the CLI runs under now, beside the one asked for."""
        if not self.durable.record.frozen and self.durable.info.get("effectiveRuntimeMode") != self.link.effective_mode:
            self.durable.update_info(effectiveRuntimeMode=self.link.effective_mode)
            self.publish()  # the session's record says it too

    def link_turn_opening(self) -> None:
        self.checkpoints.turn_opening()

    def link_dispatched(self, origin, command: Send, joined: bool) -> None:
        self.mode_now()  # a mode that waited for the next turn goes with this message
        self.session.went_on()
        self.turns.dispatched(origin, command)
        self.checkpoints.turn_opened()
        self._arm_heartbeat()
        self.publish()

    def link_turn_started(self) -> None:
        self.turns.cli_turn_started()
        self._arm_heartbeat()
        self.publish()

    def link_result(self, origin, command_id: str, delivery: str | None, error: str | None) -> None:
        self.turns.result(origin, command_id, delivery, error)

    def link_evidence(self, message_id: str, delivery: str) -> None:
        self.turns.evidence(message_id, delivery)

    def link_not_sent(self, origin, command_id: str, reason: str) -> None:
        self.turns.not_sent(origin, command_id, reason)

    def link_turn_ended(self, effect: fx.TurnEnded) -> None:
        if effect.error:
            self.session.failed(effect.error)
        self.turns.turn_ended(effect)
        if not self.link.turn_active:
            self._disarm_heartbeat()  # (a queued message's turn goes on: its heartbeat too)

    def link_facts(self, facts: dict) -> None:
        """What the CLI reported of its session goes into the info, as reported; an ACP agent's
        abilities are the registry's to keep too (measured once, for every later listing)."""
        if not self.durable.record.frozen:
            self.durable.report(facts)
        if "abilities" in facts and self._registry is not None:
            tell(self._registry, "agent_measured", self.harness.HARNESS_ID, facts["abilities"])

    def link_skills(self, listed: tuple | None) -> None:
        self.skills.reported(listed)

    def link_plan_usage(self, usage: dict) -> None:
        """How much of the plan's usage window is used (a warning before the wall)."""
        if not self.durable.record.frozen and self.durable.info.get("planUsage") != usage:
            self.durable.update_info(planUsage=usage)

    def link_notice(self, message: str) -> None:
        self.native.tell_everyone(message)

    def link_start_failed(self, message: str) -> None:
        self.log("error", kind="startup", error=message)
        self.session.end_faulty_cli(message)

    def link_earlier(self, items: list) -> None:
        taken = self.durable.earlier(items)
        self.log("session.replayed", items=len(items), taken=taken)

    def link_rewound(self, ok: bool, message: str) -> None:
        self.session.rewound(ok, message)

    def link_changed(self) -> None:
        self.publish()

    def account_picked(self, account: str | None) -> None:
        """A person picked this account: the next new chat of this provider gets it (the registry keeps it)."""
        if self._registry is not None:
            tell(self._registry, "account_picked", provider_of(self.harness), account)

    # ---- events from the CLI (told by CliProcess) ----------------------------------------------

    @guarded
    def on_cli_frames(self, process_serial: int, frames: list) -> None:
        """A batch of ``(frame, raw line)`` from the CLI, in the order it wrote them.

        Frames to keep are staged and stored with one history write; the stage is flushed
        before any effect is applied, so every socket still sees events and the state, acks
        and errors that follow from them in the CLI's order."""
        if not self.link.is_current(process_serial) or self.session.history_broken:
            return
        self.link.heard()
        staged: list[bytes] = []
        for frame, raw in frames:
            keep, found, ops = self.link.driver.read(frame)  # the one reading: effects and items
            if keep:
                staged.append(raw)
            if found:
                if staged and not self.session.store_history(staged):
                    return
                staged = []
            changed = False
            for effect in found:
                changed |= self.link.apply(effect)
            changed |= self.durable.project(ops, found, self.link.native_id)
            self.tasks.heard(ops)  # a watched subagent's transcript is read on the CLI's word
            if changed:
                self.publish()
        if staged:
            self.session.store_history(staged)
        self.checkpoints.background_settled()
        self.idle.review()  # background work may have ended without the record changing

    @guarded
    def on_cli_failed(self, process_serial: int, kind: str, reason: str) -> None:
        """Its CLI process failed while running (a write to it, or a line from it): it is ended."""
        if not self.link.is_current(process_serial):
            return
        self.log("error", kind=kind, error=reason)
        self.session.end_faulty_cli(f"{reason}; devhost ended it")
        self.publish()

    @guarded
    def on_cli_exit(self, process_serial: int, code, stderr_tail: str) -> None:
        if self.link.exited(process_serial):
            self.skills.reported(None)  # a skills.list it never answered: the disk answers now
            self.session.cli_exited(code, stderr_tail)

    # ---- the heartbeat -------------------------------------------------------------------------
    # A timer, armed while a turn runs (at its start: ours or the CLI's own) and let go at its
    # end: a loaded chat with no turn running never wakes for it. A turn that ends some other
    # way (its CLI exited or was retired) leaves the timer one more look, which lets it go.

    def heartbeat_armed(self) -> bool:
        """Whether the heartbeat's timer is set (it is while a turn runs)."""
        return self._heartbeat is not None

    def _arm_heartbeat(self) -> None:
        if self._heartbeat is None:
            self._beats += 1  # a look a timer let go (or replaced) sent already is not this timer's
            self._heartbeat = call_later(HEARTBEAT_SECONDS, self.actor_ref, self._check_heartbeat, self._beats)

    def _disarm_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.kill(block=False)
            self._heartbeat = None

    def _check_heartbeat(self, beat: int) -> None:
        """Logs a turn that has been quiet for HEARTBEAT_SECONDS (what it waits on), and looks
        again HEARTBEAT_SECONDS later while the turn runs."""
        if beat != self._beats or self._heartbeat is None:
            return  # let go, or replaced, after this timer fired
        self._heartbeat = None
        if not self.link.turn_active:
            return
        self._arm_heartbeat()
        now = time.monotonic()
        quiet = self.link.quiet_for(now)
        if quiet >= HEARTBEAT_SECONDS:
            self.log("turn.heartbeat", turn=self.log.turn, elapsed=f"{now - (self.link.turn_started_at or now):.0f}s",
                     quiet=f"{quiet:.0f}s", tools=",".join(self.durable.running_tools()) or None,
                     pending=",".join(map(str, self.link.pending_ids())) or None)

    # ---- state ---------------------------------------------------------------------------------

    def _status(self) -> str:
        return session_status(closed=not self.session.open, starting=self.link.starting,
                              turn_active=self.link.turn_active, pending_requests=len(self.link.pending_ids()),
                              error=self.durable.record.store_error or self.session.error)

    def publish(self) -> None:
        """The session's record (and pending requests) to its sockets and the registry."""
        self.swap.settle()  # what waited for a settings swap goes once nothing is in its way
        record = self.record()
        self.native.publish(record, self.link.pending_ids())
        if self._registry is not None:
            tell(self._registry, "on_record", self.chat_id, record)  # the registry lists without asking chats
        if record["status"] != self._last_status:
            self._last_status = record["status"]
            self.log("session.status", status=record["status"])
        self.idle.review()  # the idle timer armed once nothing goes on, cancelled when anything does

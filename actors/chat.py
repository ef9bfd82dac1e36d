"""The Chat actor: one devhost chat session.

It owns the session's record and status, its native event history, the sockets attached to
it (``subscribers``), the delivery acknowledgements of sends, the pending approvals and
questions, and the CLI process it drives. Commands come down as tells from the web layer;
CLI frames come up as tells from its CliProcess. It never asks another actor.

Subscribers are sinks owned by the web layer; ``push`` and ``close`` never block (a sink whose
client is too slow disconnects it, and the page reconnects to a snapshot).
"""
from __future__ import annotations

import itertools
import os
import json
import time
import uuid
from collections import deque
from dataclasses import dataclass

import gevent
import gevent.event
import pykka

from actors import chatlog, proctree
from actors.cli_process import CliProcess
from actors.guard import guarded, spawn_later_logged, spawn_logged
from actors.harness import effects as fx
from actors.tell import tell
from actors.session_rules import compose_message, exit_reason, session_status
from storage.history import EventHistory, HistoryWriteError
from web.commands import Send, is_lowercase_uuid

ACK_TIMEOUT = 15.0  # seconds without evidence before a send reads "unconfirmed"
HEARTBEAT_SECONDS = 30.0  # a turn quiet this long gets a log line saying what it waits on


@dataclass
class _InFlight:
    subscriber: int
    command_id: str
    sent_at: float
    timer: object = None


class Chat(pykka.ThreadingActor):
    # A devhost session starts its CLI when it is created; a core chat on its first message.
    start_cli_at_once = True

    def __init__(self, *, session_id: str, harness, root: str, command: tuple[str, ...], model: str | None,
                 resume_id: str | None, host=None, history: EventHistory | None = None,
                 ack_timeout: float = ACK_TIMEOUT):
        super().__init__()
        self._id = session_id
        self._harness = harness
        self._root = root
        self._command = command
        self._model = model  # what devhost asked for; None = the CLI's configured default
        self._host = host
        self._history = history or EventHistory()
        self._ack_timeout = ack_timeout
        self._native_id = resume_id
        self._resuming = resume_id is not None
        self._model_in_use = None
        self._driver = None
        self._cli = None
        self._cli_ref = None
        self._generation = 0
        self._starting = False
        self._turn_active = False
        self._turn_started_at = None
        self._error = None
        self._closed = False
        self._history_broken = False
        self._pending: dict = {}  # native request id -> kind, in arrival order
        self._subscribers: dict[int, object] = {}
        self._subscriber_ids = itertools.count(1)
        self._outbox: dict[int, deque] = {}  # per socket: sends waiting for the previous ack
        self._in_flight: dict[str, _InFlight] = {}  # native message id -> send awaiting its ack
        self._used_command_ids: set[str] = set()
        self._live_clis = 0
        self._cli_gone = gevent.event.Event()
        self._cli_gone.set()
        self._last_status = None
        self._last_event_at = None
        self._model_before_change = model
        self._heartbeat = None

    # ---- lifecycle -------------------------------------------------------------------------

    def on_start(self) -> None:
        self._heartbeat = spawn_logged(self._beat, self.actor_ref)
        chatlog.log(self._id, self._harness.HARNESS_ID, "session.resume" if self._resuming else "session.start",
                    project=self._root, model=self._model or "default", native=self._native_id)
        if self.start_cli_at_once:
            self._start_cli()
        self._publish_state()

    def on_stop(self) -> None:
        self._heartbeat.kill(block=False)
        self._fail_sends("the session was removed")
        self._close_sockets(1000)  # replaced by a resumed session, or the daemon is stopping
        if self._cli is not None:
            self._cli_ref.stop(block=False)  # CliProcess.on_stop ends the process tree
        self._history.close()

    def _start_cli(self) -> None:
        self._generation += 1
        resume_id = self._native_id
        if resume_id and self._harness.find_conversation_cwd(resume_id, os.environ) is None:
            # The CLI died before it saved anything: there is nothing to resume, so the message
            # starts a new conversation rather than fail on a resume the CLI would refuse.
            chatlog.log(self._id, self._harness.HARNESS_ID, "session.restart", native=resume_id,
                        note="conversation was never saved; starting a new one")
            self._tell_everyone(f"{self._harness.LABEL} had not saved the conversation before it stopped; "
                                "a new conversation was started and your message goes there")
            resume_id = None
        argv = self._harness.command_line(self._command, model=self._model, resume_id=resume_id)
        self._driver = self._harness.Driver(cwd=self._root, model=self._model, resume_id=resume_id)
        self._starting = True
        self._live_clis += 1
        self._cli_gone.clear()
        self._cli_ref = CliProcess.start(self.actor_ref, self._generation, argv, self._root,
                                         proctree.make_tag(self._id), self._harness.LABEL)
        self._cli = self._cli_ref.proxy()
        self._write(self._driver.start_frames())

    # ---- queries (asked by the web layer and the host) -------------------------------------

    def record(self) -> dict:
        record = {
            "id": self._id,
            "harness": self._harness.HARNESS_ID,
            "projectRootPath": self._root,
            "status": self._status(),
            "model": self._model,
        }
        if self._native_id:
            record["nativeSessionId"] = self._native_id
        if self._error and not self._closed:
            record["error"] = self._error
        return record

    def cli_gone(self) -> gevent.event.Event:
        return self._cli_gone

    def attach(self, sink):
        """Registers a socket: (id, record, pending ids, a reader of events 1..now); live ones follow.

        The reader has a file descriptor of its own, so the snapshot stays readable even if the
        session is removed while it streams.
        """
        subscriber = next(self._subscriber_ids)
        self._subscribers[subscriber] = sink
        return subscriber, self.record(), list(self._pending), self._history.reader()

    @guarded
    def detach(self, subscriber: int) -> None:
        self._subscribers.pop(subscriber, None)

    # ---- commands (told by the web layer) --------------------------------------------------

    @guarded
    def send(self, subscriber: int, command: Send, prompt: str) -> None:
        if self._closed:
            self._answer(subscriber, command.command_id, error="this session is closed; resume it to continue")
            return
        queue = self._outbox.setdefault(subscriber, deque())
        if queue or self._sub_has_in_flight(subscriber):
            queue.append((command, prompt))  # sends from one socket are delivered in order
            return
        self._dispatch(subscriber, command, prompt)

    def _sub_has_in_flight(self, subscriber: int) -> bool:
        return any(entry.subscriber == subscriber for entry in self._in_flight.values())

    def _dispatch(self, subscriber: int, command: Send, prompt: str) -> None:
        if self._closed:
            self._answer(subscriber, command.command_id, error="this session is closed; resume it to continue")
            return
        message_id = command.command_id if is_lowercase_uuid(command.command_id) else str(uuid.uuid4())
        if command.command_id in self._used_command_ids:
            # The CLI silently drops a repeated message id; a resend is the person's call, with a new id.
            self._answer(subscriber, command.command_id,
                         error="this commandId was already sent in this session; devhost never resends a "
                               "message: check the conversation, then send again with a new commandId")
            self._next_send(subscriber)
            return
        if self._history_broken:
            self._answer(subscriber, command.command_id, error=self._error)
            self._next_send(subscriber)
            return
        self._used_command_ids.add(command.command_id)
        if self._cli is None:
            self._start_cli()
        model = command.model if command.model is not None and command.model != (self._model or "") else None
        if model is not None:
            # The record shows the choice at once; a refusal by the CLI puts the previous one back.
            self._model_before_change = self._model
            self._model = model or None
        joined = self._turn_active
        text = compose_message(command.text, prompt)
        entry = _InFlight(subscriber, command.command_id, time.monotonic())
        entry.timer = spawn_later_logged(self._ack_timeout, tell, self.actor_ref, "on_ack_timeout", message_id)
        self._in_flight[message_id] = entry
        self._write(self._driver.message_frames(message_id, text, list(command.images), model))
        chatlog.log(self._id, self._harness.HARNESS_ID, "message.sent", command=command.command_id,
                    attachments=len(command.images), joined="turn" if joined else None)
        if not self._turn_active:
            self._begin_turn()
        self._error = None
        self._publish_state()

    @guarded
    def interrupt(self, subscriber: int) -> None:
        self._refuse_queued_sends("not sent: an interrupt cancelled queued input")
        if self._closed or self._cli is None or not (self._turn_active or self._pending):
            return  # nothing runs: an interrupt has nothing to stop (the CLI would ignore it too)
        self._write(self._driver.interrupt_frames())
        chatlog.log(self._id, self._harness.HARNESS_ID, "turn.interrupt", pending=len(self._pending))

    @guarded
    def respond(self, subscriber: int, request_id, result: dict) -> None:
        if self._closed or self._cli is None or request_id not in self._pending:
            self._tell_error(subscriber, f"request {request_id!r} is not pending: it was answered or cancelled "
                                         f"already; pendingRequestIds lists what still needs an answer")
            return
        try:
            frames = self._driver.respond_frames(request_id, result, self._pending[request_id])
        except ValueError as exc:
            self._tell_error(subscriber, f"respond refused: {exc}")
            return
        kind = self._pending.pop(request_id)
        self._write(frames)
        chatlog.log(self._id, self._harness.HARNESS_ID, "request.answered", request=request_id, kind=kind)
        self._publish_state()

    def close(self, code: int = 1000) -> dict:
        """Closes the session (1000: on request, 1001: the daemon stops) and ends its CLI."""
        if not self._closed:
            self._closed = True
            self._fail_sends("the session was closed before the CLI took the message")
            self._pending.clear()
            self._turn_active = False
            chatlog.log(self._id, self._harness.HARNESS_ID, "session.close", native=self._native_id)
            self._publish_state()
            if self._cli is not None:
                self._write(self._driver.stop_frames())
                self._cli.terminate()
        # Sockets that attached to the closed session (to read its history) close too.
        self._close_sockets(code)
        return self.record()

    # ---- events from the CLI (told by CliProcess) ------------------------------------------

    @guarded
    def on_cli_frames(self, generation: int, frames: list) -> None:
        """A batch of ``(frame, raw line)`` from the CLI, in the order it wrote them.

        Frames to keep are staged and stored with one history write; the stage is flushed
        before any effect is applied, so every socket still sees events and the state, acks
        and errors that follow from them in the CLI's order.
        """
        if generation != self._generation or self._history_broken:
            return
        self._last_event_at = time.monotonic()
        staged: list[bytes] = []
        for frame, raw in frames:
            keep, found = self._driver.decode(frame)
            if keep:
                staged.append(raw)
            if found:
                if staged and not self._store_events(staged):
                    return
                staged = []
            changed = False
            for effect in found:
                changed |= self._apply(effect)
            self._after_frame(frame)
            if changed:
                self._publish_state()
        if staged:
            self._store_events(staged)

    def _store_events(self, raws: list[bytes]) -> bool:
        """Appends events to the history (one write) and pushes them to every socket."""
        try:
            first = self._history.append_many(raws)
        except HistoryWriteError as exc:
            self._history_failed(exc)
            return False
        events = [b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw)
                  for sequence, raw in enumerate(raws, first)]
        for sink in list(self._subscribers.values()):
            sink.push_many(events)
        return True

    # Hooks for the chat core (actors/core_chat.py); a plain devhost session needs none.
    def _after_frame(self, frame: dict) -> None:
        pass

    def _after_turn(self, effect: fx.TurnEnded) -> None:
        pass

    def _after_exit(self, reason: str, was_busy: bool) -> None:
        pass

    def _after_evidence(self, message_id: str, delivery: str) -> None:
        pass

    def _apply(self, effect) -> bool:
        if isinstance(effect, fx.Ready):
            self._starting = False
            return True
        if isinstance(effect, fx.NativeSession):
            if effect.session_id != self._native_id:
                self._native_id = effect.session_id
                chatlog.log(self._id, self._harness.HARNESS_ID, "session.native", native=self._native_id)
                return True
            return False
        if isinstance(effect, fx.Delivery):
            self._after_evidence(effect.message_id, effect.delivery)
            if effect.message_id in self._in_flight:
                self._ack(effect.message_id, None if effect.delivery == "error" else effect.delivery, effect.error)
            return False
        if isinstance(effect, fx.MessageSettled):
            self._after_evidence(effect.message_id, "settled")
            if effect.message_id in self._in_flight:
                self._ack(effect.message_id, "queued", None)  # the CLI had it, whatever became of it
            return False
        if isinstance(effect, fx.TurnStarted):
            self._starting = False
            if not self._turn_active:
                self._begin_turn()
            self._error = None
            return True
        if isinstance(effect, fx.TurnEnded):
            self._end_turn(effect)
            return True
        if isinstance(effect, fx.RequestOpened):
            self._pending[effect.request_id] = effect.kind
            chatlog.log(self._id, self._harness.HARNESS_ID, "request.open", request=effect.request_id, kind=effect.kind)
            return True
        if isinstance(effect, fx.RequestClosed):
            if self._pending.pop(effect.request_id, None) is not None:
                chatlog.log(self._id, self._harness.HARNESS_ID, "request.cancelled", request=effect.request_id)
                return True
            return False
        if isinstance(effect, fx.ModelInUse):
            self._model_in_use = effect.model
            return False
        if isinstance(effect, fx.Write):
            self._write(list(effect.frames))
            return False
        if isinstance(effect, fx.Deadline):
            spawn_later_logged(effect.seconds, tell, self.actor_ref, "on_deadline", self._generation,
                               effect.request_id)
            return False
        if isinstance(effect, fx.StartFailed):
            self._start_failed(effect.message)
            return True
        if isinstance(effect, fx.Usage):
            chatlog.log(self._id, self._harness.HARNESS_ID, "turn.usage", **dict(effect.fields))
            return False
        if isinstance(effect, fx.ModelRefused):
            self._model = self._model_before_change
            chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="model", error=effect.message)
            self._tell_everyone(effect.message)
            return True
        if isinstance(effect, fx.ControlFailed):
            self._tell_everyone(effect.message)
            return False
        return False

    def _begin_turn(self) -> None:
        self._turn_active = True
        self._turn_started_at = time.monotonic()
        chatlog.log(self._id, self._harness.HARNESS_ID, "turn.start", model=self._model or "default")

    def _end_turn(self, effect: fx.TurnEnded) -> None:
        outcome = "interrupted" if effect.interrupted else ("failed" if effect.error else "completed")
        duration = time.monotonic() - (self._turn_started_at or time.monotonic())
        chatlog.log(self._id, self._harness.HARNESS_ID, "turn.end", outcome=outcome, seconds=f"{duration:.1f}",
                    model=self._model_in_use, error=effect.error)
        self._turn_active = bool(self._driver.waiting)  # a queued message starts the next turn
        self._turn_started_at = time.monotonic() if self._turn_active else None
        if effect.error:
            self._error = effect.error
        self._after_turn(effect)

    @guarded
    def on_cli_write_failed(self, generation: int, reason: str) -> None:
        if generation != self._generation:
            return
        chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="process", error=reason)
        self._fail_sends(reason)

    @guarded
    def on_cli_exit(self, generation: int, code, stderr_tail: str) -> None:
        self._live_clis -= 1
        if self._live_clis <= 0:
            self._cli_gone.set()  # no process of this chat runs, retired ones included
        if generation != self._generation:
            return
        self._cli = None
        self._starting = False
        if self._closed:
            chatlog.log(self._id, self._harness.HARNESS_ID, "session.ended", code=code)
            return
        reason = exit_reason(self._harness.LABEL, code, stderr_tail)
        chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="process", error=reason)
        was_busy = self._turn_active
        self._pending.clear()
        self._turn_active = False
        self._fail_sends(reason)
        if not self._history_broken:
            self._error = reason  # the next message starts the CLI again on its own conversation
        self._after_exit(reason, was_busy)
        self._publish_state()

    @guarded
    def on_deadline(self, generation: int, request_id) -> None:
        if generation != self._generation or self._driver is None:
            return
        self._write(self._driver.expire(request_id))  # frames to write (an interrupt) and effects
        self._publish_state()

    @guarded
    def on_ack_timeout(self, message_id: str) -> None:
        if message_id in self._in_flight:
            self._driver.waiting.discard(message_id)  # no longer counted on to start a turn
            self._after_evidence(message_id, "unconfirmed")
            self._ack(message_id, "unconfirmed", None)

    @staticmethod
    def _beat(ref) -> None:
        while True:
            gevent.sleep(HEARTBEAT_SECONDS)
            tell(ref, "heartbeat")  # the check runs inside the actor

    @guarded
    def heartbeat(self) -> None:
        """Logs a turn that has been quiet for HEARTBEAT_SECONDS: what it waits on."""
        if not self._turn_active:
            return
        now = time.monotonic()
        quiet = now - (self._last_event_at or self._turn_started_at or now)
        if quiet >= HEARTBEAT_SECONDS:
            chatlog.log(self._id, self._harness.HARNESS_ID, "turn.heartbeat",
                        elapsed=f"{now - (self._turn_started_at or now):.0f}s", quiet=f"{quiet:.0f}s",
                        pending=",".join(map(str, self._pending)) or None)

    # ---- helpers ---------------------------------------------------------------------------

    def _write(self, items: list) -> None:
        """Writes a driver's frames to the CLI; Deadline effects among them are scheduled."""
        frames = [item for item in items if isinstance(item, dict)]
        for item in items:
            if not isinstance(item, dict):
                self._apply(item)
        if frames and self._cli is not None:
            self._cli.write(frames)

    def _start_failed(self, message: str) -> None:
        chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="startup", error=message)
        self._error = message
        self._starting = False
        self._turn_active = False
        self._fail_sends(message)
        if self._cli is not None:
            self._cli.terminate()  # the next message starts the CLI again

    def _history_failed(self, exc: HistoryWriteError) -> None:
        self._history_broken = True
        self._error = f"{exc}; devhost stopped the session's CLI rather than lose events"
        chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="history", error=str(exc))
        self._fail_sends(self._error)
        self._pending.clear()
        self._turn_active = False
        if self._cli is not None:
            self._cli.terminate()
        self._tell_everyone(self._error)
        self._publish_state()

    def _fail_sends(self, reason: str) -> None:
        """Answers every send in flight and every queued one with an error; dispatches nothing."""
        self._refuse_queued_sends(f"not sent: {reason}")
        for message_id in list(self._in_flight):
            self._ack(message_id, None, reason, dispatch_next=False)

    def _refuse_queued_sends(self, reason: str) -> None:
        for subscriber, queue in self._outbox.items():
            while queue:
                command, _ = queue.popleft()
                self._answer(subscriber, command.command_id, error=reason)

    def _close_sockets(self, code: int) -> None:
        for sink in self._subscribers.values():
            sink.close(code)
        self._subscribers.clear()

    def _ack(self, message_id: str, delivery: str | None, error: str | None, dispatch_next: bool = True) -> None:
        entry = self._in_flight.pop(message_id)
        if entry.timer is not None:
            entry.timer.kill(block=False)
        waited = f"{time.monotonic() - entry.sent_at:.2f}"
        chatlog.log(self._id, self._harness.HARNESS_ID, "message.ack", command=entry.command_id,
                    delivery=delivery or "error", seconds=waited, error=error)
        self._answer(entry.subscriber, entry.command_id, delivery=delivery, error=error)
        if dispatch_next:
            self._next_send(entry.subscriber)

    def _next_send(self, subscriber: int) -> None:
        queue = self._outbox.get(subscriber)
        if queue:
            command, prompt = queue.popleft()
            self._dispatch(subscriber, command, prompt)

    def _answer(self, subscriber: int, command_id: str, delivery: str | None = None, error: str | None = None):
        sink = self._subscribers.get(subscriber)
        if sink is None:
            return  # acknowledgements belong to the socket that sent; it is gone
        result = {"type": "command_result", "sessionId": self._id, "commandId": command_id}
        if error is not None:
            result["error"] = error
        else:
            result["delivery"] = delivery
        sink.push(_frame(result))

    def _tell_everyone(self, message: str) -> None:
        for sink in list(self._subscribers.values()):
            sink.push(_frame({"type": "error", "message": message}))

    def _tell_error(self, subscriber: int, message: str) -> None:
        sink = self._subscribers.get(subscriber)
        if sink is not None:
            sink.push(_frame({"type": "error", "message": message}))

    def _status(self) -> str:
        return session_status(closed=self._closed, starting=self._starting, turn_active=self._turn_active,
                              pending_requests=len(self._pending), error=self._error)

    def _publish_state(self) -> None:
        record = self.record()
        frame = _frame({"type": "state", "session": record, "pendingRequestIds": list(self._pending)})
        for sink in list(self._subscribers.values()):
            sink.push(frame)
        if self._host is not None:
            tell(self._host, "on_record", record)  # the host keeps the list without asking chats
        if record["status"] != self._last_status:
            self._last_status = record["status"]
            chatlog.log(self._id, self._harness.HARNESS_ID, "session.status", status=record["status"])


def _frame(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()

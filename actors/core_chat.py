"""The CoreChat actor: a Chat (same CLI handling, same native history) with the chat core on top.

It keeps the thread of items built from the CLI's native frames, the queue, the approvals and
questions, and writes all of it to disk: every event goes to the chat's log before any client
sees it, and the record is rewritten when the log grows, at a clear, and at shutdown. Core
clients are sinks like the chat sockets' (``push`` never blocks).
"""
from __future__ import annotations

import copy
import json

import gevent
import time
import uuid

from actors import chatlog
from actors.chat import Chat
from actors.core import queue as q
from actors.core.deltas import DeltaJoiner
from actors.core.history import page
from actors.core.projector import PROJECTORS
from storage.chat_store import read_log
from actors.core.status import status_signature
from actors.core.thread import Thread, host_id, new_info
from actors.guard import guarded, spawn_later_logged
from actors.tell import tell
from actors.harness import effects as fx
from storage.chat_store import FOLD_LOG_BYTES
from web.commands import Send

DELTA_TICK = 0.016  # deltas to one item within this are joined into one event


class CoreChat(Chat):
    start_cli_at_once = False  # creating a chat starts nothing; the first message starts the CLI

    def __init__(self, *, chat_id: str, harness, cwd: str, command: tuple[str, ...], model: str | None,
                 runtime_mode: str, store, clients, registry=None, stored=None, resuming_on: bool = False,
                 resume: str | None = None):
        super().__init__(session_id=chat_id, harness=harness, root=cwd, command=command, model=model,
                         resume_id=None)
        self._store = store
        self._clients = clients  # every connected core client: chat.status goes to all of them
        self._registry = registry  # the CoreHost, told each new info
        self._resuming_on = resuming_on
        self._attached: dict[int, object] = {}
        self._joiner = DeltaJoiner()
        # The seq of the last clear's reset (kept on disk as resetSeq): history cursors of before
        # expire, also after a restart.
        self._generation_of_items = 0
        self._flush_timer = None
        self._frozen = False
        self._last_signature = None
        self._projector = None
        self._pending_turn_id = None  # the core turn the next CLI turn belongs to
        self._pending_model = None  # a model chat.configure chose, for the next message
        self._steers: dict[str, str] = {}  # native message id of a steer -> its queued message id
        self._advance_after_stop: str | None = None  # sendNow's message, once the stop lands
        self._stop_requested = False
        self._removed = False
        record, log = stored if stored else (None, [])
        if record or log:
            info = (record or {}).get("info") or new_info(chat_id, _provider(harness), cwd, model, runtime_mode)
            self._thread = Thread(info, (record or {}).get("items"))
            self._seq = (record or {}).get("seq", 0)
            self._generation_of_items = (record or {}).get("resetSeq", 0)
            for line in log:
                self._thread.apply(line["event"])
                self._seq = line["seq"]
                if line["event"].get("type") == "reset":
                    self._generation_of_items = line["seq"]
            self._fresh = False
        else:
            self._thread = Thread(new_info(chat_id, _provider(harness), cwd, model, runtime_mode, resume))
            self._seq = 0
            self._fresh = True
        self._native_id = self._thread.info.get("agentSessionId")
        self._model = (self._thread.info.get("selection") or {}).get("model")

    # ---- lifecycle -------------------------------------------------------------------------

    def on_start(self) -> None:
        super().on_start()
        if self._fresh:
            self._write_record()
        else:
            self._recover_interrupted()
        self._tell_registry()

    def _recover_interrupted(self) -> None:
        # No process survived the stop: nothing of before is streaming, running or pending (I4).
        self._emit(self._thread.settle_after_restart())
        turn = self._thread.active_turn()
        if turn is None or turn["state"] != "running":
            return
        resume, reason, attempt = q.resume_decision(turn, self._thread.info.get("agentSessionId"), self._resuming_on)
        if not resume:
            self._emit(self._thread.abort_interrupted(reason))
            self._emit(self._thread.set_info(queuePaused=True))  # a turn abandoned on restart pauses the queue
            chatlog.log(self._id, self._harness.HARNESS_ID, "turn.not-resumed", turn=turn["id"], reason=reason)
        else:
            chatlog.log(self._id, self._harness.HARNESS_ID, "turn.resume", turn=turn["id"], attempt=attempt)
            self._emit(self._thread.upsert({**turn, "attempt": attempt, "resumePending": True}))
            self._emit(self._thread.note("info", "Resumed after a restart", turn_id=turn["id"],
                                         item_id=f"resume-{turn['id']}-{attempt}"))
            self._write_record()  # the attempt is on disk before any process works on it
            self._pending_turn_id = turn["id"]
            self._send_to_cli(q.RESUME_PROMPT)
        self._write_record()

    def _start_cli(self) -> None:
        super()._start_cli()
        self._emit(self._thread.set_info(running=True))  # info.running: whether a process lives
        # Items of this process get ids of a generation of their own: a restarted CLI never
        # overwrites what an earlier one wrote.
        self._projector = PROJECTORS[self._harness.HARNESS_ID](str(int(time.time() * 1000)))

    def freeze(self) -> None:
        """Shutdown: the running turn stays running in the record, so the next start can tell."""
        self._frozen = True
        self._flush_delta()
        self._write_record()

    # ---- requests (asked by the web layer) -------------------------------------------------

    def info(self) -> dict:
        return self._thread.info

    def core_attach(self, sink, since: int | None = None, history_limit: int | None = None) -> dict:
        """Joins the client; it gets the events after ``since`` from the log when the log still has
        them all, else a snapshot (the whole thread, or its newest page)."""
        self._flush_delta()
        subscriber = next(self._subscriber_ids)
        self._attached[subscriber] = sink
        if since is not None and since <= self._seq:
            lines = [line for line in read_log(self._store.log_path(self._id)) if line["seq"] > since]
            if [line["seq"] for line in lines] == list(range(since + 1, self._seq + 1)):
                return {"subscriber": subscriber, "info": self._thread.info, "items": [], "seq": self._seq,
                        "events": [line["event"] for line in lines]}
        answer = {"subscriber": subscriber, "seq": self._seq, **self._thread.snapshot(),
                  "pending": self._thread.pending_requests()}
        if history_limit is not None:
            answer.update(page(answer["items"], self._generation_of_items, None, history_limit))
        return answer

    def core_detach(self, subscriber: int) -> None:
        self._attached.pop(subscriber, None)

    def history(self, cursor: str | None = None, limit: int = 60) -> dict:
        self._flush_delta()
        return page(self._thread.snapshot()["items"], self._generation_of_items, cursor, limit)

    def configure(self, model: str | None = None, runtime_mode: str | None = None) -> dict:
        """New settings apply to the next process; the conversation goes on."""
        if model is not None:
            self._thread.info["selection"] = {**self._thread.info["selection"], "model": model or None}
            self._pending_model = model
        if runtime_mode is not None:
            self._thread.info["runtimeMode"] = runtime_mode
        self._emit(self._thread.refresh_info())
        return self._thread.info

    def core_send(self, text: str, delivery: str | None = None) -> dict:
        info = self._thread.info
        busy = self._thread.busy()
        if delivery == "steer" and busy and not info["queuePaused"] and not text.startswith("/"):
            # Offered to the running turn through the CLI's own input; it waits in the queue
            # (marked) until the CLI shows it took it up, and stays there if it does not (C9).
            message = q.enqueue(info, text)
            message["steering"] = True
            command_id = str(uuid.uuid4())
            self._steers[command_id] = message["id"]
            self._emit(self._thread.refresh_info())
            self.send(0, Send(command_id, text, None), "")
            return {"queued": True, "turnId": info["activeTurnId"]}
        if q.must_queue(info, busy):
            message = q.enqueue(info, text)
            self._emit(self._thread.refresh_info())
            if info["queuePaused"] and not busy:
                self._drain(explicit=True)  # an explicit send resumes the queue, in order (C6)
            elif info["queuePaused"] and self._stop_requested:
                self._advance_after_stop = message["id"]  # a send during a stop goes once it lands
            return {"queued": True, "turnId": message["turnId"]}
        turn_id = host_id("turn")
        self._open_and_send(turn_id, text)
        return {"queued": False, "turnId": turn_id}

    def unqueue(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        message = q.take(self._thread.info, message_id, self._id)
        if self._advance_after_stop == message_id:
            self._advance_after_stop = None
        self._emit(self._thread.refresh_info())
        return {"message": message}

    def send_now(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        q.to_front(self._thread.info, message_id, self._id)
        self._emit(self._thread.refresh_info())
        if self._thread.busy():
            self._advance_after_stop = message_id
            self._stop_turn()
        else:
            self._drain(explicit=True)
        return {}

    def approve(self, request_id, decision: str, message: str | None = None) -> dict:
        item = self._thread.item(f"approval-{request_id}")
        if item is None or item.get("decision") != "pending" or self._native(request_id) not in self._pending:
            raise q.CoreError("request-not-found", f"Nothing waits for approval {request_id}")
        if decision == "allow-always" and not item.get("canAllowAlways"):
            raise q.CoreError("bad-request", "This request offers no rule to always allow; answer allow or deny")
        answer = self._projector.answer_approval(request_id, decision, message)
        self._answer_native(request_id, answer)
        self._emit(self._thread.upsert({**item, "decision": decision}))
        return {}

    def answer(self, request_id, answers: dict) -> dict:
        item = self._thread.item(f"question-{request_id}")
        if item is None or item.get("state") != "pending" or self._native(request_id) not in self._pending:
            raise q.CoreError("request-not-found", f"No question waits under {request_id}")
        native = self._projector.answer_question(request_id, item["questions"], answers)
        self._answer_native(request_id, native)
        self._emit(self._thread.upsert({**item, "state": "answered", "answers": answers}))
        return {}

    def dismiss(self, item_id: str) -> dict:
        item = self._thread.item(item_id)
        if item is None or item["kind"] != "question" or item.get("state") != "pending" or not item.get("async"):
            raise q.CoreError("request-not-found", f"No question to dismiss under {item_id}")
        self._emit(self._thread.upsert({**item, "state": "dismissed"}))
        return {}

    def cancel(self) -> dict:
        self._thread.info["queuePaused"] = True
        self._emit(self._thread.refresh_info())
        if self._thread.busy():
            self._stop_turn()
        return {}

    def _refuse_if_steering(self, message_id: str) -> None:
        if any(m["id"] == message_id and m.get("steering") for m in self._thread.info["queue"]):
            raise q.CoreError("request-not-found", f"Queued message {message_id} is being steered into the turn")

    def _after_evidence(self, message_id: str, delivery: str) -> None:
        """What became of a steered message: taken up -> a user item of the running turn; refused or
        lost -> it stays queued, unmarked, and the queue pauses (never lost, never sent twice)."""
        queued_id = self._steers.get(message_id)
        if queued_id is None:
            return
        queue = self._thread.info["queue"]
        message = next((m for m in queue if m["id"] == queued_id), None)
        if message is None:
            self._steers.pop(message_id, None)
            return
        if delivery == "started":
            self._steers.pop(message_id, None)
            queue.remove(message)
            turn_id = self._thread.info.get("activeTurnId") or message["turnId"]
            self._emit(self._thread.add_user(turn_id, message["text"], f"user-{queued_id}"))
            self._emit(self._thread.refresh_info())
        elif delivery in ("error", "unconfirmed", "settled"):
            self._steers.pop(message_id, None)
            message.pop("steering", None)
            self._thread.info["queuePaused"] = True
            self._emit(self._thread.refresh_info())

    def clear(self, force: bool = False) -> dict:
        if self._thread.busy() and not force:
            raise q.CoreError("chat-busy", f"Chat {self._id} is still working on the previous message")
        self._retire_cli()
        self._native_id = None
        info = self._thread.info
        info.update(agentSessionId=None, running=False, activeTurnId=None, queue=[], queuePaused=False,
                    slashCommands=[], model=None)
        info["usage"]["contextTokens"] = 0
        self._emit(self._thread.reset())
        self._generation_of_items = self._seq
        self._emit(self._thread.refresh_info())
        self._write_record()
        return {}

    def compact(self) -> dict:
        if self._thread.busy():
            raise q.CoreError("chat-busy", f"Chat {self._id} is still working on the previous message")
        if self._harness.HARNESS_ID != "claude-code":
            raise q.CoreError("chat-unsupported", f"{self._harness.LABEL} cannot fold its context from here")
        # Claude Code folds by prompt: /compact runs as a turn of its own.
        turn_id = host_id("turn")
        self._emit(self._thread.open_turn(turn_id))
        self._pending_turn_id = turn_id
        self._send_to_cli("/compact")
        return {}

    def kill(self) -> dict:
        self._removed = True  # from here nothing of this chat reaches the disk again
        self._flush_timer and self._flush_timer.kill(block=False)
        self._attached.clear()
        self.close(1000)
        self._store.remove(self._id)
        return {}

    # ---- the CLI side ----------------------------------------------------------------------

    def _open_and_send(self, turn_id: str, text: str, user_id: str | None = None,
                       queued_id: str | None = None) -> None:
        info = self._thread.info
        info["queuePaused"] = False  # anything dispatching resumes the queue
        self._emit(self._thread.open_turn(turn_id))
        self._emit(self._thread.add_user(turn_id, text, user_id))
        if queued_id is not None:
            info["queue"] = [m for m in info["queue"] if m["id"] != queued_id]
            self._emit(self._thread.refresh_info())
        self._pending_turn_id = turn_id
        self._send_to_cli(text)

    def _send_to_cli(self, text: str) -> None:
        # Through the same path as a devhost send (one process, acknowledgements, history); the
        # core's own queue is the one that matters, so no socket waits on this acknowledgement.
        model, self._pending_model = self._pending_model, None
        self.send(0, Send(str(uuid.uuid4()), text, model), "")

    def _native(self, request_id):
        """The CLI's own id of a request the thread names (Codex's restart from 0 in every process)."""
        return self._projector.native(request_id) if self._projector is not None else None

    def _answer_native(self, request_id, answer: dict) -> None:
        native = self._native(request_id)
        kind = self._pending.pop(native)
        self._write(self._driver.respond_frames(native, answer, kind))
        self._projector.settled(request_id)
        self._publish_state()

    def _stop_turn(self) -> None:
        self._stop_requested = True
        frames = self._driver.interrupt_frames() if self._cli is not None and not self._starting else []
        if not frames:
            # No process holds the turn yet (still starting, or its turn never got an id): the
            # process is ended so nothing of the turn goes on, and the turn ends here (G1).
            self._retire_cli()
            self._finish_turn("aborted")
        else:
            self._write(frames)

    def _retire_cli(self) -> None:
        """Ends the CLI without its exit counting against the chat (clear starts over)."""
        if self._cli is not None:
            self._write(self._driver.stop_frames())
            self._cli.terminate()
        self._generation += 1  # what the retired process still writes is ignored
        self._cli = None
        self._cli_ref = None
        self._starting = False
        self._turn_active = False
        self._pending.clear()
        for entry in self._in_flight.values():
            if entry.timer is not None:
                entry.timer.kill(block=False)
        self._in_flight.clear()
        self._outbox.clear()
        self._steers.clear()
        for message in self._thread.info["queue"]:
            message.pop("steering", None)

    def _after_frame(self, frame: dict) -> None:
        if self._frozen or self._removed or self._projector is None:
            return
        if self._native_id and self._native_id != self._thread.info.get("agentSessionId"):
            self._emit(self._thread.set_info(agentSessionId=self._native_id))
        for op in self._projector.project(frame):
            if op[0] == "upsert":
                self._emit(self._thread.upsert(op[1]))
            elif op[0] == "append":
                _, item_id, text, skeleton = op
                if self._thread.item(item_id) is None and skeleton is not None:
                    self._emit(self._thread.upsert(skeleton))
                self._hold_delta(self._thread.append_text(item_id, text))
            elif op[0] == "resolved":
                for kind in ("approval", "question"):
                    item = self._thread.item(f"{kind}-{op[1]}")
                    field = "decision" if kind == "approval" else "state"
                    if item is not None and item.get(field) == "pending":
                        self._emit(self._thread.upsert({**item, field: "cancelled"}))
        turn = self._thread.active_turn()
        if turn and turn.get("resumePending") and _took_the_prompt(frame):
            self._emit(self._thread.upsert({**turn, "resumePending": False}))  # the resumed CLI has it

    def _after_turn(self, effect: fx.TurnEnded) -> None:
        if self._frozen:
            return
        if self._turn_active and self._thread.busy():
            return  # the CLI goes on with more of the same turn
        state = "aborted" if effect.interrupted else ("error" if effect.error else "done")
        if effect.error:
            self._emit(self._thread.note("error", effect.error))
        self._finish_turn(state)

    def _after_exit(self, reason: str, was_busy: bool) -> None:
        if self._frozen:
            return
        self._emit(self._thread.set_info(running=False))
        if self._thread.busy():
            self._emit(self._thread.note("error", reason))
            self._thread.failed = True
            self._finish_turn("error", process_gone=True)
        elif self._thread.pending_requests():
            self._emit(self._thread.cancel_requests())

    def _finish_turn(self, state: str, process_gone: bool = False) -> None:
        self._emit(self._thread.end_turn(state, process_gone=process_gone))
        if state in ("aborted", "error"):
            self._thread.info["queuePaused"] = True  # a stopped or failed turn pauses the queue (C5)
        self._stop_requested = False
        chosen, self._advance_after_stop = self._advance_after_stop, None
        if chosen is not None and any(m["id"] == chosen for m in self._thread.info["queue"]):
            q.to_front(self._thread.info, chosen, self._id)
            self._drain(explicit=True)
        else:
            self._drain()
        self._emit(self._thread.refresh_info())

    def _drain(self, explicit: bool = False) -> None:
        info = self._thread.info
        message = q.next_to_drain(info, self._thread.busy(), explicit)
        if message is not None:
            # The message is back at the head until its user item is logged: a crash in between
            # leaves it queued, never lost.
            info["queue"].insert(0, message)
            self._open_and_send(message["turnId"], message["text"], user_id=f"user-{message['id']}",
                                queued_id=message["id"])

    # ---- events ----------------------------------------------------------------------------

    def _hold_delta(self, events: list[dict]) -> None:
        for event in events:
            out, started = self._joiner.add(event)
            for ready in out:
                self._log_and_send(ready)
            if started:
                self._flush_timer = spawn_later_logged(DELTA_TICK, tell, self.actor_ref, "flush_delta")

    @guarded
    def flush_delta(self) -> None:
        self._flush_delta()

    def _flush_delta(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.kill(block=False)
            self._flush_timer = None
        for ready in self._joiner.flush():
            self._log_and_send(ready)

    def _emit(self, events: list[dict]) -> None:
        if events:
            self._flush_delta()
        for event in events:
            self._log_and_send(event)

    def _log_and_send(self, event: dict) -> None:
        if self._removed:
            return
        self._seq += 1
        try:
            size = self._store.append(self._id, self._seq, event)
            if size > FOLD_LOG_BYTES:
                self._write_record()
        except OSError as exc:
            chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="store", error=str(exc))
            self._write_record()  # a line that did not reach disk is folded into the record
        frame = json.dumps({"type": "event", "event": "chat.event",
                            "payload": {"chatId": self._id, "event": event, "seq": self._seq}},
                           separators=(",", ":")).encode()
        for sink in list(self._attached.values()):
            sink.push(frame)
        if event["type"] in ("info", "reset"):
            self._tell_registry()  # chat.list answers from the host's copy
        if event["type"] in ("info", "reset") or event.get("item", {}).get("kind") in ("approval", "question"):
            self._status_changed()

    def _status_changed(self) -> None:
        signature = status_signature(self._thread.info)
        if signature != self._last_signature:
            self._last_signature = signature
            self._clients.broadcast(json.dumps({"type": "event", "event": "chat.status",
                                                "payload": {"chatId": self._id, "info": self._thread.info}},
                                               separators=(",", ":")).encode())

    def _tell_registry(self) -> None:
        if self._registry is not None:
            # A copy: the thread goes on changing it.
            tell(self._registry, "on_info", self._id, copy.deepcopy(self._thread.info))

    def _write_record(self) -> None:
        if self._removed:
            return
        for ready in self._joiner.flush():
            self._log_and_send(ready)  # the record must not hold text whose delta is not logged yet
        try:
            # fsync and rename on the hub's threadpool: file work never holds the hub.
            record = {**self._thread.snapshot(), "seq": self._seq, "resetSeq": self._generation_of_items}
            gevent.get_hub().threadpool.apply(self._store.write_record, (self._id, record))
        except OSError as exc:
            chatlog.log(self._id, self._harness.HARNESS_ID, "error", kind="store", error=str(exc))


def _provider(harness) -> str:
    """The core's name of a harness (what chat.create takes): claude, codex."""
    return "claude" if harness.HARNESS_ID == "claude-code" else harness.HARNESS_ID


def _took_the_prompt(frame: dict) -> bool:
    """A frame that shows the CLI received the message devhost wrote last."""
    return (frame.get("type") == "command_lifecycle" and frame.get("state") in ("queued", "started")) \
        or frame.get("method") == "turn/started"

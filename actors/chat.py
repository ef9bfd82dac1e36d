"""The Chat actor: one conversation, seen by both surfaces.

It owns three plain objects and wires them together; it never asks another actor.
- ``link`` (actors/cli_link.py): the CLI process, what is written to it and decoded from it,
  messages in flight per origin and their acknowledgements.
- ``native`` (actors/native_face.py): the Chat API's session: the event history of native
  frames and the sockets reading it.
- ``durable`` (actors/durable_face.py): the chat core's chat: items, queue, record and log on
  disk, core clients.

Commands come down as asks or tells from the web layer; CLI frames come up as tells from its
CliProcess (in batches, ``on_cli_frames``). A message sent from a Chat-API socket also opens
(or joins) a turn of the thread, and an answer given on one surface settles the request on the
other, so a conversation held in the panel is a durable chat, and a core chat is a session.

This module is the conversation's behaviour, both surfaces' requests included; it is over 400
lines because it is the one place where they meet.
"""
from __future__ import annotations

import base64
import os
import time
import uuid

import gevent
import gevent.event
import pykka

from actors import chatlog
from actors.cli_link import ACK_TIMEOUT, CORE, START_DEADLINE, CliLink
from actors.core import attachments as files
from actors.core import background, bookmarks, limits
from actors.core import queue as q
from actors.core.thread import host_id, now_ms
from actors.errors import ChatError
from actors.guard import guarded, on_threadpool, spawn_later_logged, spawn_logged
from actors.harness import effects as fx
from actors.messages import Send
from actors.native_face import NativeFace
from actors.durable_face import DurableFace
from actors.session_rules import exit_reason
from actors.status import session_status
from actors.tell import tell
from storage import write_failure
from storage.history import HistoryWriteError

LIMIT_WAIT = 5.0  # seconds a take-up waits for a turn in its way
# A turn quiet this long gets a log line saying what it waits on (a test may make it quick).
HEARTBEAT_SECONDS = float(os.environ.get("DEVHOSTD_HEARTBEAT_SECONDS") or 30.0)
HISTORY_BROKEN = ("not sent: the session's event history could not be written, so devhost stopped its CLI; "
                  "close the session and resume it")


class Chat(pykka.ThreadingActor):
    def __init__(self, *, chat_id: str, harness, cwd: str, command: tuple[str, ...], model: str | None,
                 store, clients, registry=None, session_id: str | None = None, runtime_mode: str = "full-access",
                 stored=None, resuming_on=False, resume: str | None = None, open_session: bool = True,
                 start_cli: bool = False, history=None, ack_timeout: float = ACK_TIMEOUT, imported=None,
                 limit_resume=False, visual_store=None, agent_tokens=None, workdir: str | None = None,
                 start_deadline: float = START_DEADLINE):
        super().__init__()
        self._id = chat_id
        self._agent_tokens = agent_tokens  # DEVHOSTD_TOKEN of this chat's CLIs (actors/agent_tokens.py)
        self.log_subject = f"session {chat_id}"  # a failure of this chat's logged as its own (actors/guard.py)
        # [core] resume_at_reset (the host takes limited turns up again) and resume_interrupted_turns:
        # each a bool or a callable asked at every use, so an edited manifest counts from then on.
        self._limit_resume = limit_resume if callable(limit_resume) else (lambda: limit_resume)
        self._visual_store = visual_store  # told to take the chat's visuals along on clear and kill
        self._limit_timer = None
        self._harness = harness
        self._registry = registry
        self._resuming_on = resuming_on if callable(resuming_on) else (lambda: resuming_on)
        self.log = chatlog.ChatLog(chat_id, harness.HARNESS_ID, cwd)
        self.durable = DurableFace(chat_id=chat_id, harness=harness, cwd=cwd, model=model, runtime_mode=runtime_mode,
                                   store=store, clients=clients, registry=registry, actor_ref=self.actor_ref,
                                   stored=stored, resume=resume, imported=imported, log=self.log)
        info = self.durable.info
        if workdir and workdir != info["cwd"]:
            info["workdir"] = workdir  # a resumed conversation's own folder in cwd: its CLI runs there
        info["limitResume"] = bool(self._limit_resume())  # whether this host takes limited turns up again (clients ask)
        self.native = NativeFace(session_id or chat_id, history)
        self.link = CliLink(chat_id=chat_id, harness=harness, root=info["cwd"], workdir=info.get("workdir"),
                            command=command,
                            model=(info.get("selection") or {}).get("model"), native_id=info.get("agentSessionId"),
                            actor_ref=self.actor_ref, owner=self, ack_timeout=ack_timeout, log=self.log,
                            agent_token=(lambda: agent_tokens.token_for(chat_id)) if agent_tokens else None,
                            start_deadline=start_deadline)
        self._open = open_session  # a Chat-API session is open (not closed)
        self._start_cli = start_cli
        self._error = None  # the last turn's failure, or why the CLI stopped: the session's error
        self._cli_fault = None  # why devhost is ending the current CLI, when the CLI itself failed
        self._history_broken = False
        self._told_unsaved = False  # the person was told the chat cannot be saved (and not yet that it is)
        self._heartbeat = None
        self._last_status = None
        # The chat core's bookkeeping of what it sent.
        self._pending_model = None  # a model chat.configure chose, for the next message
        self._steers: dict[str, str] = {}  # native message id of a steer -> its queued message id
        self._steer_answers: dict[str, gevent.event.AsyncResult] = {}  # queued id -> what chat.send answers
        self._advance_after_stop: str | None = None  # sendNow's message, once the stop lands
        self._stop_requested = False

    # ---- lifecycle -----------------------------------------------------------------------------

    def on_start(self) -> None:
        self._heartbeat = spawn_logged(self._beat, self.actor_ref)
        event = "session.load" if not self.durable.fresh else \
            "session.resume" if self.link.native_id else "session.start"
        self._log(event, project=self.link.root, model=self.link.model or "default", native=self.link.native_id)
        if self.durable.fresh:
            self.durable.write_record()
        else:
            resumed = self.durable.settle_after_restart(bool(self._resuming_on()))
            if resumed is not None:
                self._send_to_cli(q.resume_words(self.durable.info)[0])
        if self._start_cli and not self.link.running:
            self._start_process()
        self._arm_limit_resume()  # a take-up owed before a restart keeps its time
        self.durable.tell_registry()
        self._publish_state()

    def on_stop(self) -> None:
        self._heartbeat.kill(block=False)
        if self._limit_timer is not None:
            self._limit_timer.kill(block=False)
        self.link.fail_sends("the session was removed")
        self.native.close_sockets(1000)  # the daemon is stopping, or the chat was killed
        self.link.shut()
        self.native.close()

    def _log(self, event: str, **fields) -> None:
        self.log(event, **fields)

    def _start_process(self) -> None:
        self.link.start()  # link_started follows

    # ---- the Chat API (a session) --------------------------------------------------------------

    def record(self) -> dict:
        info = self.durable.info
        record = {"id": self.native.session_id, "chatId": self._id, "harness": self._harness.HARNESS_ID,
                  "projectRootPath": self.link.root, "status": self._status(), "model": self.link.model,
                  "title": info.get("suggestedTitle"), "createdAt": info.get("createdAt")}
        if self.link.native_id:
            record["nativeSessionId"] = self.link.native_id
        if info.get("background"):
            record["background"] = len(info["background"])  # subagents and shells still running
        if info.get("limit"):
            record["limit"] = info["limit"]  # the last turn stopped on a usage limit or an overloaded model
        if self.link.retrying and self.link.turn_active:
            # The CLI is retrying a failed model request: a reply under way may come out short.
            record["retrying"] = self.link.retrying
        error = self.durable.store_error or self._error
        if error and self._open:
            record["error"] = error
        return record

    def cli_gone(self) -> gevent.event.Event:
        return self.link.gone

    def attach(self, sink):
        """Registers a socket: (id, record, pending ids, a reader of events 1..now); live ones follow."""
        subscriber, reader = self.native.attach(sink)
        return subscriber, self.record(), list(self.link.pending), reader

    @guarded
    def detach(self, subscriber: int) -> None:
        self.native.detach(subscriber)
        self.link.forget_origin(subscriber)
        self._release_if_idle()

    def _release_if_idle(self) -> None:
        """A conversation no CLI writes and no chat socket reads holds no file: its native
        history is released (its items stay; the next events go on numbering after it)."""
        if not self.link.running and not self.native.reads_native():
            self.native.release()

    def thread_attach(self, sink, since: int | None = None) -> dict:
        """Registers a thread socket (the panel's): the session's record and the chat's items
        (a snapshot, or the events after ``since`` while the log still has them all); live item
        events, states, its own sends' results and notices follow. Its subscriber id is an
        origin of sends like a chat socket's."""
        subscriber = self.native.attach_item_reader(sink)
        answer = self.durable.attach(sink, since, None)
        answer["reader"] = answer.pop("subscriber")
        return {**answer, "subscriber": subscriber, "session": self.record()}

    @guarded
    def thread_detach(self, subscriber: int, reader: int) -> None:
        self.durable.detach(reader)
        self.detach(subscriber)

    @guarded
    def send(self, subscriber: int, command: Send, prompt: str) -> None:
        if not self._open:
            self.native.answer(subscriber, command.command_id, error="this session is closed; resume it to continue")
            return
        if self._history_broken:
            self.native.answer(subscriber, command.command_id, error=HISTORY_BROKEN)
            return
        if not self._saved_or_saving():
            self.native.answer(subscriber, command.command_id, error=f"not sent: {self.durable.store_error}")
            return
        self.native.watched(subscriber)
        self.link.send(subscriber, command, self._telling_what_stopped(command.text, prompt))

    @guarded
    def interrupt(self, subscriber: int) -> None:
        # A page's interrupt cancels what pages queued, not what the chat core queued.
        self.link.refuse_queued("not sent: an interrupt cancelled queued input", sockets_only=True)
        if self._open:
            self.link.interrupt()

    @guarded
    def respond(self, subscriber: int, request_id, result: dict) -> None:
        if not self._open or not self.link.running or request_id not in self.link.pending:
            self.native.tell(subscriber, f"request {request_id!r} is not pending: it was answered or cancelled "
                                         f"already; pendingRequestIds lists what still needs an answer")
            return
        try:
            self.link.respond(request_id, result)
        except ValueError as exc:
            self.native.tell(subscriber, f"respond refused: {exc}")
            return
        self.durable.answered_natively(request_id, result)
        self._publish_state()

    def close(self, code: int = 1000) -> dict:
        """Closes the session (1000: on request, 1001: the daemon stops) and ends its CLI."""
        if code != 1001:
            # Closed on request: a take-up owed after a usage limit is cancelled, or it would
            # open the session again by itself. The daemon stopping keeps it for the next start.
            self._lapse_limit_resume()
        if self._open:
            self._open = False
            self.link.fail_sends("the session was closed before the CLI took the message")
            self.link.pending.clear()
            self.link.turn_active = False
            self._log("session.close", native=self.link.native_id)
            self._publish_state()
            self.link.stop()
        self.native.close_sockets(code)  # sockets that attached to read a closed session's history too
        return self.record()

    def reopen(self, session_id: str) -> dict:
        """A closed session resumed through the Chat API: a new session id, the same chat (its
        items, its history), the CLI resumed on its own saved conversation."""
        if self._open:
            raise ChatError("conflict", f"that conversation is already open in session {self.native.session_id}; "
                                        "attach to it instead")
        self.native.session_id = session_id
        self._open_session()
        self._log("session.resume", session=session_id, project=self.link.root, native=self.link.native_id)
        if not self.link.running:
            self._start_process()
        self._publish_state()
        return self.record()

    def _open_session(self) -> None:
        if self._open:
            return
        self._open = True
        self._error = None
        if self._history_broken:
            # The session's history could not be written: the session opened again gets a
            # fresh one (what the broken one held is gone with it).
            self.native.new_history()
            self._history_broken = False
        if self.link.running:
            # The CLI of the closed session is still ending: let it end on its own generation
            # (its exit no longer counts), then settle what it held.
            self.link.retire("the session was closed before the CLI took the message")
            self._after_close()

    # ---- the chat core (a chat) ----------------------------------------------------------------

    def info(self) -> dict:
        return self.durable.info

    def core_attach(self, sink, since: int | None = None, history_limit: int | None = None) -> dict:
        self._takes_limits_up()  # the answer's info says what the manifest says now
        return self.durable.attach(sink, since, history_limit)

    def core_detach(self, subscriber: int) -> None:
        self.durable.detach(subscriber)

    def history(self, cursor: str | None = None, limit: int = 60) -> dict:
        return self.durable.history(cursor, limit)

    def configure(self, model: str | None = None, runtime_mode: str | None = None,
                  resume_at_reset: bool | None = None, restart_words: dict | None = None) -> dict:
        """New settings apply to the next process; the conversation goes on. ``restart_words``
        (endedAt, unownedReason, resumeWords; None values remove) say how a restart treats it."""
        info = self.durable.info
        for key, value in (restart_words or {}).items():
            if value is None:
                info.pop(key, None)
            else:
                info[key] = value
        if model is not None:
            info["selection"] = {**info["selection"], "model": model or None}
            self._pending_model = model
        if runtime_mode is not None:
            info["runtimeMode"] = runtime_mode
        if resume_at_reset is not None:
            info["resumeAtReset"] = resume_at_reset
            if not resume_at_reset:
                self._lapse_limit_resume()
            elif "resumeAt" not in info and limits.owed_when_switched_on(info.get("limit"), now_ms()):
                self._owe_limit_resume()
        self.durable.emit(self.durable.thread.refresh_info())
        return info

    def core_send(self, text: str, delivery: str | None = None, uploads: list | None = None) -> dict:
        if not self._saved_or_saving():
            raise ChatError(self.durable.store_code, f"Not sent: {self.durable.store_error}")
        self._open_session()  # a message from the core opens a closed session again
        self._lapse_limit_resume()  # the person goes on: no take-up of the limited turn
        durable, info = self.durable, self.durable.info
        # Written before anything is queued (off the hub: up to 10 MiB).
        try:
            stored = on_threadpool(durable.attachments.save, self._id, uploads) if uploads else []
        except OSError as exc:
            folder = os.path.dirname(durable.attachments.root)
            raise ChatError(write_failure.code(exc), write_failure.attachments_not_saved(folder, exc)) from None
        if stored:
            delivery = None if delivery == "steer" else delivery  # a message with files is a turn of its own
        busy = durable.thread.busy()
        if delivery == "steer" and busy and not info["queuePaused"] and not text.startswith("/"):
            # Offered to the running turn through the CLI's own input; it waits in the queue
            # (marked) until the CLI shows it took it up, and stays there if it does not.
            message = q.enqueue(info, text)
            message["steering"] = True
            command_id = str(uuid.uuid4())
            self._steers[command_id] = message["id"]
            durable.emit(durable.thread.refresh_info())
            # Answered once the CLI took it up or refused it (the web edge waits on this).
            self._steer_answers[message["id"]] = answer = gevent.event.AsyncResult()
            self._core_write(Send(command_id, text, None))
            return {"queued": True, "turnId": message["turnId"], "steered": answer}
        if q.must_queue(info, busy):
            message = q.enqueue(info, text, stored)
            durable.emit(durable.thread.refresh_info())
            if info["queuePaused"] and not busy:
                self._drain(explicit=True)  # an explicit send resumes the queue, in order
            elif info["queuePaused"] and self._stop_requested:
                self._advance_after_stop = message["id"]  # a send during a stop goes once it lands
            return {"queued": True, "turnId": message["turnId"]}
        turn_id = host_id("turn")
        self._open_and_send(turn_id, text, attachments=stored)
        return {"queued": False, "turnId": turn_id}

    def unqueue(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        message = q.take(self.durable.info, message_id, self._id)
        if self._advance_after_stop == message_id:
            self._advance_after_stop = None
        self.durable.emit(self.durable.thread.refresh_info())
        return {"message": message}

    def send_now(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        self._lapse_limit_resume()
        q.to_front(self.durable.info, message_id, self._id)
        self.durable.emit(self.durable.thread.refresh_info())
        if self.durable.thread.busy():
            self._advance_after_stop = message_id
            self._stop_turn()
        else:
            self._drain(explicit=True)
        return {}

    def approve(self, request_id, decision: str, message: str | None = None) -> dict:
        item = self.durable.thread.item(f"approval-{request_id}")
        if item is None or item.get("decision") != "pending" or self._native(request_id) not in self.link.pending:
            raise ChatError("request-not-found", f"Nothing waits for approval {request_id}")
        if decision == "allow-always" and not item.get("canAllowAlways"):
            raise ChatError("bad-request", "This request offers no rule to always allow; answer allow or deny")
        self._answer_native(request_id, self.durable.projector.answer_approval(request_id, decision, message))
        self.durable.emit(self.durable.thread.upsert({**item, "decision": decision}))
        return {}

    def answer(self, request_id, answers: dict) -> dict:
        item = self.durable.thread.item(f"question-{request_id}")
        if item is None or item.get("state") != "pending" or self._native(request_id) not in self.link.pending:
            raise ChatError("request-not-found", f"No question waits under {request_id}")
        self._answer_native(request_id, self.durable.projector.answer_question(request_id, item["questions"], answers))
        self.durable.emit(self.durable.thread.upsert({**item, "state": "answered", "answers": answers}))
        return {}

    def dismiss(self, item_id: str) -> dict:
        item = self.durable.thread.item(item_id)
        if item is None or item["kind"] != "question" or item.get("state") != "pending" or not item.get("async"):
            raise ChatError("request-not-found", f"No question to dismiss under {item_id}")
        self.durable.emit(self.durable.thread.upsert({**item, "state": "dismissed"}))
        return {}

    def cancel(self, subagents: bool = False) -> dict:
        self._lapse_limit_resume()
        self.durable.info["queuePaused"] = True
        self.durable.emit(self.durable.thread.refresh_info())
        if self.durable.thread.busy():
            self._stop_turn()
        if subagents:
            for item in self._running("subagent"):
                self._stop_background(item)
        return {}

    def stop_task(self, task_id: str) -> dict:
        """Ends a background task (a background shell) of the chat's CLI."""
        item = next((i for i in self._running("task") if i.get("taskId") == task_id), None)
        if item is None:
            raise ChatError("task-not-found", f"This chat runs no such task: {task_id}")
        self._stop_background(item)
        return {}

    def stop_subagent(self, subagent_id: str) -> dict:
        """Ends a delegated agent where the CLI can; otherwise it is marked stopped (the seed's rule)."""
        item = next((i for i in self._running("subagent")
                     if subagent_id in (i["id"], i.get("taskId"), i.get("toolUseId"))), None)
        if item is None:
            raise ChatError("subagent-not-found", f"No subagent {subagent_id} is running in this chat")
        self._stop_background(item)
        return {}

    def subagent_source(self, subagent_id: str) -> dict:
        """Where a delegated agent's own conversation is: the CLI's session and the agent's id
        (its task id), for reading its transcript at the edge."""
        item = next((i for i in self.durable.thread.snapshot()["items"] if i["kind"] == "subagent"
                     and subagent_id in (i["id"], i.get("taskId"), i.get("toolUseId"))), None)
        if item is None:
            raise ChatError("subagent-not-found", f"No subagent {subagent_id} in chat {self._id}")
        if not item.get("taskId") or not self.link.native_id:
            raise ChatError("chat-unsupported", f"{self._harness.LABEL} keeps no transcript of this agent to read")
        # Claude Code's agent: a transcript beside its session's, by task id; Codex's: a rollout of
        # its own, by its thread id.
        return {"harness": self._harness.HARNESS_ID, "native": self.link.native_id, "agent": item["taskId"],
                "status": item.get("status"), "subagentId": item["id"], "toolUseId": item.get("toolUseId")}

    def _running(self, kind: str) -> list[dict]:
        return [item for item in self.durable.thread.snapshot()["items"]
                if item["kind"] == kind and item.get("status") == "running"]

    def _stop_background(self, item: dict) -> None:
        # Both drivers end one task (stop_task_frames); with no process, nothing of it runs.
        frames = self.link.driver.stop_task_frames(item["taskId"], item["kind"]) \
            if self.link.running and item.get("taskId") else []
        if not frames:
            if item["kind"] == "task":
                raise ChatError("chat-unsupported", f"{self._harness.LABEL} cannot stop one background task from here")
            # Nothing of it runs in the CLI now: it is marked stopped, and its later output is its own.
            self.durable.emit(self.durable.thread.upsert({**item, "status": "stopped"}))
            return
        self._log("task.stop", task=item["taskId"], kind=item["kind"])
        self.durable.projector.stop_requested(item["taskId"])
        self.link.write(frames)

    def attachment(self, attachment_id: str) -> dict:
        """An attachment of this chat's messages: its record (without its path) and its bytes."""
        found = self.durable.attachments.get(self._id, attachment_id)
        if found is None:
            raise ChatError("item-not-found", f"No attachment {attachment_id} in chat {self._id}")
        try:
            content = gevent.get_hub().threadpool.apply(self.durable.attachments.read, (found,))
        except OSError:
            raise ChatError("item-not-found", f"Attachment {attachment_id} is gone from disk") from None
        return {"attachment": files.public(found), "data": base64.b64encode(content).decode()}

    # ---- visuals (VisualStore keeps them) ----------------------------------------------------------

    @guarded
    def visuals_changed(self, listed: list) -> None:
        self.durable.set_visuals(listed)

    def _revoke_agent_token(self) -> None:
        """What the chat's agents held stops working: a cleared chat starts with a new token."""
        if self._agent_tokens is not None:
            self._agent_tokens.revoke(self._id)

    def _drop_visuals(self) -> None:
        if self._visual_store is not None:
            tell(self._visual_store, "remove_chat", self._id)
        if self.durable.visuals:
            self.durable.set_visuals([])

    # ---- bookmarks (core/bookmarks.py) ----------------------------------------------------------

    def add_bookmark(self, item_id: str, name: str | None = None) -> dict:
        marks = bookmarks.add(self.durable.bookmarks, self.durable.thread.item(item_id), item_id, name, now_ms())
        self.durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def rename_bookmark(self, item_id: str, name: str) -> dict:
        marks = bookmarks.rename(self.durable.bookmarks, item_id, name)
        self.durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def remove_bookmark(self, item_id: str) -> dict:
        marks = bookmarks.remove(self.durable.bookmarks, item_id)
        if marks != self.durable.bookmarks:
            self.durable.set_bookmarks(marks)
        return {"bookmarks": marks}

    def clear(self, force: bool = False) -> dict:
        if self.durable.thread.busy() and not force:
            raise ChatError("chat-busy", f"Chat {self._id} is still working on the previous message")
        self._lapse_limit_resume()
        self._retire_cli()
        self._revoke_agent_token()
        self.link.native_id = None
        self.durable.reset()
        self._drop_visuals()
        return {}

    def compact(self) -> dict:
        if self.durable.thread.busy():
            raise ChatError("chat-busy", f"Chat {self._id} is still working on the previous message")
        self._open_session()
        self.durable.emit(self.durable.thread.open_turn(host_id("turn")))
        if self._harness.HARNESS_ID == "codex":
            # Codex folds natively (thread/compact/start), as a turn of its own.
            if not self.link.running:
                self._start_process()
            self.link.write(self.link.driver.compact_frames())
            self._publish_state()
            return {}
        # Claude Code folds by prompt: /compact runs as a turn of its own.
        self._send_to_cli("/compact")
        return {}

    def kill(self) -> dict:
        self._revoke_agent_token()
        self._lapse_limit_resume()
        self._drop_visuals()
        self.durable.remove()  # from here nothing of this chat reaches the disk again
        self.close(1000)
        return {}

    def freeze(self) -> None:
        """Shutdown: the running turn stays running in the record, so the next start can tell."""
        self.durable.freeze()

    @guarded
    def flush_delta(self) -> None:
        self.durable.flush_delta()

    # ---- a chat that cannot be saved (a full disk) -----------------------------------------------

    def _saved_or_saving(self) -> bool:
        """Whether the chat is saved, after one more try when it was not: a message goes out
        only to a chat whose items reach the disk."""
        if self.durable.store_error is None:
            return True
        if self.durable.retry_store():
            self.store_changed()  # the person hears it is saved before their message goes on
            return True
        return False

    @guarded
    def retry_store(self) -> None:
        self.durable.retry_store()

    @guarded
    def store_changed(self) -> None:
        """The chat could not be saved, or is saved again (durable.store_error says which). Like a
        history that cannot be written: the turn is stopped and the person is told what happened
        and what to do, on the panel (an error note, the session's error) and on the core (the
        note, info.storeError and status error in chat.status). Unlike it, nothing is lost: the
        thread in memory is saved whole once the disk takes it."""
        durable = self.durable
        if durable.frozen or durable.removed:
            return
        words = durable.store_error
        if words is not None and not self._told_unsaved:
            self._told_unsaved = True
            self.link.refuse_queued(f"not sent: {words}")
            durable.emit(durable.thread.note("error", words))
            durable.emit(durable.thread.set_info(storeError=words, queuePaused=True))  # nothing drains meanwhile
            if durable.thread.busy() and not self._stop_requested:
                self._stop_turn()
            self.native.tell_everyone(words, item_readers=False)  # thread sockets have the note
            self._publish_state()
        elif words is None and self._told_unsaved:
            self._told_unsaved = False
            durable.info.pop("storeError", None)
            durable.emit(durable.thread.note("info", write_failure.SAVED_AGAIN))
            durable.emit(durable.thread.refresh_info())
            self.native.tell_everyone(write_failure.SAVED_AGAIN, item_readers=False)
            self._publish_state()

    def _refuse_if_steering(self, message_id: str) -> None:
        if any(m["id"] == message_id and m.get("steering") for m in self.durable.info["queue"]):
            raise ChatError("request-not-found", f"Queued message {message_id} is being steered into the turn")

    def _open_and_send(self, turn_id: str, text: str, user_id: str | None = None,
                       queued_id: str | None = None, attachments: list[dict] | None = None) -> None:
        self.durable.open_turn(turn_id, text, user_id, queued_id, attachments=attachments)
        self._send_to_cli(text, attachments)

    def _send_to_cli(self, text: str, attachments: list[dict] | None = None) -> None:
        """The message as the CLI gets it: images as images, other files named with their path."""
        model, self._pending_model = self._pending_model, None
        images = []
        for attachment in attachments or []:
            if files.is_image(attachment):
                try:
                    content = gevent.get_hub().threadpool.apply(self.durable.attachments.read, (attachment,))
                except OSError:
                    continue  # gone from disk: the message goes without it, never not at all
                images.append((attachment["mime"], base64.b64encode(content).decode()))
        self._core_write(Send(str(uuid.uuid4()), files.message_text(text, attachments or []), model, tuple(images)))

    def _core_write(self, command: Send) -> None:
        # The same path as a page's send (one process, acknowledgements, history); the core's
        # own queue is what matters, so the result only feeds the steer bookkeeping.
        self._open_session()
        if not self.link.running:
            self._start_process()
        self.link.send(CORE, command, self._telling_what_stopped(command.text, ""))
        self._publish_state()

    def _telling_what_stopped(self, text: str, prompt: str) -> str:
        """The devhost section a message goes with: once, after a CLI's end stopped background
        work, a note naming it first (the agent may be waiting for it), then the prompt."""
        stopped = self.durable.info.get("backgroundStopped")
        if not stopped or not text.strip():
            return prompt  # (a message of images alone carries no section: the next one says it)
        del self.durable.info["backgroundStopped"]
        self.durable.emit(self.durable.thread.refresh_info())
        self._log("background.told", stopped=len(stopped))
        told = background.note(stopped)
        return f"{told}\n\n{prompt}" if prompt else told

    def _native(self, request_id):
        """The CLI's own id of a request the thread names (Codex's restart from 0 in every process)."""
        return self.durable.projector.native(request_id) if self.durable.projector is not None else None

    def _answer_native(self, request_id, answer: dict) -> None:
        native = self._native(request_id)
        self.link.respond(native, answer)
        self.durable.projector.settled(request_id)
        self._publish_state()

    def _stop_turn(self) -> None:
        self._stop_requested = True
        frames = self.link.driver.interrupt_frames() if self.link.running and not self.link.starting else []
        if frames:
            self.link.write(frames)
        else:
            # No process holds the turn yet (still starting, or its turn never got an id): the
            # process is ended so nothing of the turn goes on, and the turn ends here.
            self._retire_cli()
            self._finish_turn("aborted")

    def _retire_cli(self) -> None:
        """Ends the CLI without its exit counting against the chat (clear starts over)."""
        self.link.retire("not delivered: the chat's CLI was ended")
        self._steers.clear()
        for queued_id in list(self._steer_answers):
            turn_id = next((m["turnId"] for m in self.durable.info["queue"] if m["id"] == queued_id), None)
            self._answer_steer(queued_id, {"queued": True, "turnId": turn_id})
        for message in self.durable.info["queue"]:
            message.pop("steering", None)
        self.durable.emit(self.durable.thread.set_info(running=False))
        self._publish_state()

    def _finish_turn(self, state: str, process_gone: bool = False, limit: dict | None = None) -> None:
        self.durable.finish_turn(state, process_gone, limit=limit)
        self._stop_requested = False
        chosen, self._advance_after_stop = self._advance_after_stop, None
        if chosen is not None and any(m["id"] == chosen for m in self.durable.info["queue"]):
            q.to_front(self.durable.info, chosen, self._id)
            self._drain(explicit=True)
        else:
            self._drain()
        self.durable.emit(self.durable.thread.refresh_info())

    def _drain(self, explicit: bool = False) -> None:
        message = self.durable.next_to_drain(explicit)
        if message is not None:
            self._open_and_send(message["turnId"], message["text"], user_id=f"user-{message['id']}",
                                queued_id=message["id"], attachments=message.get("attachments"))

    # ---- usage limits: taking a limited turn up again (core/limits.py) --------------------------

    def _owe_limit_resume(self) -> None:
        """Right after a limited turn (or when the chat turns resume on): the take-up is owed when
        the host installed it and the chat did not turn it off."""
        info = self.durable.info
        limit, turns = info.get("limit"), self.durable.thread.turns()
        if not self._takes_limits_up() or info.get("resumeAtReset") is False or not limit or not turns:
            return
        at = limits.resume_at(limit, limits.tries(turns), now_ms())
        if at is None:
            return
        self.durable.emit(self.durable.thread.set_info(resumeAt=at))
        self._log("turn.resume-owed", turn=turns[-1]["id"], at=chatlog.iso_ms(at), kind=limit["kind"])
        self._arm_limit_resume()

    def _arm_limit_resume(self) -> None:
        at = self.durable.info.get("resumeAt")
        if self._limit_timer is not None:
            self._limit_timer.kill(block=False)
            self._limit_timer = None
        if isinstance(at, int) and self._takes_limits_up():
            self._limit_timer = spawn_later_logged(max(0.0, (at - now_ms()) / 1000), tell, self.actor_ref,
                                                   "take_up_after_limit", at)

    def _takes_limits_up(self) -> bool:
        """Whether the host takes limited turns up, as the manifest says now; info.limitResume
        follows it (its clients and the registry are told of a change)."""
        on = bool(self._limit_resume())
        if self.durable.info.get("limitResume") != on:
            self.durable.info["limitResume"] = on
            self.durable.emit(self.durable.thread.refresh_info())
            self.durable.tell_registry()
        return on

    def _lapse_limit_resume(self) -> None:
        if "resumeAt" in self.durable.info:
            self.durable.info.pop("resumeAt")
            self.durable.emit(self.durable.thread.refresh_info())
            self._log("turn.resume-lapsed")
        if self._limit_timer is not None:
            self._limit_timer.kill(block=False)
            self._limit_timer = None

    @guarded
    def take_up_after_limit(self, at: int) -> None:
        """The limit lifted: the limited turn is taken up on the CLI's own session, once, as a
        turn of its own; the queue goes on after it."""
        info, thread = self.durable.info, self.durable.thread
        if info.get("resumeAt") != at or self.durable.frozen or self.durable.removed:
            return  # lapsed, or owed anew since
        if not self._takes_limits_up():
            self._lapse_limit_resume()  # the manifest turned it off since
            return
        if thread.busy() or self.link.starting:
            self._limit_timer = spawn_later_logged(LIMIT_WAIT, tell, self.actor_ref, "take_up_after_limit", at)
            return  # something is in the way: the take-up waits
        turns = thread.turns()
        limit = turns[-1].get("limit") if turns else None
        self._limit_timer = None
        if not limit:
            self._lapse_limit_resume()
            return
        words = limits.WAKE_WORDS[limit["kind"]]
        info.pop("resumeAt", None)
        info["queuePaused"] = False  # what waits goes out after the resumed turn
        turn_id = host_id("turn")
        self.durable.emit(thread.open_turn(turn_id, origin="agent", label=words["label"]))
        self.durable.emit(thread.note("info", words["note"], turn_id=turn_id))
        self._log("turn.resume-after-limit", turn=turns[-1]["id"], kind=limit["kind"])
        self._send_to_cli(words["text"])
        self._publish_state()

    # ---- what the link tells (LinkOwner) -------------------------------------------------------

    def link_started(self) -> None:
        self._cli_fault = None
        self.durable.new_process()  # its reported cost starts from what the chat cost so far
        self.durable.emit(self.durable.thread.set_info(running=True))  # info.running: whether a process lives

    def link_dispatched(self, origin, command: Send, joined: bool) -> None:
        self._error = None
        if origin != CORE and command.model is not None:
            # A page's model choice is the chat's too: it is kept, and used after a restart.
            self.durable.info["selection"] = {**self.durable.info["selection"], "model": command.model or None}
            self.durable.emit(self.durable.thread.refresh_info())
        if origin != CORE and not self.durable.frozen:
            # A page's message is a turn of the thread too (or joins the one running).
            # Named by the command id, so the page that sent it finds its message among the items.
            user_id, images = f"user-{command.command_id}", len(command.images)
            turn = self.durable.thread.active_turn()
            if turn is not None and turn["state"] == "running":
                self.durable.emit(self.durable.thread.add_user(turn["id"], command.text, user_id, images))
            else:
                self._lapse_limit_resume()
                self.durable.open_turn(host_id("turn"), command.text, user_id, images=images)
        self._publish_state()

    def link_turn_started(self) -> None:
        """The CLI started a turn by itself (to report on background work): a turn of the
        thread too, with no message of the person's."""
        if not self.durable.frozen and not self.durable.thread.busy():
            self.durable.emit(self.durable.thread.open_turn(host_id("turn"), origin="cli"))
        self._publish_state()

    def link_result(self, origin, command_id: str, delivery: str | None, error: str | None) -> None:
        if origin != CORE:
            self.native.answer(origin, command_id, delivery, error)
        elif error is not None:
            self.link_evidence(command_id, "error")  # a core message refused: its steer settles

    def link_evidence(self, message_id: str, delivery: str) -> None:
        """What became of a steered message: taken up -> a user item of the running turn; refused or
        lost -> it stays queued, unmarked, and the queue pauses (never lost, never sent twice)."""
        queued_id = self._steers.get(message_id)
        if queued_id is None:
            return
        durable = self.durable
        queue = durable.info["queue"]
        message = next((m for m in queue if m["id"] == queued_id), None)
        if message is None:
            self._steers.pop(message_id, None)
            return
        if delivery == "started":
            self._steers.pop(message_id, None)
            queue.remove(message)
            turn_id = durable.info.get("activeTurnId") or message["turnId"]
            durable.emit(durable.thread.add_user(turn_id, message["text"], f"user-{queued_id}"))
            durable.emit(durable.thread.refresh_info())
            self._answer_steer(queued_id, {"queued": False, "turnId": turn_id})
        elif delivery in ("error", "unconfirmed", "settled"):
            self._steers.pop(message_id, None)
            message.pop("steering", None)
            durable.info["queuePaused"] = True
            durable.emit(durable.thread.refresh_info())
            self._answer_steer(queued_id, {"queued": True, "turnId": message["turnId"]})

    def _answer_steer(self, queued_id: str, answer: dict) -> None:
        waiting = self._steer_answers.pop(queued_id, None)
        if waiting is not None:
            waiting.set(answer)

    def link_turn_ended(self, effect: fx.TurnEnded) -> None:
        if effect.error:
            self._error = effect.error
        if self.durable.frozen:
            return
        if self.link.turn_active and self.durable.thread.busy():
            return  # the CLI goes on with more of the same turn
        if not self.durable.thread.busy():
            return  # nothing of the thread runs (its turn was stopped here already)
        state = "aborted" if effect.interrupted else ("error" if effect.error else "done")
        if effect.error and not effect.limit:  # a limit's words are on its turn (limit.message)
            self.durable.emit(self.durable.thread.note("error", effect.error))
        if effect.limit:
            self._log("turn.limit", turn=self.log.turn, kind=effect.limit["kind"], window=effect.limit.get("window"),
                      resets=chatlog.iso_ms(effect.limit.get("resetsAt")))
        self._finish_turn(state, limit=effect.limit)
        if effect.limit:
            self._owe_limit_resume()

    def link_facts(self, facts: dict) -> None:
        """What the CLI reported of its session goes into the info, as reported."""
        if not self.durable.frozen:
            self.durable.report(facts)

    def link_plan_usage(self, usage: dict) -> None:
        """How much of the plan's usage window is used (a warning before the wall)."""
        if not self.durable.frozen and self.durable.info.get("planUsage") != usage:
            self.durable.emit(self.durable.thread.set_info(planUsage=usage))

    def link_notice(self, message: str) -> None:
        self.native.tell_everyone(message)

    def link_start_failed(self, message: str) -> None:
        self._log("error", kind="startup", error=message)
        self.link.starting = False
        self._end_faulty_cli(message)

    def _end_faulty_cli(self, reason: str) -> None:
        """The CLI cannot go on (it never got ready, stopped reading, broke its protocol): every
        send is answered with ``reason`` and the CLI is ended; its exit then reads as one (the
        session ``error`` with this reason, the turn failed) and the next message starts the CLI
        again on its own conversation. The first fault is the one said."""
        self._cli_fault = self._cli_fault or reason
        self._error = self._cli_fault
        self.link.turn_active = False
        self.link.fail_sends(reason)
        if self.link.running:
            self.link.cli.terminate()

    # ---- events from the CLI (told by CliProcess) ----------------------------------------------

    @guarded
    def on_cli_frames(self, generation: int, frames: list) -> None:
        """A batch of ``(frame, raw line)`` from the CLI, in the order it wrote them.

        Frames to keep are staged and stored with one history write; the stage is flushed
        before any effect is applied, so every socket still sees events and the state, acks
        and errors that follow from them in the CLI's order."""
        if generation != self.link.generation or self._history_broken:
            return
        self.link.last_event_at = time.monotonic()
        staged: list[bytes] = []
        for frame, raw in frames:
            keep, found = self.link.driver.decode(frame)
            if keep:
                staged.append(raw)
            if found:
                if staged and not self._store(staged):
                    return
                staged = []
            changed = False
            for effect in found:
                changed |= self.link.apply(effect)
            changed |= self.durable.project(frame, self.link.native_id)
            if changed:
                self._publish_state()
        if staged:
            self._store(staged)

    def _store(self, raws: list[bytes]) -> bool:
        try:
            self.native.store(raws)
        except HistoryWriteError as exc:
            self._history_broken = True
            self._error = f"{exc}; devhost stopped the session's CLI rather than lose events"
            self._log("error", kind="history", error=str(exc))
            self.link.fail_sends(self._error)
            self.link.pending.clear()
            self.link.turn_active = False
            if self.link.running:
                self.link.cli.terminate()
            self.native.tell_everyone(self._error)
            self._publish_state()
            return False
        return True

    @guarded
    def on_cli_failed(self, generation: int, kind: str, reason: str) -> None:
        """Its CLI process failed while running (a write to it, or a line from it): it is ended."""
        if generation != self.link.generation:
            return
        self._log("error", kind=kind, error=reason)
        self._end_faulty_cli(f"{reason}; devhost ended it")
        self._publish_state()

    @guarded
    def on_cli_exit(self, generation: int, code, stderr_tail: str) -> None:
        if not self.link.exited(generation):
            return
        self.link.pending.clear()
        self.link.turn_active = False
        if not self._open:
            self._log("session.ended", code=code)
            self._after_close()
            self._release_if_idle()
            return
        # Ended by devhost for a fault of its own (logged then): that fault says why, its exit
        # says only the signal that ended it.
        fault, self._cli_fault = self._cli_fault, None
        reason = fault or exit_reason(self._harness.LABEL, code, stderr_tail)
        if fault is None:
            self._log("error", kind="process", error=reason)
        self.link.fail_sends(reason)
        if not self._history_broken:
            self._error = reason  # the next message starts the CLI again on its own conversation
        self._after_exit(reason)
        self._publish_state()
        self._release_if_idle()

    def _after_close(self) -> None:
        """The CLI of a closed session ended: the thread's turn was stopped, not failed, and
        nothing queued goes out (a closed session sends nothing until it is opened again)."""
        durable = self.durable
        if durable.frozen or durable.removed:
            return  # at shutdown the running turn stays running on disk, for the next start
        self._advance_after_stop = None
        self._stop_requested = False
        durable.emit(durable.thread.set_info(running=False))
        durable.emit(durable.thread.stop_background())
        if durable.thread.busy():
            durable.finish_turn("aborted", process_gone=True)  # finish_turn pauses the queue
            durable.emit(durable.thread.refresh_info())
        elif durable.thread.pending_requests():
            durable.emit(durable.thread.cancel_requests())

    def _after_exit(self, reason: str) -> None:
        durable = self.durable
        if durable.frozen or durable.removed:
            return
        durable.emit(durable.thread.set_info(running=False))
        durable.emit(durable.thread.stop_background())
        if durable.thread.busy():
            durable.emit(durable.thread.note("error", reason))
            durable.thread.failed = True
            self._finish_turn("error", process_gone=True)
        elif durable.thread.pending_requests():
            durable.emit(durable.thread.cancel_requests())

    @guarded
    def on_deadline(self, generation: int, request_id) -> None:
        if generation != self.link.generation or self.link.driver is None:
            return
        self.link.expire(request_id)
        self._publish_state()

    @guarded
    def on_start_deadline(self, generation: int) -> None:
        if self.link.start_overdue(generation):
            self.link_start_failed(f"{self._harness.LABEL} did not get ready within {self.link.start_deadline:g} s "
                                   "of starting, so devhost ended it; send again to start it anew")
            self._publish_state()

    @guarded
    def on_ack_timeout(self, message_id: str) -> None:
        self.link.ack_timed_out(message_id)

    @staticmethod
    def _beat(ref) -> None:
        while True:
            gevent.sleep(HEARTBEAT_SECONDS)
            tell(ref, "heartbeat")  # the check runs inside the actor

    @guarded
    def heartbeat(self) -> None:
        """Logs a turn that has been quiet for HEARTBEAT_SECONDS: what it waits on."""
        if not self.link.turn_active:
            return
        now = time.monotonic()
        quiet = self.link.quiet_for(now)
        if quiet >= HEARTBEAT_SECONDS:
            self._log("turn.heartbeat", turn=self.log.turn, elapsed=f"{now - (self.link.turn_started_at or now):.0f}s",
                      quiet=f"{quiet:.0f}s", tools=",".join(self.durable.running_tools()) or None,
                      pending=",".join(map(str, self.link.pending)) or None)

    # ---- state ---------------------------------------------------------------------------------

    def _status(self) -> str:
        return session_status(closed=not self._open, starting=self.link.starting, turn_active=self.link.turn_active,
                              pending_requests=len(self.link.pending), error=self.durable.store_error or self._error)

    def _publish_state(self) -> None:
        record = self.record()
        self.native.publish(record, list(self.link.pending))
        if self._registry is not None:
            tell(self._registry, "on_record", self._id, record)  # the registry lists without asking chats
        if record["status"] != self._last_status:
            self._last_status = record["status"]
            self._log("session.status", status=record["status"])

"""The durable face of a conversation: its thread of items, its queue, and their record on disk.

A plain object owned by the Chat actor (actors/chat/). It turns what happens in the chat
(a message opened, a CLI frame projected, a turn ended) into the chat core's events, and puts
every event in the chat's log before any client sees it; the record is rewritten when the log
grows past FOLD_LOG_BYTES, at a clear, and at shutdown. Text deltas to one item are joined for
DELTA_TICK before they go out (the thread itself always holds the whole text).

Clients are sinks (``push`` never blocks): those attached to this chat get every
``ChatEvent``; every connected client gets ``ChatStatus`` when the status signature changes.
The registry is told each new info, so listing never asks a chat.

It owns the thread and its info: the Chat's controllers change them only through its methods
(``update_info`` for the info, ``enqueue``/``unqueue``/``to_front``/``steer_*`` for the queue,
``begin_turn``/``note``/``upsert``… for items), each of which logs and sends the events of the
change; they read ``thread`` and ``info`` freely. Its timers (the delta flush, the store retry)
come back to it through the chat's actor (actors/tell.py ``call_later``).
"""
from __future__ import annotations

import copy
import os
import time

from actors import chatlog
from actors.core import queue as q
from actors.core.cuts import collapsed, first_line
from actors.core.deltas import DeltaJoiner
from actors.core.history import page
from actors.core.thread import Thread, new_info
from actors.guard import on_threadpool
from actors.harness import effects as fx
from actors.messages import ChatBookmarks, ChatEvent, ChatStatus, ChatVisuals
from actors.status import status_signature
from actors.tell import call, call_later, tell
from actors.core import attachments as files
from storage import sidecars, write_failure
from storage.attachments import AttachmentStore
from storage.chat_store import FOLD_LOG_BYTES, read_log

DELTA_TICK = 0.016  # deltas to one item within this are joined into one event
# A log line longer than this is appended on the hub's threadpool: a write that large can wait
# on the disk; the small ones (most of them) are cheaper on the hub than a thread switch.
APPEND_ON_HUB = 64 << 10
# While the chat cannot be saved (a full disk), saving it whole is tried again this often, and at
# every send (a test may make it quick).
STORE_RETRY_SECONDS = float(os.environ.get("DEVHOSTD_STORE_RETRY_SECONDS") or 5.0)


def provider_of(harness) -> str:
    """The core's name of a harness (what chat.create takes): claude, codex."""
    return "claude" if harness.HARNESS_ID == "claude-code" else harness.HARNESS_ID


class DurableFace:
    def __init__(self, *, chat_id: str, harness, cwd: str, model: str | None, runtime_mode: str, store, clients,
                 registry, actor_ref, stored=None, resume: str | None = None, imported: list | None = None,
                 log: chatlog.ChatLog | None = None, on_store_changed=None, workdir: str | None = None,
                 limit_resume: bool = False):
        self.chat_id = chat_id
        self._on_store_changed = on_store_changed  # () -> None: the chat stops its turn and tells the person
        self._harness = harness
        self._log = log or chatlog.ChatLog(chat_id, harness.HARNESS_ID, cwd)
        self._tools: dict[str, float] = {}  # running tool item id -> when it started (monotonic)
        self._store = store
        self._bookmark_file = sidecars.bookmarks(os.path.dirname(store.folder))
        self.attachments = AttachmentStore(os.path.dirname(store.folder))
        self.bookmarks: list[dict] = self._bookmark_file.load(chat_id)
        self.visuals: list[dict] = sidecars.visuals(os.path.dirname(store.folder)).load(chat_id)  # VisualStore's
        self._clients = clients  # every connected core client: chat.status goes to all of them
        self._registry = registry  # told each new info (a tell)
        self._actor_ref = actor_ref  # the chat's own, for the delta flush timer
        self._attached: dict[int, object] = {}
        self._next_subscriber = 0
        self._joiner = DeltaJoiner()
        self._flush_timer = None
        self._last_signature = None
        self._fold_at = FOLD_LOG_BYTES  # the log's size past which it is folded into the record
        self.projector = None
        self.removed = False  # killed: nothing of this chat reaches the disk again
        self.frozen = False  # shutting down: the running turn stays running in the record
        # Why the chat cannot be saved now (words for the person), or None. While it is set the
        # thread in memory is the only whole copy: nothing is appended (the log would get a gap),
        # and the record is written again (STORE_RETRY_SECONDS, each send) until it takes.
        self.store_error: str | None = None
        self.store_code = "storage-full"  # the core's code for it (storage-full, storage-failed)
        self._unsaved_from: int | None = None  # the first seq that is not on disk
        self._store_retry = None
        self._record_size = 0  # what the last record written took
        record, log = stored if stored else (None, [])
        if record or log:
            info = (record or {}).get("info") or new_info(chat_id, provider_of(harness), cwd, model, runtime_mode)
            self.thread = Thread(info, (record or {}).get("items"))
            self.seq = (record or {}).get("seq", 0)
            # The seq of the last clear's reset (kept on disk as resetSeq): history cursors of
            # before expire, also after a restart.
            self.reset_seq = (record or {}).get("resetSeq", 0)
            for line in log:
                self.thread.apply(line["event"])
                self.seq = line["seq"]
                if line["event"].get("type") == "reset":
                    self.reset_seq = line["seq"]
            # Saved when the disk had room again: this daemon finds out for itself.
            self.info.pop("storeError", None)
            self.fresh = False
        else:
            # A conversation the CLI saved before devhostd held it starts with its transcript.
            self.thread = Thread(new_info(chat_id, provider_of(harness), cwd, model, runtime_mode, resume), imported)
            first = next((item["text"] for item in imported or [] if item["kind"] == "user"), None)
            if first:
                self.info["suggestedTitle"] = suggested_title(first)
            self.seq = 0
            self.reset_seq = 0
            self.fresh = True
        if workdir and workdir != self.info["cwd"]:
            self.info["workdir"] = workdir  # a resumed conversation's own folder in cwd: its CLI runs there
        self.info["limitResume"] = limit_resume  # whether this host takes limited turns up again (clients ask)
        # The chat's cost before the running process, and when the last turn ended (a turn's own
        # cost is what was reported in between).
        self._cost_base = self._cost_mark = self.info["usage"].get("costUsd", 0)

    @property
    def info(self) -> dict:
        return self.thread.info

    # ---- clients -------------------------------------------------------------------------------

    def attach(self, sink, since: int | None, history_limit: int | None) -> dict:
        """Joins a client; it gets the events after ``since`` from the log when the log still has
        them all, else a snapshot (the whole thread, or its newest page)."""
        self.flush_delta()
        self._next_subscriber += 1
        subscriber = self._next_subscriber
        self._attached[subscriber] = sink
        if since is not None and since <= self.seq:
            # Up to a record's size of log, read and parsed on the hub's threadpool. Nothing is
            # appended meanwhile: this chat's actor waits here.
            lines = on_threadpool(_log_after, self._store.log_path(self.chat_id), since)
            if [line["seq"] for line in lines] == list(range(since + 1, self.seq + 1)):
                return {"subscriber": subscriber, "info": self.info, "items": [], "seq": self.seq,
                        "events": [line["event"] for line in lines], "bookmarks": self.bookmarks,
                        "visuals": self.visuals}
        answer = {"subscriber": subscriber, "seq": self.seq, **self.thread.snapshot(),
                  "pending": self.thread.pending_requests(), "bookmarks": self.bookmarks, "visuals": self.visuals}
        if history_limit is not None:
            answer.update(page(answer["items"], self.reset_seq, None, history_limit))
        return answer

    def detach(self, subscriber: int) -> None:
        self._attached.pop(subscriber, None)

    def history(self, cursor: str | None, limit: int) -> dict:
        self.flush_delta()
        return page(self.thread.snapshot()["items"], self.reset_seq, cursor, limit)

    # ---- the CLI's frames ----------------------------------------------------------------------

    def new_process(self, projection) -> None:
        """A CLI process starts: ``projection`` is its driver's, whose items' ids begin with an id
        prefix of their own (when the process started, in ms: unique across restarts of the daemon
        too), so a restarted CLI that counts from 1 again never overwrites what an earlier one
        wrote. Its cost adds to what earlier ones cost."""
        self.projector = projection
        self._cost_base = self.info["usage"].get("costUsd", 0)

    def report(self, facts: dict) -> None:
        """What the CLI reported (core/facts): the model it uses, its slash commands, the
        context's use and window, and the cost (a process's running total, added to the
        chat's from earlier processes). Nothing it did not report is set."""
        info, usage = self.info, self.info["usage"]
        before = (info.get("model"), list(info.get("slashCommands") or []), dict(usage))
        if isinstance(facts.get("model"), str):
            info["model"] = facts["model"]
        if "slashCommands" in facts:
            info["slashCommands"] = list(facts["slashCommands"])
        for key in ("contextTokens", "contextWindow"):
            if key in facts:
                usage[key] = facts[key]
        if "costTotalUsd" in facts:
            usage["costUsd"] = round(self._cost_base + facts["costTotalUsd"], 6)
        if (info.get("model"), list(info.get("slashCommands") or []), dict(usage)) != before:
            self.emit(self.thread.refresh_info())

    def project(self, ops: list[tuple], effects: list, native_id: str | None) -> bool:
        """Applies what the driver read in a CLI frame (its projection's operations, and its
        effects for whether the CLI took the prompt); True when what runs in the background
        changed (the session's record says how much does)."""
        if self.frozen or self.removed or self.projector is None:
            return False
        if native_id and native_id != self.info.get("agentSessionId"):
            self.emit(self.thread.set_info(agentSessionId=native_id))
        background_changed = self._apply(ops) if ops else False
        if effects and any(type(effect) is fx.PromptTaken for effect in effects):
            turn = self.thread.active_turn()
            if turn and turn.get("resumePending"):
                self.emit(self.thread.upsert({**turn, "resumePending": False}))  # the resumed CLI has it
        return background_changed

    def _apply(self, ops: list[tuple]) -> bool:
        """Applies a projector's operations; True when what runs in the background changed."""
        background_changed = False
        for op in ops:
            if op[0] == "upsert":
                if op[1].get("kind") == "tool":
                    self._log_tool(self.thread.item(op[1]["id"]), op[1])
                self.emit(self.thread.upsert(op[1]))
            elif op[0] == "append":
                _, item_id, text, skeleton = op
                if not self.thread.has(item_id) and skeleton is not None:
                    self.emit(self.thread.upsert(skeleton))
                self._hold_delta(self.thread.append_text(item_id, text))
            elif op[0] == "background":
                # What still runs after its turn (subagents, background shells): status can say idle
                # with background work, and clients can show it.
                self.emit(self.thread.set_info(background=op[1]))
                background_changed = True
            elif op[0] == "resolved":
                for kind in ("approval", "question"):
                    item = self.thread.item(f"{kind}-{op[1]}")
                    field = "decision" if kind == "approval" else "state"
                    if item is not None and item.get(field) == "pending":
                        self.emit(self.thread.upsert({**item, field: "cancelled"}))
        return background_changed

    def _log_tool(self, before: dict | None, change: dict) -> None:
        """A tool's start and end as log records: its name and subject (a path or a folder), never
        its input or output."""
        item = {**(before or {}), **change}
        item_id, state = item["id"], item.get("state")
        if before is None:
            self._tools[item_id] = time.monotonic()
            self._log("tool.start", turn=self._log.turn, tool=item.get("toolUseId"), name=item.get("name"),
                      path=tool_subject(item))
        if state in ("done", "error") and item_id in self._tools:
            started = self._tools.pop(item_id)
            self._log("tool.end", turn=self._log.turn, tool=item.get("toolUseId"), name=item.get("name"),
                      outcome=state, took=f"{time.monotonic() - started:.1f}s", exit=item.get("exitCode"))

    def running_tools(self) -> list[str]:
        """The names of the tools running now (for the heartbeat)."""
        return [str(self.thread.item(item_id).get("name")) for item_id in self._tools if self.thread.has(item_id)]

    def answered_natively(self, native_request_id, result: dict) -> None:
        """A Chat-API socket answered a request: its item is settled here too, so the core's
        clients see it answered and cannot answer it again."""
        if self.projector is None:
            return
        request_id = self.projector.thread_id_of(native_request_id)
        if request_id is None:
            return
        approval = self.thread.item(f"approval-{request_id}")
        if approval is not None and approval.get("decision") == "pending":
            self.emit(self.thread.upsert({**approval, "decision": self.projector.decision_of(result)}))
        question = self.thread.item(f"question-{request_id}")
        if question is not None and question.get("state") == "pending":
            self.emit(self.thread.upsert({**question, "state": "answered"}))
        self.projector.settled(request_id)

    # ---- what the chat's controllers change -----------------------------------------------------

    def update_info(self, *, drop: tuple[str, ...] = (), **changes) -> None:
        """The one way the chat's controllers change the info: ``changes`` set, ``drop`` removed,
        then one ``info`` event (its requests' summaries and status made anew) to every client.
        With neither, the info is only announced again (after a change to the queue, say)."""
        info = self.info
        for key in drop:
            info.pop(key, None)
        info.update(changes)
        self.emit(self.thread.refresh_info())

    def begin_turn(self, turn_id: str, origin: str = "user", label: str | None = None) -> None:
        """A turn with no message of the person's (the CLI's own, a take-up, a compaction)."""
        self.emit(self.thread.open_turn(turn_id, origin=origin, label=label))

    def add_user(self, turn_id: str, text: str, user_id: str, images: int = 0) -> None:
        self.emit(self.thread.add_user(turn_id, text, user_id, images))

    def note(self, level: str, text: str, turn_id: str | None = None) -> None:
        self.emit(self.thread.note(level, text, turn_id=turn_id))

    def upsert(self, item: dict) -> None:
        self.emit(self.thread.upsert(item))

    def process_gone(self) -> None:
        """The CLI ended: nothing runs, its background work went with it."""
        self.update_info(running=False)
        self.emit(self.thread.stop_background())

    def cancel_requests(self) -> None:
        self.emit(self.thread.cancel_requests())

    def turn_failed(self, reason: str) -> None:
        """The running turn failed for a reason outside it (its CLI died): a note, and the
        chat reads error until its next turn."""
        self.note("error", reason)
        self.thread.failed = True

    def enqueue(self, text: str, attachments: list[dict] | None = None, steering: bool = False) -> dict:
        """A message waits in the queue (``steering``: offered to the running turn meanwhile)."""
        message = q.enqueue(self.info, text, attachments)
        if steering:
            message["steering"] = True
        self.update_info()
        return message

    def unqueue(self, message_id: str) -> dict:
        message = q.take(self.info, message_id, self.chat_id)
        self.update_info()
        return message

    def to_front(self, message_id: str) -> None:
        q.to_front(self.info, message_id, self.chat_id)
        self.update_info()

    def queued(self, message_id: str) -> dict | None:
        return next((m for m in self.info["queue"] if m["id"] == message_id), None)

    def steer_taken(self, queued_id: str, turn_id: str) -> None:
        """A steered message was taken up by the running turn: out of the queue, into the turn."""
        message = self.queued(queued_id)
        self.info["queue"].remove(message)
        self.emit(self.thread.add_user(turn_id, message["text"], f"user-{queued_id}"))
        self.update_info()

    def steer_refused(self, queued_id: str) -> None:
        """A steered message the CLI did not take: it stays queued, unmarked, and the queue pauses."""
        self.queued(queued_id).pop("steering", None)
        self.update_info(queuePaused=True)

    def cli_retired(self) -> None:
        """The CLI was ended without its exit counting: no queued message is being steered
        any more, and nothing runs."""
        for message in self.info["queue"]:
            message.pop("steering", None)
        self.update_info(running=False)

    # ---- turns ---------------------------------------------------------------------------------

    def open_turn(self, turn_id: str, text: str, user_id: str | None = None, queued_id: str | None = None,
                  images: int = 0, attachments: list[dict] | None = None) -> None:
        info = self.info
        info["queuePaused"] = False  # anything dispatching resumes the queue
        if not info.get("suggestedTitle"):
            info["suggestedTitle"] = suggested_title(text)  # the first message names the chat
        self.emit(self.thread.open_turn(turn_id))
        self.emit(self.thread.add_user(turn_id, text, user_id, images,
                                       [files.public(a) for a in attachments or []]))
        if queued_id is not None:
            info["queue"] = [m for m in info["queue"] if m["id"] != queued_id]
            self.emit(self.thread.refresh_info())

    def finish_turn(self, state: str, process_gone: bool = False, limit: dict | None = None) -> None:
        if self.projector is not None and not process_gone and not (self.frozen or self.removed):
            # What the CLI lets run on past the turn becomes background work before the turn's
            # running tools are failed.
            self._apply(self.projector.turn_ending())
        cost = self.info["usage"].get("costUsd")
        # What was reported since the previous turn ended is this turn's (turns never overlap).
        turn_cost = round(cost - self._cost_mark, 6) if cost is not None else None
        self._cost_mark = cost or 0
        self.emit(self.thread.end_turn(state, cost=turn_cost, process_gone=process_gone, limit=limit))
        if state in ("aborted", "error"):
            self.info["queuePaused"] = True  # a stopped or failed turn pauses the queue (a limit holds it)

    def next_to_drain(self, explicit: bool, first: str | None = None) -> dict | None:
        """The message to send now, if any; ``first``: a queued message to go before the others."""
        if first is not None:
            q.to_front(self.info, first, self.chat_id)
        message = q.next_to_drain(self.info, self.thread.busy(), explicit)
        if message is not None:
            # The message is back at the head until its user item is logged: a crash in between
            # leaves it queued, never lost.
            self.info["queue"].insert(0, message)
        return message

    def settle_after_restart(self, resuming_on: bool) -> tuple[str, int] | None:
        """Loaded from disk: nothing of before streams, runs or waits. Returns (turn id,
        attempt) when the running turn is to be resumed; else it was aborted with a note."""
        self.emit(self.thread.settle_after_restart())
        turn = self.thread.active_turn()
        if turn is None or turn["state"] != "running":
            self.write_record()
            return None
        resume, reason, attempt = q.resume_decision(turn, self.info.get("agentSessionId"), resuming_on, self.info)
        if not resume:
            self.emit(self.thread.abort_interrupted(reason))
            self.emit(self.thread.set_info(queuePaused=True))  # a turn abandoned on restart pauses the queue
            self._log("turn.not-resumed", turn=turn["id"], reason=reason)
            self.write_record()
            return None
        self._log("turn.resume", turn=turn["id"], attempt=attempt)
        self.emit(self.thread.upsert({**turn, "attempt": attempt, "resumePending": True}))
        self.emit(self.thread.note("info", q.resume_words(self.info)[1], turn_id=turn["id"],
                                   item_id=f"resume-{turn['id']}-{attempt}"))
        self.write_record()  # the attempt is on disk before any process works on it
        return turn["id"], attempt

    def reset(self) -> None:
        info = self.info
        info.update(agentSessionId=None, running=False, activeTurnId=None, queue=[], queuePaused=False,
                    slashCommands=[], model=None)
        info.pop("limit", None)
        info.pop("resumeAt", None)
        for key in ("contextTokens", "contextWindow"):
            info["usage"].pop(key, None)  # a new conversation: nothing in its context yet
        self.emit(self.thread.reset())
        self.reset_seq = self.seq
        self.emit(self.thread.refresh_info())
        self.write_record()
        if self.bookmarks:
            self.set_bookmarks([])  # the items they marked are gone
        # And the messages that carried these: up to a folder of files, removed off the hub.
        on_threadpool(self.attachments.remove_chat, self.chat_id)

    # ---- events --------------------------------------------------------------------------------

    def _hold_delta(self, events: list[dict]) -> None:
        for event in events:
            out, started = self._joiner.add(event)
            for ready in out:
                self._log_and_send(ready)
            if started:
                self._flush_timer = call_later(DELTA_TICK, self._actor_ref, self.flush_delta)

    def flush_delta(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.kill(block=False)
            self._flush_timer = None
        for ready in self._joiner.flush():
            self._log_and_send(ready)

    def emit(self, events: list[dict]) -> None:
        if events:
            self.flush_delta()
        for event in events:
            self._log_and_send(event)

    def _log_and_send(self, event: dict) -> None:
        if self.removed:
            return
        self.seq += 1
        if self.store_error is None:
            try:
                line = self._store.line(self.seq, event)
                if len(line) > APPEND_ON_HUB:
                    size = on_threadpool(self._store.append_line, self.chat_id, line)
                else:
                    size = self._store.append_line(self.chat_id, line)
                if size > self._fold_at:
                    self.write_record(fold=True)
            except OSError:
                self.write_record()  # a line that did not reach disk is folded into the record
        self._tell_attached(ChatEvent(self.chat_id, event, self.seq))
        if event["type"] in ("info", "reset"):
            self.tell_registry()  # chat.list answers from the registry's copy
        if event["type"] in ("info", "reset") or event.get("item", {}).get("kind") in ("approval", "question"):
            self._status_changed()

    def _status_changed(self) -> None:
        signature = status_signature(self.info)
        if signature != self._last_signature:
            self._last_signature = signature
            self._clients.broadcast(ChatStatus(self.chat_id, self.info))

    def tell_registry(self) -> None:
        if self._registry is not None:
            # A copy: the thread goes on changing it.
            tell(self._registry, "on_info", self.chat_id, copy.deepcopy(self.info))

    def write_record(self, fold: bool = False) -> bool:
        """Writes the whole thread as the chat's record; False when the disk refused it (the
        chat then cannot be saved until a write of it takes: ``store_error``). A ``fold`` that
        fails loses nothing (the log still holds every event): it is tried again later."""
        if self.removed:
            return True
        for ready in self._joiner.flush():
            self._log_and_send(ready)  # the record must not hold text whose delta is not logged yet
        try:
            # fsync and rename on the hub's threadpool: file work never holds the hub.
            record = {**self.thread.snapshot(), "seq": self.seq, "resetSeq": self.reset_seq}
            size = on_threadpool(self._store.write_record, self.chat_id, record)
            # The log folds again once it is as large as the record it would be folded into:
            # a long chat is not rewritten whole for every FOLD_LOG_BYTES it grows.
            self._fold_at = max(FOLD_LOG_BYTES, size)
            self._record_size = size
        except OSError as exc:
            if fold and self.store_error is None:
                self._fold_at += FOLD_LOG_BYTES
                return False
            self._store_failed(exc)
            return False
        if self.store_error is not None:
            self._store_saved()
        return True

    def retry_store(self) -> bool:
        """Tries to save the chat whole again; True when it is saved (or was all along). A disk
        that has less free than the last record took is not tried: encoding a long chat for a
        write that cannot fit would cost the hub for nothing."""
        if self.store_error is None or self.removed:
            return True
        free = self._store.free_bytes()
        if (free is None or free >= self._record_size) and self.write_record():
            return True
        self._arm_store_retry()
        return False

    def _store_failed(self, exc: OSError) -> None:
        if self.store_error is not None:
            return  # said once: a chat that cannot be saved is not reported for every event
        self.store_error = write_failure.chat_not_saved(os.path.dirname(self._store.folder), exc)
        self.store_code = write_failure.code(exc)
        self._unsaved_from = self.seq
        where = exc.filename or self._store.folder
        self._log("error", kind="store", error=f"{exc.strerror or exc} ({where}); the events from seq {self.seq} "
                                               f"on are kept in memory until it can be saved")
        self._arm_store_retry()
        self._tell_store_changed()

    def _store_saved(self) -> None:
        self._log("store.saved", unsaved=f"{self._unsaved_from}..{self.seq}")
        self.store_error = None
        self._unsaved_from = None
        if self._store_retry is not None:
            self._store_retry.kill(block=False)
            self._store_retry = None
        self._tell_store_changed()

    def _tell_store_changed(self) -> None:
        # After the event being logged (a call to the chat's actor), not in the middle of it.
        if self._on_store_changed is not None:
            call(self._actor_ref, self._on_store_changed)

    def _arm_store_retry(self) -> None:
        if self._store_retry is not None:
            self._store_retry.kill(block=False)
        if not (self.frozen or self.removed):
            self._store_retry = call_later(STORE_RETRY_SECONDS, self._actor_ref, self.retry_store)

    def freeze(self) -> None:
        """Shutdown: the record is written as things stand; what a full disk still refuses
        is said in the log, since nothing will hold it after this."""
        self.frozen = True
        self.flush_delta()
        if self._store_retry is not None:
            self._store_retry.kill(block=False)
            self._store_retry = None
        if not self.write_record() and not self.removed:
            self._log("store.unsaved", unsaved=f"{self._unsaved_from}..{self.seq}")

    def remove(self) -> None:
        self.removed = True
        for timer in (self._flush_timer, self._store_retry):
            if timer is not None:
                timer.kill(block=False)
        self._attached.clear()
        on_threadpool(self._remove_files)  # a log and a folder of files: off the hub

    def _remove_files(self) -> None:
        self._store.remove(self.chat_id)
        self._bookmark_file.remove(self.chat_id)
        self.attachments.remove_chat(self.chat_id)

    def set_visuals(self, visuals: list[dict]) -> None:
        """The chat's visuals changed (VisualStore keeps them): the attached clients are told."""
        if self.removed:
            return
        self.visuals = visuals
        self._tell_attached(ChatVisuals(self.chat_id, visuals))

    def set_bookmarks(self, bookmarks: list[dict]) -> None:
        """Keeps the new list (on disk first) and tells the attached clients the whole of it."""
        if self.removed:
            return
        self._bookmark_file.save(self.chat_id, bookmarks)
        self.bookmarks = bookmarks
        self._tell_attached(ChatBookmarks(self.chat_id, bookmarks))

    def _tell_attached(self, message) -> None:
        for sink in list(self._attached.values()):
            sink.push(message)


def _log_after(path: str, since: int) -> list[dict]:
    return [line for line in read_log(path) if line["seq"] > since]


TITLE_CHARS = 80


def suggested_title(text: str) -> str | None:
    """A chat's name from its first message: its first line, without the page context a
    screenshot adds, cut on a word at TITLE_CHARS."""
    context = text.find("\n\n[Page context]\n")
    own = text if context < 0 else text[:context]
    if own.startswith("[Page context]\n"):
        own = ""
    line = collapsed(first_line(own.strip()), TITLE_CHARS)
    if not line:
        return None
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS - 1].rsplit(" ", 1)[0] or line[:TITLE_CHARS - 1]
    return cut.rstrip(" ,.;:") + "…"


def tool_subject(item: dict) -> str | None:
    """What a tool works on, for the log: a file's path or a command's folder, never more."""
    tool_input = item.get("input") if isinstance(item.get("input"), dict) else {}
    for key in ("file_path", "notebook_path", "path", "cwd"):
        if isinstance(tool_input.get(key), str):
            return tool_input[key]
    changes = item.get("changes")
    if isinstance(changes, list) and changes and isinstance(changes[0], dict):
        return changes[0].get("path")
    return None

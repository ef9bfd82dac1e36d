"""The durable face of a conversation: its thread of items, its queue, and their record on disk.

A plain object owned by the Chat actor (actors/chat/). It turns what happens in the chat
(a message opened, a CLI frame projected, a turn ended) into the chat core's events, and puts
every event in the chat's log before any client sees it; the record is rewritten when the log
grows past FOLD_LOG_BYTES, at a clear, and at shutdown. Text deltas to one item are joined for
DELTA_TICK before they go out (the thread itself always holds the whole text).

It owns the thread and its info: the Chat's controllers change them only through its methods
(``update_info`` for the info, ``enqueue``/``unqueue``/``to_front``/``steer_*`` for the queue,
``begin_turn``/``note``/``upsert``… for items), each of which logs and sends the events of the
change; they read ``thread`` and ``info`` freely. It also owns the projection of the running
CLI's items and the text deltas it holds back. Its parts own the rest, each changed only
through its methods: ``record`` (actors/durable_record.py: the log and the record on disk, the
seq, a chat that cannot be saved and its retry, frozen and removed), ``clients``
(actors/durable_clients.py: the attached clients, the status every client was told, the
registry), ``kept`` (actors/durable_kept.py: the bookmarks and visuals lists, the attachments)
and the tool log (actors/durable_tool_log.py: when each running tool started). The controllers
read the parts' fields (``durable.record.store_error``, ``durable.kept.bookmarks``). Its timers
(the delta flush; the record's retry) come back to their owner through the chat's actor
(actors/tell.py ``call_later``).
"""
from __future__ import annotations

import os

from actors import chatlog
from actors.core import attachments as files
from actors.core import queue as q
from actors.core.cuts import suggested_title
from actors.core.deltas import DeltaJoiner
from actors.core.history import page
from actors.core.thread import Thread, new_info
from actors.harness import provider_of as provider_id
from actors.durable_clients import CoreClients
from actors.durable_kept import KeptLists
from actors.durable_record import ChatRecord, replayed
from actors.durable_tool_log import ToolLog
from actors.guard import on_threadpool
from actors.harness import effects as fx
from actors.messages import ChatBookmarks, ChatVisuals
from actors.tell import call_later

DELTA_TICK = 0.016  # deltas to one item within this are joined into one event


def provider_of(harness) -> str:
    """The core's name of a harness (what chat.create takes): claude, codex, an ACP agent's id."""
    return provider_id(harness.HARNESS_ID)


class DurableFace:
    def __init__(self, *, chat_id: str, harness, cwd: str, model: str | None, runtime_mode: str, store, clients,
                 registry, actor_ref, stored=None, resume: str | None = None, imported: list | None = None,
                 log: chatlog.ChatLog | None = None, on_store_changed=None, workdir: str | None = None,
                 limit_resume: bool = False):
        self.chat_id = chat_id
        self._harness = harness
        self._log = log or chatlog.ChatLog(chat_id, harness.HARNESS_ID, cwd)
        self._tools = ToolLog(self._log)
        self._actor_ref = actor_ref  # the chat's own, for the delta flush timer
        self._joiner = DeltaJoiner()
        self._flush_timer = None
        self._unsent: list | None = None  # logged events not told yet (see _log_and_send)
        self.projector = None
        record, log_lines = stored if stored else (None, [])
        seq = reset_seq = 0
        if record or log_lines:
            info = (record or {}).get("info") or new_info(chat_id, provider_of(harness), cwd, model, runtime_mode)
            self.thread, seq, reset_seq = replayed(record, log_lines, info)
            # Saved when the disk had room again: this daemon finds out for itself.
            self.info.pop("storeError", None)
            self.fresh = False
        else:
            # A conversation the CLI saved before devhostd held it starts with its transcript.
            self.thread = Thread(new_info(chat_id, provider_of(harness), cwd, model, runtime_mode, resume), imported)
            first = next((item["text"] for item in imported or [] if item["kind"] == "user"), None)
            if first:
                self.info["suggestedTitle"] = suggested_title(first)
            self.fresh = True
        # A resumed conversation whose transcript devhostd could not read (an ACP agent's own
        # store): what its agent replays when it loads it becomes the first items (``earlier``).
        self._wants_earlier = bool(resume) and not imported and not (record or log_lines)
        self.record = ChatRecord(chat_id=chat_id, store=store, log=self._log, actor_ref=actor_ref,
                                 whole=self._whole, on_store_changed=on_store_changed, seq=seq, reset_seq=reset_seq)
        self.clients = CoreClients(chat_id=chat_id, clients=clients, registry=registry)
        self.kept = KeptLists(chat_id=chat_id, folder=os.path.dirname(store.folder))
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
        subscriber = self.clients.join(sink)
        seq = self.record.seq
        events = self.record.events_after(since) if since is not None and since <= seq else None
        if events is not None:
            return {"subscriber": subscriber, "info": self.info, "items": [], "seq": seq, "events": events,
                    "bookmarks": self.kept.bookmarks, "visuals": self.kept.visuals}
        # A page of the newest items reads only those (a chat of 10,000 items opens with its tail).
        items = self.thread.snapshot() if history_limit is None else \
            {"info": self.info, **page(self.thread.in_order(), self.record.reset_seq, None, history_limit)}
        return {"subscriber": subscriber, "seq": seq, **items, "pending": self.thread.pending_requests(),
                "bookmarks": self.kept.bookmarks, "visuals": self.kept.visuals}

    def detach(self, subscriber: int) -> None:
        self.clients.leave(subscriber)

    def history(self, cursor: str | None, limit: int) -> dict:
        self.flush_delta()
        return page(self.thread.in_order(), self.record.reset_seq, cursor, limit)

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
        context's use and window, an ACP agent's abilities, and the cost (a process's running total, added to the
        chat's from earlier processes). Nothing it did not report is set."""
        info, usage = self.info, self.info["usage"]
        before = (info.get("model"), list(info.get("slashCommands") or []), dict(usage), info.get("abilities"))
        if isinstance(facts.get("model"), str):
            info["model"] = facts["model"]
        if "slashCommands" in facts:
            info["slashCommands"] = list(facts["slashCommands"])
        for key in ("contextTokens", "contextWindow"):
            if key in facts:
                usage[key] = facts[key]
        if "costTotalUsd" in facts:
            usage["costUsd"] = round(self._cost_base + facts["costTotalUsd"], 6)
        if isinstance(facts.get("abilities"), dict):  # an ACP agent's, advertised and seen
            info["abilities"] = facts["abilities"]
        if (info.get("model"), list(info.get("slashCommands") or []), dict(usage), info.get("abilities")) != before:
            self.emit(self.thread.refresh_info())

    def project(self, ops: list[tuple], effects: list, native_id: str | None) -> bool:
        """Applies what the driver read in a CLI frame (its projection's operations, and its
        effects for whether the CLI took the prompt); True when what runs in the background
        changed (the session's record says how much does)."""
        if self.record.frozen or self.record.removed or self.projector is None:
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
                    self._tools.changed(self.thread.item(op[1]["id"]), op[1])
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
            elif op[0] == "native":
                self._native(op[1])
            elif op[0] == "resolved":
                for kind in ("approval", "question"):
                    item = self.thread.item(f"{kind}-{op[1]}")
                    field = "decision" if kind == "approval" else "state"
                    if item is not None and item.get(field) == "pending":
                        self.emit(self.thread.upsert({**item, field: "cancelled"}))
        return background_changed

    def _native(self, fields: dict) -> None:
        """The CLI's own ids of the running turn (its Codex turn id, the last Claude Code chain
        entry's uuid), kept on the turn item as ``native``: what a rewind of it, or of the turn
        after it, needs (actors/harness/rewind.py). An unchanged value sends nothing."""
        turn = self.thread.active_turn()
        if turn is None:
            return
        native = {**(turn.get("native") or {}), **fields}
        if native != turn.get("native"):
            self.emit(self.thread.upsert({**turn, "native": native}))

    def earlier(self, items: list[dict]) -> bool:
        """The conversation as its agent replayed it on loading: taken, before whatever the
        person sent meanwhile, by a chat made for resuming it (True), once; any other chat holds
        it already, and a replay after the first (a CLI let go and started again) is the same."""
        if not self._wants_earlier or self.record.frozen or self.record.removed:
            return False
        self._wants_earlier = False
        if not items:
            return False
        first = next((item["text"] for item in items if item["kind"] == "user"), None)
        if first:
            # The conversation's first message names the chat (not the one sent meanwhile); the
            # reset event carries the info.
            self.info["suggestedTitle"] = suggested_title(first)
        self.emit(self.thread.prepend(items))
        self.record.mark_reset()  # what was there moved after them: cursors of before expire
        self.write_record()
        return True

    def running_tools(self) -> list[str]:
        """The names of the tools running now (for the heartbeat)."""
        return [str(self.thread.item(item_id).get("name")) for item_id in self._tools.running()
                if self.thread.has(item_id)]

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

    def add_user(self, turn_id: str, text: str, user_id: str, images: int = 0, references: dict | None = None) -> None:
        self.emit(self.thread.add_user(turn_id, text, user_id, images, references=references))

    def note(self, level: str, text: str, turn_id: str | None = None, item_id: str | None = None) -> None:
        self.emit(self.thread.note(level, text, turn_id=turn_id, item_id=item_id))

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
        self.thread.mark_failed()

    def enqueue(self, text: str, attachments: list[dict] | None = None, steering: bool = False,
                references: dict | None = None) -> dict:
        """A message waits in the queue (``steering``: offered to the running turn meanwhile)."""
        message = q.enqueue(self.info, text, attachments, references)
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
                  images: int = 0, attachments: list[dict] | None = None, references: dict | None = None) -> None:
        info = self.info
        info["queuePaused"] = False  # anything dispatching resumes the queue
        if not info.get("suggestedTitle"):
            info["suggestedTitle"] = suggested_title(text)  # the first message names the chat
        self.emit(self.thread.open_turn(turn_id))
        self.emit(self.thread.add_user(turn_id, text, user_id, images,
                                       [files.public(a) for a in attachments or []], references))
        if queued_id is not None:
            info["queue"] = [m for m in info["queue"] if m["id"] != queued_id]
            self.emit(self.thread.refresh_info())

    def finish_turn(self, state: str, process_gone: bool = False, limit: dict | None = None) -> None:
        if self.projector is not None and not process_gone and not (self.record.frozen or self.record.removed):
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

    def rewind_to(self, turn_id: str) -> None:
        """The thread back to before ``turn_id`` (a rewind): cursors of before expire, as after a clear."""
        self.emit(self.thread.rewind_to(turn_id))
        self.record.mark_reset()
        self.emit(self.thread.refresh_info())
        self.write_record()
        kept = [mark for mark in self.kept.bookmarks if self.thread.has(mark.get("itemId"))]
        if kept != self.kept.bookmarks:
            self.set_bookmarks(kept)  # the items they marked are gone

    def reset(self) -> None:
        info = self.info
        info.update(agentSessionId=None, running=False, activeTurnId=None, queue=[], queuePaused=False,
                    slashCommands=[], model=None)
        info.pop("limit", None)
        info.pop("resumeAt", None)
        for key in ("contextTokens", "contextWindow"):
            info["usage"].pop(key, None)  # a new conversation: nothing in its context yet
        self.emit(self.thread.reset())
        self.record.mark_reset()
        self.emit(self.thread.refresh_info())
        self.write_record()
        if self.kept.bookmarks:
            self.set_bookmarks([])  # the items they marked are gone
        # And the messages that carried these: up to a folder of files, removed off the hub.
        on_threadpool(self.kept.remove_attachments)

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
        # On disk before any client sees it. A fold logs the held text first, nested here under
        # later seqs: what is logged meanwhile waits, so clients get every event in seq order.
        outermost = self._unsent is None
        self._unsent = [] if outermost else self._unsent
        try:
            seq = self.record.log(event)
            if seq is not None:
                self._unsent.append((seq, event))
        finally:
            if outermost:
                unsent, self._unsent = sorted(self._unsent, key=lambda pair: pair[0]), None
                for seq, logged in unsent:
                    self.clients.event(logged, seq, self.info)

    def _whole(self) -> dict:
        """The thread as the record holds it (the record's ``whole``): the text held back is
        logged first, so the record never holds text whose delta is not logged yet."""
        for ready in self._joiner.flush():
            self._log_and_send(ready)
        return self.thread.snapshot()

    # ---- the record (the record's own) ----------------------------------------------------------

    def write_record(self) -> bool:
        """Writes the whole thread as the chat's record; False when the disk refused it."""
        return self.record.write()

    def freeze(self) -> None:
        """Shutdown: the held text is logged and the record written as things stand."""
        self.flush_delta()
        self.record.freeze()

    def remove(self) -> None:
        self.record.remove()
        if self._flush_timer is not None:
            self._flush_timer.kill(block=False)
        self.clients.leave_all()
        on_threadpool(self._remove_files)  # a log and a folder of files: off the hub

    def _remove_files(self) -> None:
        self.record.remove_files()
        self.kept.remove_files()

    # ---- what the chat keeps beside its thread (the kept lists' own) -----------------------------

    def set_visuals(self, visuals: list[dict]) -> None:
        """The chat's visuals changed (VisualStore keeps them): the attached clients are told."""
        if self.record.removed:
            return
        self.kept.keep_visuals(visuals)
        self.clients.tell(ChatVisuals(self.chat_id, visuals))

    def set_bookmarks(self, bookmarks: list[dict]) -> None:
        """Keeps the new list (on disk first) and tells the attached clients the whole of it."""
        if self.record.removed:
            return
        self.kept.keep_bookmarks(bookmarks)
        self.clients.tell(ChatBookmarks(self.chat_id, bookmarks))

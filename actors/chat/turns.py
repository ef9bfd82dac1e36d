"""The turns of a chat: what the chat core sends, queues, steers and stops (actors/chat/actor.py).

A controller of the Chat actor. It owns the chat core's bookkeeping of what it sent: the steers
in flight (the native message id of each, and the ``chat.send`` waiting on its answer), the
queued message a ``sendNow`` sends once the stop lands, whether a stop was asked, and the model
``chat.configure`` chose for the next message. The queue itself is the durable face's (its
methods change it); the rules are actors/core/queue.py's.
"""
from __future__ import annotations

import base64
import dataclasses
import os
import uuid

import gevent
import gevent.event

from actors import chatlog
from actors.cli_link_sends import CORE
from actors.core import attachments as files
from actors.core import background
from actors.core import queue as q
from actors.core import references as refs
from actors.core.thread import host_id
from actors.errors import ChatError
from actors.guard import on_threadpool
from actors.harness import effects as fx
from actors.messages import Send
from storage import write_failure


class Turns:
    def __init__(self, chat):
        self._chat = chat
        self._pending_model = None  # a model chat.configure chose, for the next message
        self._steers: dict[str, str] = {}  # native message id of a steer -> its queued message id
        self._steer_answers: dict[str, gevent.event.AsyncResult] = {}  # queued id -> what chat.send answers
        self._advance_after_stop: str | None = None  # sendNow's message, once the stop lands
        self._stop_requested = False

    def choose_model(self, model: str) -> None:
        self._pending_model = model

    # ---- the core's sends ----------------------------------------------------------------------

    def core_send(self, text: str, delivery: str | None, uploads: list | None, references: dict | None = None) -> dict:
        """``references``: {mentions?, skills?, chats?, context?} (the edge read the other chats'
        context); each mention and skill is checked here, before anything is kept or queued."""
        chat = self._chat
        durable = chat.durable
        if not chat.session.saved_or_saving():
            raise ChatError(durable.record.store_code, f"Not sent: {durable.record.store_error}")
        gone = chat.session.account_gone()
        if gone:
            raise ChatError("bad-request", gone[0].upper() + gone[1:])
        references = {k: v for k, v in (references or {}).items() if v} or None
        if references:
            on_threadpool(refs.resolve_mentions, chat.link.root, references.get("mentions") or [])
            chat.skills.pick(references.get("skills") or [])
            delivery = None if delivery == "steer" else delivery  # a message with references is a turn of its own
        chat.session.reopen_if_closed()  # a message from the core opens a closed session again
        chat.take_up.lapse()  # the person goes on: no take-up of the limited turn
        # Written before anything is queued (off the hub: up to 10 MiB).
        try:
            stored = on_threadpool(durable.kept.attachments.save, chat.chat_id, uploads) if uploads else []
        except OSError as exc:
            folder = os.path.dirname(durable.kept.attachments.root)
            raise ChatError(write_failure.code(exc), write_failure.attachments_not_saved(folder, exc)) from None
        if stored:
            delivery = None if delivery == "steer" else delivery  # a message with files is a turn of its own
        busy, info = durable.thread.busy(), durable.info
        if chat.swap.waits():
            # Not steered into, nor sent to, a process whose settings are going away: it waits
            # in the queue for the swap (actors/chat/swap.py), which sends it.
            message = durable.enqueue(text, stored, references=references)
            chat.swap.held()
            return {"queued": True, "turnId": message["turnId"]}
        if delivery == "steer" and busy and not info["queuePaused"] and not text.startswith("/"):
            # Offered to the running turn through the CLI's own input; it waits in the queue
            # (marked) until the CLI shows it took it up, and stays there if it does not.
            message = durable.enqueue(text, steering=True)
            command_id = str(uuid.uuid4())
            self._steers[command_id] = message["id"]
            # Answered once the CLI took it up or refused it (the web edge waits on this).
            self._steer_answers[message["id"]] = answer = gevent.event.AsyncResult()
            self._core_write(Send(command_id, text, None))
            return {"queued": True, "turnId": message["turnId"], "steered": answer}
        if q.must_queue(info, busy):
            message = durable.enqueue(text, stored, references=references)
            if info["queuePaused"] and not busy:
                self._drain(explicit=True)  # an explicit send resumes the queue, in order
            elif info["queuePaused"] and self._stop_requested:
                self._advance_after_stop = message["id"]  # a send during a stop goes once it lands
            return {"queued": True, "turnId": message["turnId"]}
        turn_id = host_id("turn")
        self._open_and_send(turn_id, text, attachments=stored, references=references)
        return {"queued": False, "turnId": turn_id}

    def unqueue(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        message = self._chat.durable.unqueue(message_id)
        if self._advance_after_stop == message_id:
            self._advance_after_stop = None
        return {"message": message}

    def send_now(self, message_id: str) -> dict:
        self._refuse_if_steering(message_id)
        self._chat.take_up.lapse()
        self._chat.durable.to_front(message_id)
        if self._chat.durable.thread.busy():
            self._advance_after_stop = message_id
            self._stop_turn()
        else:
            self._drain(explicit=True)
        return {}

    def cancel(self) -> None:
        self._chat.take_up.lapse()
        self._chat.durable.update_info(queuePaused=True)
        if self._chat.durable.thread.busy():
            self._stop_turn()

    def compact(self) -> dict:
        chat = self._chat
        if chat.durable.thread.busy():
            raise ChatError("chat-busy", f"Chat {chat.chat_id} is still working on the previous message")
        chat.session.reopen_if_closed()
        chat.durable.begin_turn(host_id("turn"))
        if chat.harness.HARNESS_ID == "codex":
            chat.link.compact()  # Codex folds natively (thread/compact/start), as a turn of its own
            chat.publish()
            return {}
        # Claude Code folds by prompt: /compact runs as a turn of its own.
        self.send_to_cli("/compact")
        return {}

    def settle_after_restart(self, resuming_on: bool) -> None:
        """Loaded from disk: the running turn is resumed on the CLI's conversation, or aborted."""
        if self._chat.durable.settle_after_restart(resuming_on) is not None:
            self.send_to_cli(q.resume_words(self._chat.durable.info)[0])

    def _refuse_if_steering(self, message_id: str) -> None:
        if any(m["id"] == message_id and m.get("steering") for m in self._chat.durable.info["queue"]):
            raise ChatError("request-not-found", f"Queued message {message_id} is being steered into the turn")

    def _open_and_send(self, turn_id: str, text: str, user_id: str | None = None,
                       queued_id: str | None = None, attachments: list[dict] | None = None,
                       references: dict | None = None) -> None:
        self._chat.durable.open_turn(turn_id, text, user_id, queued_id, attachments=attachments,
                                     references=references)
        self.send_to_cli(text, attachments, references)

    def _for_cli(self, references: dict) -> tuple[tuple, tuple]:
        """(skills, mentions) of a message as its CLI takes them. Checked when it was sent; one
        gone since it waited in the queue is left out, never the message."""
        mentions, skills = [], []
        for mention in references.get("mentions") or []:
            try:
                mentions += on_threadpool(refs.resolve_mentions, self._chat.link.root, [mention])
            except ChatError:
                continue
        for name in references.get("skills") or []:
            try:
                skills += self._chat.skills.pick([name])
            except ChatError:
                continue
        return tuple(skills), tuple(mentions)

    def send_to_cli(self, text: str, attachments: list[dict] | None = None, references: dict | None = None) -> None:
        """The message as the CLI gets it: images as images, other files named with their path;
        other chats' context first, skills and mentioned files as the CLI's own (its driver)."""
        model, self._pending_model = self._pending_model, None
        images = []
        for attachment in attachments or []:
            if files.is_image(attachment):
                try:
                    content = gevent.get_hub().threadpool.apply(self._chat.durable.kept.attachments.read, (attachment,))
                except OSError:
                    continue  # gone from disk: the message goes without it, never not at all
                images.append((attachment["mime"], base64.b64encode(content).decode()))
        said = files.message_text(text, attachments or [])
        skills, mentions = self._for_cli(references) if references else ((), ())
        if references and references.get("context"):
            said = refs.with_context(said, [references["context"]])
        self._core_write(Send(str(uuid.uuid4()), said, model, tuple(images), skills=skills, mentions=mentions))

    def _core_write(self, command: Send) -> None:
        # The same path as a page's send (one process, acknowledgements, history); the core's
        # own queue is what matters, so the result only feeds the steer bookkeeping.
        chat = self._chat
        chat.session.reopen_if_closed()
        if not chat.link.running:
            chat.link.start()
        chat.link.send(CORE, command, self.telling_what_stopped(command.text, ""))
        chat.publish()

    def telling_what_stopped(self, text: str, prompt: str) -> str:
        """The devhost section a message goes with: once, after a CLI's end stopped background
        work, a note naming it first (the agent may be waiting for it), then the prompt."""
        durable = self._chat.durable
        stopped = durable.info.get("backgroundStopped")
        if not stopped or not text.strip():
            return prompt  # (a message of images alone carries no section: the next one says it)
        durable.update_info(drop=("backgroundStopped",))
        self._chat.log("background.told", stopped=len(stopped))
        told = background.note(stopped)
        return f"{told}\n\n{prompt}" if prompt else told

    # ---- what the link tells -------------------------------------------------------------------

    def page_references(self, command: Send) -> Send:
        """A page's send whose ``mentions`` (paths relative to the checkout) become the real paths,
        and whose skills (names) the skills found, that the driver writes as the CLI's own file
        references and skills; one outside the checkout, missing or unknown is refused (ChatError)
        with what to change."""
        found = on_threadpool(refs.resolve_mentions, self._chat.link.root, list(command.mentions))
        skills = self._chat.skills.pick([name for name, _ in command.skills])
        return dataclasses.replace(command, mentions=found, skills=skills)

    def dispatched(self, origin, command: Send) -> None:
        durable = self._chat.durable
        if origin != CORE and command.model is not None:
            # A page's model choice is the chat's too: it is kept, and used after a restart.
            durable.update_info(selection={**durable.info["selection"], "model": command.model or None})
        if origin != CORE and not durable.record.frozen:
            # A page's message is a turn of the thread too (or joins the one running).
            # Named by the command id, so the page that sent it finds its message among the items.
            user_id, images = f"user-{command.command_id}", len(command.images)
            top = os.path.realpath(self._chat.link.root)  # the item names them as the page did: relative
            references = {"mentions": [os.path.relpath(p, top) for p in command.mentions],
                          "skills": [name for name, _ in command.skills]}
            turn = durable.thread.active_turn()
            if turn is not None and turn["state"] == "running":
                durable.add_user(turn["id"], command.text, user_id, images, references)
            else:
                self._chat.take_up.lapse()
                durable.open_turn(host_id("turn"), command.text, user_id, images=images, references=references)

    def cli_turn_started(self) -> None:
        """The CLI started a turn by itself (to report on background work): a turn of the
        thread too, with no message of the person's."""
        durable = self._chat.durable
        if not durable.record.frozen and not durable.thread.busy():
            durable.begin_turn(host_id("turn"), origin="cli")

    def result(self, origin, command_id: str, delivery: str | None, error: str | None) -> None:
        if origin != CORE:
            self._chat.native.answer(origin, command_id, delivery, error)
        elif error is not None:
            self.evidence(command_id, "error")  # a core message refused: its steer settles

    def evidence(self, message_id: str, delivery: str) -> None:
        """What became of a steered message: taken up -> a user item of the running turn; refused or
        lost -> it stays queued, unmarked, and the queue pauses (never lost, never sent twice)."""
        queued_id = self._steers.get(message_id)
        if queued_id is None:
            return
        durable = self._chat.durable
        message = durable.queued(queued_id)
        if message is None:
            self._steers.pop(message_id, None)
            return
        if delivery == "started":
            self._steers.pop(message_id, None)
            turn_id = durable.info.get("activeTurnId") or message["turnId"]
            durable.steer_taken(queued_id, turn_id)
            self._answer_steer(queued_id, {"queued": False, "turnId": turn_id})
        elif delivery in ("error", "unconfirmed", "settled"):
            self._steers.pop(message_id, None)
            durable.steer_refused(queued_id)
            self._answer_steer(queued_id, {"queued": True, "turnId": message["turnId"]})

    def not_sent(self, origin, command_id: str, reason: str) -> None:
        """The CLI dropped a page's message unsent (a follow-up an interrupt cancelled): its user
        item says so (``notSent``), so every page, also after a reload, shows it was never sent
        and offers it again. A core message is the queue's: it stays queued (``evidence``)."""
        durable = self._chat.durable
        item = durable.thread.item(f"user-{command_id}")
        if origin != CORE and item is not None and not durable.record.frozen:
            durable.upsert({"id": item["id"], "kind": "user", "notSent": reason})

    def _answer_steer(self, queued_id: str, answer: dict) -> None:
        waiting = self._steer_answers.pop(queued_id, None)
        if waiting is not None:
            waiting.set(answer)

    def turn_ended(self, effect: fx.TurnEnded) -> None:
        chat = self._chat
        durable = chat.durable
        if durable.record.frozen:
            return
        if chat.link.turn_active and durable.thread.busy():
            return  # the CLI goes on with more of the same turn
        if not durable.thread.busy():
            return  # nothing of the thread runs (its turn was stopped here already)
        state = "aborted" if effect.interrupted else ("error" if effect.error else "done")
        if effect.error and not effect.limit:  # a limit's words are on its turn (limit.message)
            durable.note("error", effect.error)
        if effect.limit:
            chat.log("turn.limit", turn=chat.log.turn, kind=effect.limit["kind"], window=effect.limit.get("window"),
                     resets=chatlog.iso_ms(effect.limit.get("resetsAt")))
        self._finish_turn(state, limit=effect.limit)
        if effect.limit:
            chat.take_up.owe()

    def after_exit(self, reason: str) -> None:
        """The CLI ended on its own or for a fault: its running turn failed with ``reason``."""
        durable = self._chat.durable
        if durable.record.frozen or durable.record.removed:
            return
        durable.process_gone()
        if durable.thread.busy():
            durable.turn_failed(reason)
            self._finish_turn("error", process_gone=True)
        elif durable.thread.pending_requests():
            durable.cancel_requests()

    # ---- stopping ------------------------------------------------------------------------------

    def stop_for_store(self) -> None:
        """The chat cannot be saved: its running turn is stopped (once)."""
        if self._chat.durable.thread.busy() and not self._stop_requested:
            self._stop_turn()

    def forget_stop(self) -> None:
        """A closed session's CLI ended: nothing goes out after the stop."""
        self._advance_after_stop = None
        self._stop_requested = False

    def _stop_turn(self) -> None:
        self._stop_requested = True
        if not self._chat.link.stop_turn():
            # No process holds the turn yet (still starting, or its turn never got an id): the
            # process is ended so nothing of the turn goes on, and the turn ends here.
            self.retire_cli()
            self._finish_turn("aborted")

    def retire_cli(self) -> None:
        """Ends the CLI without its exit counting against the chat (clear starts over)."""
        chat = self._chat
        chat.link.retire("not delivered: the chat's CLI was ended")
        self._steers.clear()
        for queued_id in list(self._steer_answers):
            message = chat.durable.queued(queued_id)
            self._answer_steer(queued_id, {"queued": True, "turnId": message["turnId"] if message else None})
        chat.durable.cli_retired()
        chat.publish()

    def _finish_turn(self, state: str, process_gone: bool = False, limit: dict | None = None) -> None:
        durable = self._chat.durable
        turn_id = durable.info.get("activeTurnId")
        durable.finish_turn(state, process_gone, limit=limit)
        self._chat.checkpoints.turn_finished(turn_id)  # what it changed, before the next turn's snapshot
        self._stop_requested = False
        chosen, self._advance_after_stop = self._advance_after_stop, None
        if chosen is not None and durable.queued(chosen) is not None:
            self._drain(explicit=True, first=chosen)
        else:
            self._drain()
        durable.update_info()

    def drain(self) -> None:
        """The queue's head goes out, if it may (after a settings swap let it)."""
        self._drain()

    def _drain(self, explicit: bool = False, first: str | None = None) -> None:
        if self._chat.swap.waits():
            if self._chat.durable.info["queue"]:
                self._chat.swap.held()  # the queue goes on once the swap is done
            return
        message = self._chat.durable.next_to_drain(explicit, first)
        if message is not None:
            self._open_and_send(message["turnId"], message["text"], user_id=f"user-{message['id']}",
                                queued_id=message["id"], attachments=message.get("attachments"),
                                references=message.get("references"))

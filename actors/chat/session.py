"""The session of a chat: open or closed, its error, its settings, its end (actors/chat/actor.py).

A controller of the Chat actor. It owns whether the Chat-API session is open, the session's
error (the last turn's failure, or why the CLI stopped), why devhost is ending a faulty CLI, a
history that could not be written, and whether the person was told the chat cannot be saved.
It closes, reopens, clears and kills the chat, applies ``chat.configure``, and settles what a
CLI's end leaves (a closed session's, or a failed one's).
"""
from __future__ import annotations

import os

from actors.core import limits
from actors.harness import rewind
from actors.core.thread import now_ms
from actors.errors import ChatError
from actors.durable_face import provider_of
from actors.session_rules import exit_reason
from storage.accounts import change_refusal, home_of, unknown_account
from storage import write_failure
from storage.history import HistoryWriteError

HISTORY_BROKEN = ("not sent: the session's event history could not be written, so devhost stopped its CLI; "
                  "close the session and resume it")


def rewind_note(answer: dict, why: str | None) -> str:
    """What a rewind did, in the words the person reads under the conversation."""
    files = ("no file had changed" if answer["files"] == "reverted" and not answer["reverted"] else
             f"{len(answer['reverted'])} file(s) put back as they were" if answer["files"] == "reverted" else
             "the files were left as they are (that turn has no checkpoint)")
    said = ("the agent's conversation goes on from before that turn" if answer["conversation"] == "rewound" else
            f"the agent still remembers the later turns ({why})" if why else
            "the agent still remembers the later turns")
    return f"Rewound to before that turn: {files}; {said}."


class Session:
    def __init__(self, chat, open_session: bool):
        self._chat = chat
        self.open = open_session  # a Chat-API session is open (not closed)
        self.error = None  # the last turn's failure, or why the CLI stopped: the session's error
        self._cli_fault = None  # why devhost is ending the current CLI, when the CLI itself failed
        self.history_broken = False
        self._told_unsaved = False  # the person was told the chat cannot be saved (and not yet that it is)
        self._rewinding = ...  # None while a rewind waits for the link's word; then (ok, message)

    # ---- the session's error -------------------------------------------------------------------

    def cli_started(self) -> None:
        self._cli_fault = None

    def went_on(self) -> None:
        """A message went out: the error of before is over."""
        self.error = None

    def failed(self, reason: str) -> None:
        self.error = reason

    def refuses_sends(self) -> str | None:
        """Why a page's send is refused now, or None."""
        if not self.open:
            return "this session is closed; resume it to continue"
        if self.history_broken:
            return HISTORY_BROKEN
        if not self.saved_or_saving():
            return f"not sent: {self._chat.durable.record.store_error}"
        return self.account_gone()

    def account_gone(self) -> str | None:
        """Why nothing can be sent while the chat's account is no longer in the manifest: its CLI
        would read another home (another login, without this conversation)."""
        chat = self._chat
        name, provider = chat.durable.info.get("account"), provider_of(chat.harness)
        if name is None or home_of(chat.accounts(), provider, name, os.environ) is not None:
            return None
        return (f"not sent: this chat runs under the {provider} account '{name}', which the manifest no longer "
                f"names; add [accounts.{provider}.{name}] back, or configure the chat's `account`")

    # ---- open and closed -----------------------------------------------------------------------

    def close(self, code: int) -> dict:
        chat = self._chat
        if code != 1001:
            # Closed on request: a take-up owed after a usage limit is cancelled, or it would
            # open the session again by itself. The daemon stopping keeps it for the next start.
            chat.take_up.lapse()
        if self.open:
            self.open = False
            chat.link.abandon("the session was closed before the CLI took the message")
            chat.log("session.close", native=chat.link.native_id)
            chat.publish()
            chat.link.stop()
        chat.native.close_sockets(code)  # sockets that attached to read a closed session's history too
        return chat.record()

    def reopen(self, session_id: str) -> dict:
        """A closed session resumed through the Chat API: a new session id, the same chat (its
        items, its history), the CLI resumed on its own saved conversation."""
        chat = self._chat
        if self.open:
            raise ChatError("conflict", f"that conversation is already open in session {chat.native.session_id}; "
                                        "attach to it instead")
        chat.native.reopened_as(session_id)
        self.reopen_if_closed()
        chat.log("session.resume", session=session_id, project=chat.link.root, native=chat.link.native_id)
        if not chat.link.running:
            chat.link.start()
        chat.publish()
        return chat.record()

    def reopen_if_closed(self) -> None:
        if self.open:
            return
        chat = self._chat
        self.open = True
        self.error = None
        if self.history_broken:
            # The session's history could not be written: the session opened again gets a
            # fresh one (what the broken one held is gone with it).
            chat.native.new_history()
            self.history_broken = False
        if chat.link.running:
            # The CLI of the closed session is still ending: let it end under its own serial
            # (its exit no longer counts), then settle what it held.
            chat.link.retire("the session was closed before the CLI took the message")
            self._after_close()

    def configure(self, model, runtime_mode, resume_at_reset, restart_words, plan=None, account=...) -> dict:
        """A new model or runtime mode holds from the next turn at the latest (the mode at once
        where the running CLI can take it); the conversation goes on. ``restart_words``
        (endedAt, unownedReason, resumeWords; None values remove) say how a restart treats it.
        ``account`` (``...``: kept) is checked first: a refusal changes nothing."""
        chat = self._chat
        info = chat.durable.info
        if account is not ...:
            self._check_account(account)
        if plan and not chat.harness.PLAN_MODE:
            raise ChatError("bad-request", f"{chat.harness.LABEL} has no plan mode that keeps it from editing: "
                                           "pick supervised to approve every step instead")
        changes = {key: value for key, value in (restart_words or {}).items() if value is not None}
        drop = tuple(key for key, value in (restart_words or {}).items() if value is None)
        if model is not None:
            changes["selection"] = {**info["selection"], "model": model or None}
            chat.turns.choose_model(model)
        if runtime_mode is not None or plan is not None:
            chat.link.set_mode(runtime_mode, plan)
            chat.swap.asked()
            changes["runtimeMode"] = chat.link.runtime_mode
            changes["effectiveRuntimeMode"] = chat.link.effective_mode
            if plan:
                changes["permissionMode"] = "plan"  # the seed's field: the CLI plans, nothing changes
            elif plan is False:
                drop += ("permissionMode",)
            chat.publish()  # the session's record carries both modes
        if resume_at_reset is not None:
            changes["resumeAtReset"] = resume_at_reset
        if account is not ...:
            changes["account"] = account
            chat.link.set_account(account)  # a running CLI is started anew (the settings swap)
            chat.swap.asked()
            chat.account_picked(account)
        chat.durable.update_info(drop=drop, **changes)
        if account is not ...:
            chat.publish()  # the session's record names its account
        if resume_at_reset is not None and not resume_at_reset:
            chat.take_up.lapse()
        elif resume_at_reset and "resumeAt" not in info and limits.owed_when_switched_on(info.get("limit"), now_ms()):
            chat.take_up.owe()
        return info

    def _check_account(self, name) -> None:
        """Refuses an account the manifest does not name (bad-request, naming those it does), and
        one that cannot read the conversation the chat already has (account-incompatible)."""
        chat = self._chat
        provider, accounts = provider_of(chat.harness), chat.accounts()
        to_home = home_of(accounts, provider, name, os.environ)
        if to_home is None:
            raise ChatError("bad-request", unknown_account(accounts, provider, name))
        before = chat.durable.info.get("account")
        refusal = change_refusal(provider, before, home_of(accounts, provider, before, os.environ), name, to_home,
                                 self._has_conversation())
        if refusal:
            raise ChatError("account-incompatible", refusal)

    def _has_conversation(self) -> bool:
        """Whether the CLI keeps a conversation of this chat in its account's home: after a turn,
        a message, or once the CLI named its session (a resumed one, a started Codex thread)."""
        durable = self._chat.durable
        return bool(durable.info.get("agentSessionId")) or any(
            item.get("kind") in ("user", "turn") for item in durable.thread.items.values())

    # ---- the CLI's end -------------------------------------------------------------------------

    def end_faulty_cli(self, reason: str) -> None:
        """The CLI cannot go on (it never got ready, stopped reading, broke its protocol): every
        send is answered with ``reason`` and the CLI is ended; its exit then reads as one (the
        session ``error`` with this reason, the turn failed) and the next message starts the CLI
        again on its own conversation. The first fault is the one said."""
        self._cli_fault = self._cli_fault or reason
        self.error = self._cli_fault
        self._chat.link.end_for_fault(reason)

    def cli_exited(self, code, stderr_tail: str) -> None:
        """The current CLI ended (the link forgot its requests and its turn already)."""
        chat = self._chat
        if not self.open:
            chat.log("session.ended", code=code)
            self._after_close()
            chat.release_if_idle()
            return
        # Ended by devhost for a fault of its own (logged then): that fault says why, its exit
        # says only the signal that ended it.
        fault, self._cli_fault = self._cli_fault, None
        reason = fault or exit_reason(chat.harness.LABEL, code, stderr_tail)
        if fault is None:
            chat.log("error", kind="process", error=reason)
        chat.link.fail_sends(reason)
        if not self.history_broken:
            self.error = reason  # the next message starts the CLI again on its own conversation
        chat.turns.after_exit(reason)
        chat.publish()
        chat.release_if_idle()

    def _after_close(self) -> None:
        """The CLI of a closed session ended: the thread's turn was stopped, not failed, and
        nothing queued goes out (a closed session sends nothing until it is opened again)."""
        durable = self._chat.durable
        if durable.record.frozen or durable.record.removed:
            return  # at shutdown the running turn stays running on disk, for the next start
        self._chat.turns.forget_stop()
        durable.process_gone()
        if durable.thread.busy():
            durable.finish_turn("aborted", process_gone=True)  # finish_turn pauses the queue
            durable.update_info()
        elif durable.thread.pending_requests():
            durable.cancel_requests()

    # ---- what could not be written -------------------------------------------------------------

    def store_history(self, raws: list[bytes]) -> bool:
        """Stores CLI frames in the session's history; False (and the CLI stopped, everyone
        told) when the history could not be written."""
        chat = self._chat
        try:
            chat.native.store(raws)
        except HistoryWriteError as exc:
            self.history_broken = True
            self.error = f"{exc}; devhost stopped the session's CLI rather than lose events"
            chat.log("error", kind="history", error=str(exc))
            chat.link.abandon(self.error)
            chat.link.terminate()
            chat.native.tell_everyone(self.error)
            chat.publish()
            return False
        return True

    def saved_or_saving(self) -> bool:
        """Whether the chat is saved, after one more try when it was not: a message goes out
        only to a chat whose items reach the disk."""
        durable = self._chat.durable
        if durable.record.store_error is None:
            return True
        if durable.record.retry():
            self.store_changed()  # the person hears it is saved before their message goes on
            return True
        return False

    def store_changed(self) -> None:
        """The chat could not be saved, or is saved again (durable.record.store_error says which). Like a
        history that cannot be written: the turn is stopped and the person is told what happened
        and what to do, on the panel (an error note, the session's error) and on the core (the
        note, info.storeError and status error in chat.status). Unlike it, nothing is lost: the
        thread in memory is saved whole once the disk takes it."""
        chat = self._chat
        durable = chat.durable
        if durable.record.frozen or durable.record.removed:
            return
        words = durable.record.store_error
        if words is not None and not self._told_unsaved:
            self._told_unsaved = True
            chat.link.refuse_queued(f"not sent: {words}")
            durable.note("error", words)
            durable.update_info(storeError=words, queuePaused=True)  # nothing drains meanwhile
            chat.turns.stop_for_store()
            chat.native.tell_everyone(words, item_readers=False)  # thread sockets have the note
            chat.publish()
        elif words is None and self._told_unsaved:
            self._told_unsaved = False
            durable.note("info", write_failure.SAVED_AGAIN)
            durable.update_info(drop=("storeError",))
            chat.native.tell_everyone(write_failure.SAVED_AGAIN, item_readers=False)
            chat.publish()

    # ---- clear and kill ------------------------------------------------------------------------

    def clear(self, force: bool) -> dict:
        chat = self._chat
        if chat.durable.thread.busy() and not force:
            raise ChatError("chat-busy", f"Chat {chat.chat_id} is still working on the previous message")
        chat.take_up.lapse()
        chat.turns.retire_cli()
        chat.keeping.revoke_agent_token()
        chat.link.forget_conversation()
        chat.checkpoints.forget()  # its turns are gone: so are their checkpoints
        chat.durable.reset()
        chat.keeping.drop_visuals()
        return {}

    def rewind(self, turn_id: str, force: bool) -> dict:
        """Files and conversation back to before ``turn_id``. The files go first (a conflict
        refuses the whole rewind, nothing changed); then the thread drops the turn and what
        followed, and the CLI is told as far as it can be (its own ``rewind``)."""
        chat = self._chat
        if chat.durable.thread.busy():
            raise ChatError("chat-busy", f"Chat {chat.chat_id} is still working: stop the turn, then rewind")
        turn = chat.durable.thread.item(turn_id)
        if turn is None or turn.get("kind") != "turn":
            raise ChatError("item-not-found", f"No turn {turn_id} in chat {chat.chat_id}")
        try:
            anchor, why = rewind.anchor_for(provider_of(chat.harness), chat.durable.thread.turns(), turn_id), None
        except rewind.NoAnchor as exc:
            anchor, why = None, str(exc)
        reverted = chat.checkpoints.revert_since(turn_id, force) if turn.get("checkpoint") else None
        chat.take_up.lapse()
        if anchor is not None:
            if anchor.before_turn is None and chat.link.running:
                chat.turns.retire_cli()  # Claude Code resumes at the anchor on its next start
            self._rewinding = None
            chat.link.rewind(anchor)  # Claude Code's answer comes at once; Codex's when it replies
            rewound, said = self._rewinding or (True, None)
            self._rewinding = ...
            if not rewound:
                why = said
            elif anchor.fresh:
                chat.durable.update_info(agentSessionId=None)
        chat.durable.rewind_to(turn_id)
        answer = {"files": "unchanged" if reverted is None else "reverted", "reverted": reverted or [],
                  "conversation": "rewound" if anchor is not None and why is None else "unsupported"}
        answer["note"] = rewind_note(answer, why)
        chat.durable.note("info", answer["note"])
        chat.log("chat.rewind", turn=turn_id, files=len(reverted or []), conversation=answer["conversation"])
        chat.publish()
        return answer

    def rewound(self, ok: bool, message: str) -> None:
        """What became of the CLI's rewind: during ``rewind`` (Claude Code's, at once) it is the
        answer's; later (Codex's reply) a failure is said under the conversation."""
        if self._rewinding is None:
            self._rewinding = (ok, message)
        elif not ok:
            self._chat.durable.note("warning", f"The agent's conversation was not rewound: {message}")
            self._chat.publish()

    def kill(self) -> dict:
        chat = self._chat
        chat.keeping.revoke_agent_token()
        chat.take_up.lapse()
        chat.keeping.drop_visuals()
        chat.checkpoints.forget()
        chat.durable.remove()  # from here nothing of this chat reaches the disk again
        self.close(1000)
        return {}

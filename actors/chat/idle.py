"""Letting an idle CLI go (actors/chat/actor.py): its timer, and the ending.

A controller of the Chat actor. It owns the idle timer: armed when the chat becomes idle (no
turn, no background work, no pending request, no take-up owed: the rules are
actors/core/idle.py's), cancelled as soon as anything starts. The chat reviews it whenever its
record may have changed (``Chat.publish``, a batch of the CLI's frames), so no loop polls.
When the time passes the CLI is retired, so its exit never reads as a failure: the session
stays open and reads idle, ``info.running`` goes false, and the next message (either surface)
starts the CLI again on its own conversation, as after a daemon restart.
"""
from __future__ import annotations

import time

from actors.core import idle as rules
from actors.tell import call_later

LET_GO = "not delivered: the chat's idle CLI was ended"
EARLY = 0.05  # seconds: a timer this close to its time counts as come (timers may fire a hair early)


class IdleCli:
    def __init__(self, chat, minutes):
        self._chat = chat
        self._minutes = minutes  # () -> [devtools.chat] idle_cli_minutes as the manifest says now
        self._timer = None
        self._since = None  # monotonic time the chat became idle (while the timer is armed)

    def facts(self) -> rules.IdleFacts:
        chat = self._chat
        link, durable, thread = chat.link, chat.durable, chat.durable.thread
        info = durable.info
        return rules.IdleFacts(
            running=link.running, session_open=chat.session.open,
            ended=durable.record.frozen or durable.record.removed, starting=link.starting,
            turn_active=link.turn_active, thread_busy=thread.busy(), sends=link.sends.busy,
            messages_waiting=bool(link.driver is not None and link.driver.waiting),
            requests=bool(link.requests or thread.pending_requests()), background=bool(info.get("background")),
            take_up_owed="resumeAt" in info, swap_waiting=chat.swap.holding or chat.swap.pending,
            native_readers=chat.native.reads_native())

    def review(self) -> None:
        """Arms the timer when the chat became idle, cancels it when anything goes on."""
        if not rules.may_let_go(self.facts()):
            self.cancel_timer()
            return
        if self._timer is not None:
            return  # idle already: the time counts from when it became so
        seconds = rules.idle_seconds(self._minutes())
        if seconds is None:
            return
        self._since = time.monotonic()
        self._timer = call_later(seconds, self._chat.actor_ref, self._time_passed, self._since)

    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.kill(block=False)
        self._timer = None
        self._since = None

    def _time_passed(self, since: float) -> None:
        if since != self._since:
            return  # cancelled (and maybe armed anew) since
        self._timer = None
        held = rules.what_holds(self.facts())
        if held is not None:
            self._since = None
            return
        # The manifest is read again: an edit since the timer was armed counts from then.
        seconds = rules.idle_seconds(self._minutes())
        if seconds is None:
            self._since = None
            return
        left = since + seconds - time.monotonic()
        if left > EARLY:
            self._timer = call_later(left, self._chat.actor_ref, self._time_passed, since)
            return
        self._since = None
        self._let_go(seconds)

    def _let_go(self, seconds: float) -> None:
        chat = self._chat
        chat.log("session.idle-end", native=chat.link.native_id, idle=f"{seconds:g}s")
        chat.turns.retire_cli()  # its exit does not count: no error, the session stays open
        chat.release_if_idle()  # no CLI writes the history now: its file goes too, if no socket reads it

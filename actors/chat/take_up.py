"""Taking a turn stopped by a usage limit up again, once the limit lifts (actors/chat/actor.py).

A controller of the Chat actor. It owns whether the host takes limited turns up (the
manifest's ``[core] resume_at_reset``, asked at every use so an edited manifest counts from
then on) and the timer of a take-up owed; ``info.resumeAt`` says when it is owed (the rules:
actors/core/limits.py).
"""
from __future__ import annotations

from actors import chatlog
from actors.core import limits
from actors.core.thread import host_id, now_ms
from actors.tell import call_later

LIMIT_WAIT = 5.0  # seconds a take-up waits for a turn in its way


class TakeUp:
    def __init__(self, chat, limit_resume):
        self._chat = chat
        self._limit_resume = limit_resume  # () -> whether the host takes limited turns up
        self._timer = None

    def on(self) -> bool:
        """Whether the host takes limited turns up, as the manifest says now; info.limitResume
        follows it (its clients and the registry are told of a change)."""
        on = bool(self._limit_resume())
        durable = self._chat.durable
        if durable.info.get("limitResume") != on:
            durable.update_info(limitResume=on)
            durable.clients.tell_registry(durable.info)
        return on

    def owe(self) -> None:
        """Right after a limited turn (or when the chat turns resume on): the take-up is owed when
        the host installed it and the chat did not turn it off."""
        chat = self._chat
        info = chat.durable.info
        limit, turns = info.get("limit"), chat.durable.thread.turns()
        if not self.on() or info.get("resumeAtReset") is False or not limit or not turns:
            return
        at = limits.resume_at(limit, limits.tries(turns), now_ms())
        if at is None:
            return
        chat.durable.update_info(resumeAt=at)
        chat.log("turn.resume-owed", turn=turns[-1]["id"], at=chatlog.iso_ms(at), kind=limit["kind"])
        self.arm()

    def arm(self) -> None:
        at = self._chat.durable.info.get("resumeAt")
        self.cancel_timer()
        if isinstance(at, int) and self.on():
            self._timer = call_later(max(0.0, (at - now_ms()) / 1000), self._chat.actor_ref, self.take_up, at)

    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.kill(block=False)
            self._timer = None

    def lapse(self) -> None:
        """No take-up is owed any more (the person went on, closed the chat, turned it off)."""
        if "resumeAt" in self._chat.durable.info:
            self._chat.durable.update_info(drop=("resumeAt",))
            self._chat.log("turn.resume-lapsed")
        self.cancel_timer()

    def take_up(self, at: int) -> None:
        """The limit lifted: the limited turn is taken up on the CLI's own session, once, as a
        turn of its own; the queue goes on after it."""
        chat = self._chat
        durable = chat.durable
        info, thread = durable.info, durable.thread
        if info.get("resumeAt") != at or durable.record.frozen or durable.record.removed:
            return  # lapsed, or owed anew since
        if not self.on():
            self.lapse()  # the manifest turned it off since
            return
        if thread.busy() or chat.link.starting:
            self._timer = call_later(LIMIT_WAIT, chat.actor_ref, self.take_up, at)
            return  # something is in the way: the take-up waits
        turns = thread.turns()
        limit = turns[-1].get("limit") if turns else None
        self._timer = None
        if not limit:
            self.lapse()
            return
        words = limits.WAKE_WORDS[limit["kind"]]
        durable.update_info(drop=("resumeAt",), queuePaused=False)  # what waits goes out after the resumed turn
        turn_id = host_id("turn")
        durable.begin_turn(turn_id, origin="agent", label=words["label"])
        durable.note("info", words["note"], turn_id=turn_id)
        chat.log("turn.resume-after-limit", turn=turns[-1]["id"], kind=limit["kind"])
        chat.turns.send_to_cli(words["text"])
        chat.publish()

"""A link's sends (actors/cli_link.py): per origin, one at a time, each until its acknowledgement.

A plain part of the CliLink. It owns the queue of each origin, the messages in flight (their
acknowledgement timers) and the command ids used in the session. How a message is written to
the CLI is the link's: the link hands it the ``deliver`` step and it calls that when a send's
turn comes. What becomes of a send goes back to its origin through the link's owner
(``link_result``), the evidence about a message too (``link_evidence``).
"""
from __future__ import annotations

import time
import uuid
from collections import deque
from dataclasses import dataclass

from actors.messages import Send, is_lowercase_uuid
from actors.tell import call_later

ACK_TIMEOUT = 15.0  # seconds without evidence before a send reads "unconfirmed"
CORE = "core"  # the origin of what the chat core sends
REPEATED_COMMAND = ("this commandId was already sent in this session; devhost never resends a message: "
                    "check the conversation, then send again with a new commandId")


def message_id_for(command_id: str) -> str:
    """The id the CLI gets for a message: the command's own when it is a lowercase UUID (the
    page finds it in the CLI's frames), else a new one."""
    return command_id if is_lowercase_uuid(command_id) else str(uuid.uuid4())


@dataclass
class InFlight:
    origin: object
    command_id: str
    sent_at: float
    timer: object = None


class Sends:
    def __init__(self, *, owner, actor_ref, log, deliver, unconfirmed, ack_timeout: float = ACK_TIMEOUT):
        self._owner = owner  # the link's LinkOwner: results and evidence
        self._actor_ref = actor_ref  # the chat's actor, for the acknowledgement timers
        self._log = log
        # (origin, command, prompt, message_id, queued_at) -> None: the link writes the message
        # (starting its CLI if none runs).
        self._deliver = deliver
        self._unconfirmed = unconfirmed  # (message_id) -> None: the link stops counting on it
        self._ack_timeout = ack_timeout
        self._in_flight: dict[str, InFlight] = {}  # native message id -> send awaiting its ack
        self._outbox: dict[object, deque] = {}  # per origin: sends waiting for the previous ack
        self._used_command_ids: set[str] = set()
        # native message id -> (origin, command id) of what the CLI has and did not take up yet:
        # a message it drops unsent (an interrupt) is marked so on its item (``link_not_sent``).
        self._given: dict[str, tuple] = {}

    @property
    def busy(self) -> bool:
        """A send is in flight (waiting for its acknowledgement) or queued behind one."""
        return bool(self._in_flight) or any(self._outbox.values())

    def send(self, origin, command: Send, prompt: str) -> None:
        queue = self._outbox.setdefault(origin, deque())
        if queue or any(entry.origin == origin for entry in self._in_flight.values()):
            queue.append((command, prompt, time.monotonic()))  # sends from one origin are delivered in order
            return
        self._dispatch(origin, command, prompt)

    def _dispatch(self, origin, command: Send, prompt: str, queued_at: float | None = None) -> None:
        if command.command_id in self._used_command_ids:
            # The CLI silently drops a repeated message id; a resend is the person's call, with a new id.
            self._owner.link_result(origin, command.command_id, None, REPEATED_COMMAND)
            self._next(origin)
            return
        self._used_command_ids.add(command.command_id)
        message_id = message_id_for(command.command_id)
        # In flight before it is written: a driver may say at once what became of it (an ACP
        # agent's prompt waiting behind the running one is "queued" as it is handed over), and
        # that answer must find the send.
        self._given[message_id] = (origin, command.command_id)
        entry = InFlight(origin, command.command_id, time.monotonic())
        entry.timer = call_later(self._ack_timeout, self._actor_ref, self.ack_timed_out, message_id)
        self._in_flight[message_id] = entry
        self._deliver(origin, command, prompt, message_id, queued_at)

    def refuse_queued(self, reason: str, sockets_only: bool = False) -> None:
        """Answers every queued send (of the sockets only, or of every origin) with an error."""
        for queued_origin, queue in self._outbox.items():
            if sockets_only and queued_origin == CORE:
                continue
            while queue:
                command, *_ = queue.popleft()
                self._owner.link_result(queued_origin, command.command_id, None, reason)

    def fail_all(self, reason: str) -> None:
        """Answers every send in flight and every queued one with an error; dispatches nothing."""
        self.refuse_queued(f"not sent: {reason}")
        for message_id in list(self._in_flight):
            self._ack(message_id, None, reason, dispatch_next=False)
        self._outbox.clear()
        self._given.clear()  # that CLI is gone: nothing it had can be taken up any more

    def forget_origin(self, origin) -> None:
        self._outbox.pop(origin, None)

    def delivered(self, message_id: str, delivery: str, error: str | None) -> None:
        """The CLI showed what became of a message (``delivery``: its word, "error", or
        "cancelled": dropped unsent, ``error`` saying why)."""
        self._owner.link_evidence(message_id, delivery)
        given = self._given.pop(message_id, None) if delivery in ("started", "error", "cancelled") else None
        if delivery == "cancelled":
            if given is not None:
                self._owner.link_not_sent(*given, error)
            if message_id in self._in_flight:
                self._ack(message_id, None, error)
            return
        if message_id in self._in_flight:
            self._ack(message_id, None if delivery == "error" else delivery, error)

    def settled(self, message_id: str) -> None:
        """The CLI is done with a message, whatever became of it: it had it."""
        self._given.pop(message_id, None)
        self._owner.link_evidence(message_id, "settled")
        if message_id in self._in_flight:
            self._ack(message_id, "queued", None)

    def ack_timed_out(self, message_id: str) -> None:
        if message_id in self._in_flight:
            self._unconfirmed(message_id)
            self._owner.link_evidence(message_id, "unconfirmed")
            self._ack(message_id, "unconfirmed", None)

    def _ack(self, message_id: str, delivery: str | None, error: str | None, dispatch_next: bool = True) -> None:
        entry = self._in_flight.pop(message_id)
        if entry.timer is not None:
            entry.timer.kill(block=False)
        self._log("message.ack", command=entry.command_id, delivery=delivery or "error",
                  after=f"{time.monotonic() - entry.sent_at:.2f}s", error=error)
        self._owner.link_result(entry.origin, entry.command_id, delivery, error)
        if dispatch_next:
            self._next(entry.origin)

    def _next(self, origin) -> None:
        queue = self._outbox.get(origin)
        if queue:
            command, prompt, queued_at = queue.popleft()
            self._dispatch(origin, command, prompt, queued_at)

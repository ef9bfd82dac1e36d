"""Approvals and questions, answered from either surface (actors/chat/actor.py).

A controller of the Chat actor, with no state of its own: the native requests the CLI waits on
are the link's, their items (and the summaries in info.requests) the durable face's, and the
mapping between the thread's ids and the CLI's the projector's. An answer given on one surface
settles the request on the other.
"""
from __future__ import annotations

from actors.errors import ChatError


class Requests:
    def __init__(self, chat):
        self._chat = chat

    def respond(self, subscriber: int, request_id, result: dict) -> None:
        """A Chat-API socket's answer, in the CLI's own terms."""
        chat = self._chat
        if not chat.session.open or not chat.link.running or not chat.link.waits_on(request_id):
            chat.native.tell(subscriber, f"request {request_id!r} is not pending: it was answered or cancelled "
                                         f"already; pendingRequestIds lists what still needs an answer")
            return
        try:
            chat.link.respond(request_id, result)
        except ValueError as exc:
            chat.native.tell(subscriber, f"respond refused: {exc}")
            return
        chat.durable.answered_natively(request_id, result)
        chat.publish()

    def approve(self, request_id, decision: str, message: str | None = None, runtime_mode: str | None = None) -> dict:
        """``runtime_mode``: for an approved plan, the mode the chat goes on in (its own, when None)."""
        chat = self._chat
        durable = chat.durable
        item = durable.thread.item(f"approval-{request_id}")
        if item is None or item.get("decision") != "pending" or not chat.link.waits_on(self._native(request_id)):
            raise ChatError("request-not-found", f"Nothing waits for approval {request_id}")
        if decision == "allow-always" and not item.get("canAllowAlways"):
            raise ChatError("bad-request", "This request offers no rule to always allow; answer allow or deny")
        if runtime_mode is not None and (item.get("plan") is None or decision != "allow"):
            raise ChatError("bad-request", "runtimeMode goes only with an approved plan (decision allow on an "
                                           "approval that carries a plan); change the mode with chat.configure")
        answer = durable.projector.answer_approval(request_id, decision, message)
        if item.get("plan") is not None and decision == "allow":
            # The plan approved: the chat stops planning and goes on, in this turn, in the mode picked.
            chat.link.plan_approved(self._native(request_id), answer, runtime_mode or chat.link.runtime_mode)
            durable.projector.settled(request_id)
            chat.swap.asked()
            durable.update_info(drop=("permissionMode",), runtimeMode=chat.link.runtime_mode,
                                effectiveRuntimeMode=chat.link.effective_mode)
            chat.publish()
        else:
            self._answer_native(request_id, answer)
        durable.upsert({**item, "decision": decision})
        return {}

    def answer(self, request_id, answers: dict) -> dict:
        durable = self._chat.durable
        item = durable.thread.item(f"question-{request_id}")
        if item is None or item.get("state") != "pending" or not self._chat.link.waits_on(self._native(request_id)):
            raise ChatError("request-not-found", f"No question waits under {request_id}")
        self._answer_native(request_id, durable.projector.answer_question(request_id, item["questions"], answers))
        durable.upsert({**item, "state": "answered", "answers": answers})
        return {}

    def dismiss(self, item_id: str) -> dict:
        durable = self._chat.durable
        item = durable.thread.item(item_id)
        if item is None or item["kind"] != "question" or item.get("state") != "pending" or not item.get("async"):
            raise ChatError("request-not-found", f"No question to dismiss under {item_id}")
        durable.upsert({**item, "state": "dismissed"})
        return {}

    def _native(self, request_id):
        """The CLI's own id of a request the thread names (Codex's restart from 0 in every process)."""
        projector = self._chat.durable.projector
        return projector.native(request_id) if projector is not None else None

    def _answer_native(self, request_id, answer: dict) -> None:
        self._chat.link.respond(self._native(request_id), answer)
        self._chat.durable.projector.settled(request_id)
        self._chat.publish()

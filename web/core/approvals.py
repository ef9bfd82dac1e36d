"""The core's requests that answer what a chat asked: approve, answer a question, dismiss one
(the seed's B13-B15). Read by the rules the thread socket shares (web/command_rules.py)."""
from __future__ import annotations

from web import command_rules as rules
from web.core.payload import chat_of, checked, get


def approve(service, payload, client):
    request_id, decision, message, runtime_mode = checked(rules.approval, payload)
    return get(chat_of(service, payload).approve(request_id, decision, message, runtime_mode))


def answer(service, payload, client):
    request_id, answers = checked(rules.answers, payload)
    return get(chat_of(service, payload).answer(request_id, answers))


def dismiss(service, payload, client):
    item = checked(rules.item_id, payload, "a dismiss")
    return get(chat_of(service, payload).dismiss(item))


REQUESTS = {"chat.approve": approve, "chat.answer": answer, "chat.dismiss": dismiss}

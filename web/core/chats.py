"""The core's requests of a chat's life and its turns: create, list, configure, attach and
detach, history, send, the queue, cancel, clear, compact, kill (the seed's B1-B12, B16, B21),
and the providers and accounts a chat can be made with (B19)."""
from __future__ import annotations

import gevent

from actors.core import attachments as attachment_rules
from actors.core import references as reference_rules
from actors.core.titles import checked_title
from actors.errors import ChatError
from web import command_rules as rules
from web.core.later import Later
from web.core.payload import chat_id, chat_of, checked, get, text


def create(service, payload, client):
    # Where the payload names none, the newest preferences of a connected client (chat.setPreferences).
    defaults = service.preferences.defaults_for(payload)
    preferred = defaults.pop("account", None)  # only where the manifest names it (the registry checks)
    payload = {**payload, **defaults}
    clean = {"chatId": chat_id(payload)}
    if preferred:
        clean["preferredAccount"] = preferred
    for key in ("provider", "cwd", "resume", "runtimeMode"):
        if payload.get(key) is not None:
            clean[key] = text(payload, key, limit=4096)
    if isinstance(payload.get("selection"), dict):
        model = payload["selection"].get("model")
        clean["selection"] = {"model": model if isinstance(model, str) else None}
    if "account" in payload:  # absent: the provider's last picked; null: the CLI's default home
        clean["account"] = checked(rules.account, payload)
    return get(service.registry.create_chat(clean))


def list_chats(service, payload, client):
    return {"chats": get(service.registry.list_chats())}


def configure(service, payload, client):
    model = None
    if isinstance(payload.get("selection"), dict) and "model" in payload["selection"]:
        model = payload["selection"]["model"] or ""
        if not isinstance(model, str):
            raise ChatError("bad-request", "`selection.model` must be a model id")
    runtime_mode = checked(rules.runtime_mode, payload)
    plan = checked(rules.plan, payload)
    resume_at_reset = checked(rules.resume_at_reset, payload, False)
    account = checked(rules.account, payload)
    return get(chat_of(service, payload).configure(model, runtime_mode, resume_at_reset, _restart_words(payload),
                                                   plan, account))


def attach(service, payload, client):
    if client is None:
        raise ChatError("bad-request", "chat.attach streams events: use the WebSocket /__devhost__/ws/core")
    chat = chat_id(payload)
    since, limit = payload.get("since"), payload.get("historyLimit")
    if since is not None and (isinstance(since, bool) or not isinstance(since, int) or since < 0):
        raise ChatError("bad-request", "`since` must be a sequence number (0 or more)")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100):
        raise ChatError("bad-request", "`historyLimit` must be 1..100")
    if chat in client.attached:  # attaching again replaces the earlier attach, never doubles it
        get(chat_of(service, payload).core_detach(client.attached.pop(chat)))
    answer = get(chat_of(service, payload).core_attach(client.sink, since, limit))
    client.attached[chat] = answer.pop("subscriber")
    return answer


def detach(service, payload, client):
    chat = chat_id(payload)
    if client is not None and chat in client.attached:
        chat_of(service, payload).core_detach(client.attached.pop(chat))
    return {}


def history(service, payload, client):
    limit = payload.get("limit", 60)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ChatError("bad-request", "`limit` must be 1..100")
    cursor = payload.get("cursor")
    if cursor is not None and (not isinstance(cursor, str) or not 1 <= len(cursor) <= 128):
        raise ChatError("bad-request", "`cursor` is the one a history page gave (1..128 characters)")
    return get(chat_of(service, payload).history(cursor, limit))


def send(service, payload, client):
    said = payload.get("text", "")
    uploads = payload.get("attachments")
    if not isinstance(said, str) or len(said) > 200_000:
        raise ChatError("bad-request", "`text` is the message (at most 200,000 characters)")
    delivery = payload.get("delivery")
    if delivery not in (None, "steer", "queue"):
        raise ChatError("bad-request", "`delivery` is steer or queue")
    references = checked(rules.references, payload)
    if not said.strip() and not uploads and not references.get("skills"):
        raise ChatError("bad-request", "A message needs text, an attachment or a skill")
    chat = chat_of(service, payload)
    if references.get("chats"):
        references["context"] = _chats_context(service, chat_id(payload), references["chats"])
    # Decoded off the hub (up to 10 MiB); refused with the first problem.
    files = gevent.get_hub().threadpool.apply(attachment_rules.decode, (uploads,)) if uploads is not None else []
    answer = get(chat.core_send(said, delivery, files, references))
    steered = answer.pop("steered", None)
    return Later(steered, answer) if steered is not None else answer


def _chats_context(service, own: str, chats: list[str]) -> str:
    """The other chats' conversations as one text of context (actors/core/references.py), read
    here: a chat never asks another."""
    contexts = []
    for other in chats:
        if other == own:
            raise ChatError("bad-request", "`chats` names other chats: this chat's own conversation is its context")
        items = get(chat_of(service, {"chatId": other}).history(None, 100))["items"]
        contexts.append(reference_rules.chat_context(other, items))
    return reference_rules.with_context("", contexts)


def unqueue(service, payload, client):
    return get(chat_of(service, payload).unqueue(text(payload, "messageId", limit=200)))


def send_now(service, payload, client):
    return get(chat_of(service, payload).send_now(text(payload, "messageId", limit=200)))


def cancel(service, payload, client):
    subagents = payload.get("subagents", False)
    if not isinstance(subagents, bool):
        raise ChatError("bad-request", "`subagents` must be true or false")
    return get(chat_of(service, payload).cancel(subagents))


def clear(service, payload, client):
    return get(chat_of(service, payload).clear(payload.get("force") is True))


def compact(service, payload, client):
    return get(chat_of(service, payload).compact())


def rename(service, payload, client):
    title, problem = checked_title(payload.get("title"))
    if problem:
        raise ChatError("bad-request", problem)
    get(chat_of(service, payload).rename(title))  # attached clients get the info that names it
    return {"title": title}


def kill(service, payload, client):
    chat_name = chat_id(payload)
    chat = chat_of(service, payload)
    gone = get(chat.cli_gone())
    get(chat.kill())
    # Not waited for here (the seed's kill does not wait); a daemon stopping waits for it.
    get(service.registry.forget(chat_name, gone))
    return {}


# Forking, summarizing and moving a chat to another account are a host's own add-ons (the
# seed's plain host refuses them): the requests exist, and say so.
def fork(service, payload, client):
    raise ChatError("chat-unsupported", "This host does not fork chats")


def continue_on(service, payload, client):
    raise ChatError("chat-unsupported", "This host does not continue a chat under another account")


def providers(service, payload, client):
    return {"providers": get(service.registry.providers())}


def _restart_words(payload) -> dict:
    """chat.configure's words for a restart: ``endedAt`` (ms: the chat was stopped on purpose
    then), ``unownedReason`` (why a turn is not resumed), ``resumeWords {prompt?, note?}``;
    null removes one."""
    words = {}
    if "endedAt" in payload:
        value = payload["endedAt"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ChatError("bad-request", "`endedAt` is a time in ms since the epoch, or null")
        words["endedAt"] = value
    if "unownedReason" in payload:
        value = payload["unownedReason"]
        if value is not None and (not isinstance(value, str) or not 1 <= len(value) <= 300):
            raise ChatError("bad-request", "`unownedReason` is 1..300 characters, or null")
        words["unownedReason"] = value
    if "resumeWords" in payload:
        value = payload["resumeWords"]
        if value is not None and (not isinstance(value, dict) or set(value) - {"prompt", "note"} or not all(
                isinstance(v, str) and 1 <= len(v) <= 2000 for v in value.values())):
            raise ChatError("bad-request", "`resumeWords` is {prompt?, note?} (1..2000 characters each), or null")
        words["resumeWords"] = value
    return words


REQUESTS = {"chat.create": create, "chat.list": list_chats, "chat.configure": configure, "chat.attach": attach,
            "chat.detach": detach, "chat.history": history, "chat.send": send, "chat.unqueue": unqueue,
            "chat.sendNow": send_now, "chat.cancel": cancel, "chat.clear": clear, "chat.compact": compact,
            "chat.rename": rename, "chat.kill": kill, "chat.fork": fork, "chat.forkInfo": fork, "chat.summarize": fork,
            "chat.continueOn": continue_on, "provider.list": providers}

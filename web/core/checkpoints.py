"""The core's requests of a turn's checkpoint (actors/chat/checkpoints.py): what a turn changed
(chat.changes, and the seed's chat.turnDiff), taking it back (chat.revert), and going back to
before it, files and conversation (chat.rewind)."""
from __future__ import annotations

from actors.core.changes import seed_diff
from actors.errors import ChatError
from web import command_rules as rules
from web.core.payload import chat_of, checked, get


def changes(service, payload, client):
    return get(chat_of(service, payload).changes(checked(rules.turn_id, payload)))


def turn_diff(service, payload, client):
    """B20: the seed's shape of the same changes; null for a turn without a checkpoint."""
    try:
        listed = changes(service, payload, client)
    except ChatError as exc:
        if exc.code != "chat-unsupported":
            raise
        return {"diff": None}
    return {"diff": seed_diff(listed)}


def revert(service, payload, client):
    paths, hunks, force = checked(rules.revert, payload)
    return get(chat_of(service, payload).revert(checked(rules.turn_id, payload), paths, hunks, force))


def rewind(service, payload, client):
    return get(chat_of(service, payload).rewind(checked(rules.turn_id, payload), checked(rules.force, payload)),
               timeout=60)  # a CLI's restart at the earlier message can take a while


REQUESTS = {"chat.changes": changes, "chat.turnDiff": turn_diff, "chat.revert": revert, "chat.rewind": rewind}

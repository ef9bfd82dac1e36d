"""One conversation as one actor: ``Chat`` (actors/chat/actor.py) over its controllers."""
from actors.chat.actor import Chat

__all__ = ["Chat"]

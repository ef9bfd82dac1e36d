"""Tokens of the agents devhostd starts: each CLI gets ``DEVHOSTD_TOKEN``, bound to its own chat.

An agent has a shell, and a prompt-injected one does what the text it read says: its token is
good only for the agent-side commands of its own chat (``AGENT_REQUESTS``), never for
approving, sending or reading. A chat's token is made when its first CLI starts and is
replaced when the chat is cleared or killed, so a CLI (or anything it left running) from
before that holds a token that no longer works. Kept in memory only: a restarted daemon
starts every CLI anew, each with a fresh token.
"""
from __future__ import annotations

import hmac
import secrets

# What an agent's token may ask of the chat core, each for its own chat only.
AGENT_REQUESTS = frozenset({"chat.publishVisual", "chat.listVisuals", "chat.removeVisual",
                            # what the open pages of its own chat's checkout report (web/core/pages.py)
                            "page.errors", "page.requests", "page.element"})


class AgentTokens:
    def __init__(self):
        self._by_chat: dict[str, str] = {}
        self._by_token: dict[str, str] = {}

    def token_for(self, chat_id: str) -> str:
        """The chat's token, made on first use."""
        token = self._by_chat.get(chat_id)
        if token is None:
            token = secrets.token_urlsafe(32)
            self._by_chat[chat_id] = token
            self._by_token[token] = chat_id
        return token

    def revoke(self, chat_id: str) -> None:
        """The chat's token stops working (clear, kill); its next CLI gets a new one."""
        token = self._by_chat.pop(chat_id, None)
        if token is not None:
            self._by_token.pop(token, None)

    def chat_of(self, token: str) -> str | None:
        """The chat a token is bound to, or None. The lookup is a dict's (hash of the whole
        token), then the match is confirmed in constant time."""
        chat_id = self._by_token.get(token)
        if chat_id is None or not hmac.compare_digest(self._by_chat.get(chat_id, ""), token):
            return None
        return chat_id

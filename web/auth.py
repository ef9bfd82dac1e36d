"""Who is asking the chat core: the person's own program (the core secret) or an agent (its
chat's token). Checked on top of the Host and Origin rules, on ``POST /__devhost__/core`` and
the ``/__devhost__/ws/core`` upgrade.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass

from actors.agent_tokens import AGENT_REQUESTS, AgentTokens


@dataclass(frozen=True)
class Caller:
    """``agent_chat`` is None for the person's own programs, else the one chat an agent may touch."""
    agent_chat: str | None = None

    def refusal(self, kind: str, payload) -> str | None:
        """Why this caller may not make this request, or None when it may."""
        if self.agent_chat is None:
            return None
        if kind not in AGENT_REQUESTS:
            return (f"an agent's DEVHOSTD_TOKEN is good only for {', '.join(sorted(AGENT_REQUESTS))} in its own "
                    f"chat, not for {kind}")
        if not isinstance(payload, dict) or payload.get("chatId") != self.agent_chat:
            return "an agent's DEVHOSTD_TOKEN is good only for its own chat (DEVHOSTD_CHAT)"
        return None


PERSON = Caller()


class CoreAuth:
    def __init__(self, secret: str, secret_path: str, agents: AgentTokens):
        self._secret = secret.encode()
        self.secret_path = secret_path
        self.agents = agents

    def caller(self, environ) -> Caller | None:
        """The caller its ``Authorization: Bearer`` names, or None (missing or wrong)."""
        token = bearer(environ)
        if token is None:
            return None
        if hmac.compare_digest(token.encode(), self._secret):
            return PERSON
        chat_id = self.agents.chat_of(token)
        return Caller(agent_chat=chat_id) if chat_id is not None else None

    def unauthorized(self, environ) -> str:
        given = "a wrong token" if bearer(environ) is not None else "no token"
        return (f"the chat core needs `Authorization: Bearer <secret>` and this request sent {given}: the secret is "
                f"kept in {self.secret_path} (readable by you only); an agent devhostd started has its chat's "
                "token in $DEVHOSTD_TOKEN")


def bearer(environ) -> str | None:
    value = (environ.get("HTTP_AUTHORIZATION") or "").strip()
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    try:
        token.strip().encode("ascii")
    except UnicodeEncodeError:
        return None
    return token.strip()

"""Who may ask the chat core (web/auth.py, actors/agent_tokens.py): the person's secret, an
agent's token bound to its chat and to the agent-side requests, and nothing else."""
from __future__ import annotations

import pytest

from actors.agent_tokens import AGENT_REQUESTS, AgentTokens
from web.auth import PERSON, Caller, CoreAuth, bearer


def auth_with(agents: AgentTokens | None = None) -> CoreAuth:
    return CoreAuth("s3cret-of-the-person", "/state/core-token", agents or AgentTokens())


@pytest.mark.parametrize("header, token", [
    ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic abc", None), ("Bearer ", None), ("", None),
    ("Bearer ünïcode", None),
])
def test_a_bearer_token_is_read_from_the_authorization_header(header, token):
    assert bearer({"HTTP_AUTHORIZATION": header}) == token


def test_the_persons_secret_names_the_person_and_anything_else_nobody():
    auth = auth_with()
    assert auth.caller({"HTTP_AUTHORIZATION": "Bearer s3cret-of-the-person"}) is PERSON
    assert auth.caller({"HTTP_AUTHORIZATION": "Bearer s3cret-of-the-perso"}) is None
    assert auth.caller({}) is None
    assert "/state/core-token" in auth.unauthorized({}) and "sent no token" in auth.unauthorized({})
    assert "sent a wrong token" in auth.unauthorized({"HTTP_AUTHORIZATION": "Bearer x"})


def test_an_agents_token_names_its_chat_until_the_chat_is_cleared_or_killed():
    agents = AgentTokens()
    token = agents.token_for("c1")
    assert agents.token_for("c1") == token != agents.token_for("c2")  # one per chat, made once
    assert auth_with(agents).caller({"HTTP_AUTHORIZATION": f"Bearer {token}"}) == Caller(agent_chat="c1")
    agents.revoke("c1")
    assert agents.chat_of(token) is None and agents.token_for("c1") != token


def test_an_agent_may_ask_only_the_agent_side_requests_of_its_own_chat():
    agent = Caller(agent_chat="c1")
    for kind in AGENT_REQUESTS:
        assert agent.refusal(kind, {"chatId": "c1"}) is None
        assert "its own chat" in agent.refusal(kind, {"chatId": "c2"})
        assert agent.refusal(kind, {}) is not None
    for kind in ("chat.approve", "chat.send", "chat.list", "chat.attach", "chat.create", "visuals.copyChat"):
        assert kind in agent.refusal(kind, {"chatId": "c1"})
    assert PERSON.refusal("chat.approve", {"chatId": "c1"}) is None

"""web/agents.py without a daemon: chat off, the control-origin rule, the stream's sink."""
from __future__ import annotations

import pytest

from web import agents
from web.edge import Refusal


class Context:
    control_host = "127.0.0.1:7777"
    control_origin = "http://127.0.0.1:7777"

    def __init__(self, actors=None):
        self.actors = actors or {}


def test_without_the_scanner_chat_is_off_and_agents_answer_404():
    with pytest.raises(Refusal) as refused:
        agents._scanner(Context())
    assert refused.value.status == 404
    assert agents._scanner(Context({"agents": "proxy"})) == "proxy"


@pytest.mark.parametrize("host, allowed", [("127.0.0.1:7777", True), ("app.localhost:7777", False),
                                           ("127.0.0.1:1", False), (None, False)])
def test_activity_only_on_the_control_origin(host, allowed):
    environ = {"HTTP_HOST": host} if host else {}
    if allowed:
        agents._only_control_origin(Context(), environ)
    else:
        with pytest.raises(Refusal) as refused:
            agents._only_control_origin(Context(), environ)
        assert refused.value.status == 403

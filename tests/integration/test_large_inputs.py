"""Large inputs never hold the hub: the daemon runs with gevent's monitor at 50 ms, and no
``the hub was blocked`` line may appear in its log while they are handled (a time is never
asserted: the monitor is the judge; bench/hub.py measures how long the hub is held)."""
from __future__ import annotations

import gevent
import pytest

from tests.integration.chats import info
from tests.mock_anthropic import text_reply, tool_use_reply

THRESHOLD = "0.05"
BIG_COMMAND = "echo " + "y" * 400_000  # a minified bundle on one line, say


@pytest.fixture
def daemon_env(daemon_env):
    return {**daemon_env, "GEVENT_MAX_BLOCKING_TIME": THRESHOLD}


def _other_page(daemon, served: list, stop: gevent.event.Event) -> None:
    """Another page of the daemon, asking for its sessions as fast as it is answered."""
    while not stop.is_set():
        status, _ = daemon.request("GET", f"/__devhost__/chat/sessions?{daemon.query('other.localhost', 'project')}",
                                   host=daemon.host("other.localhost"))
        served.append(status)


def test_a_400_kb_pending_approval_with_queued_messages_and_repeated_configures_holds_no_one_up(
        core, daemon, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": BIG_COMMAND, "description": "print a lot"}),
             text_reply("not run"), text_reply("one"), text_reply("two"), text_reply("three"))
    core.chats.create("big", provider="claude", cwd=str(stack / "project"), runtimeMode="supervised")
    core.chats.attach("big")
    turn = core.chats.send("big", "run the big one")["turnId"]
    status = core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == "big"
                             and e["payload"]["info"]["requests"], what="the approval waiting")["payload"]["info"]
    [request] = status["requests"]
    assert request["approval"]["command"].startswith("echo yyy") and request["approval"]["truncated"]
    for n in range(3):
        assert core.chats.send("big", f"then {n}")["queued"] is True

    served: list = []
    stop = gevent.event.Event()
    page = gevent.spawn(_other_page, daemon, served, stop)
    try:
        for n in range(20):
            core.chats.configure("big", resumeAtReset=bool(n % 2))
    finally:
        stop.set()
        page.join(timeout=60)
    assert served and set(served) == {200}, served
    assert len(info(core, "big")["queue"]) == 3

    core.chats.approve("big", request["requestId"], "deny")
    core.wait_event(lambda e: e["event"] == "chat.status" and e["payload"]["chatId"] == "big"
                    and not e["payload"]["info"]["queue"] and e["payload"]["info"]["status"] == "idle",
                    timeout=120, what="the queue to drain")
    assert turn and "the hub was blocked" not in daemon.log(), daemon.log()

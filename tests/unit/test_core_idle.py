"""actors.core.idle: when a chat may let its idle CLI go, and after how long."""
import dataclasses

import pytest

from actors.core.idle import IdleFacts, idle_seconds, may_let_go, what_holds


def test_minutes_become_seconds_and_zero_or_none_means_never():
    assert idle_seconds(15) == 900.0
    assert idle_seconds(0.02) == pytest.approx(1.2)
    assert idle_seconds(0) is None and idle_seconds(0.0) is None and idle_seconds(None) is None
    assert idle_seconds(-1) is None and idle_seconds(True) is None


def test_a_running_cli_of_an_open_chat_with_nothing_going_on_may_be_let_go():
    assert what_holds(IdleFacts()) is None and may_let_go(IdleFacts())


@pytest.mark.parametrize("change, reason", [
    ({"running": False}, "no CLI runs"),
    ({"session_open": False}, "the session is closed"),
    ({"ended": True}, "the chat is ending"),
    ({"starting": True}, "the CLI is starting"),
    ({"turn_active": True}, "a turn runs"),
    ({"thread_busy": True}, "a turn runs"),
    ({"sends": True}, "a message is on its way"),
    ({"messages_waiting": True}, "a message waits for the CLI to take it up"),
    ({"requests": True}, "a request waits for an answer"),
    ({"background": True}, "background work runs"),
    ({"take_up_owed": True}, "a take-up after a usage limit is owed"),
    ({"swap_waiting": True}, "a settings swap waits"),
    ({"native_readers": True}, "a Chat-API socket streams the CLI's events"),
])
def test_anything_living_in_or_waiting_on_the_cli_keeps_it(change, reason):
    facts = dataclasses.replace(IdleFacts(), **change)
    assert what_holds(facts) == reason and not may_let_go(facts)


def test_every_fact_is_a_reason_to_keep_the_cli():
    # A fact added to IdleFacts without a rule would silently never hold anything.
    for field in dataclasses.fields(IdleFacts):
        facts = dataclasses.replace(IdleFacts(), **{field.name: not getattr(IdleFacts(), field.name)})
        assert what_holds(facts) is not None, field.name


def test_the_first_reason_in_order_is_the_one_said():
    facts = IdleFacts(turn_active=True, requests=True, background=True)
    assert what_holds(facts) == "a turn runs"

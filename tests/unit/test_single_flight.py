"""A costly answer is worked out once for every request that asks while it is being worked out,
kept for a short while, and a failure is handed on, not kept."""
from __future__ import annotations

import gevent
import gevent.event
import pytest

from web.single_flight import SingleFlight


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_requests_that_arrive_while_it_is_worked_out_share_one_computation():
    flight, release, calls = SingleFlight(2.0), gevent.event.Event(), []

    def compute():
        calls.append(1)
        release.wait()
        return {"files": ["a.txt"]}

    askers = [gevent.spawn(flight.get, "root", compute) for _ in range(5)]
    gevent.sleep(0)
    release.set()
    gevent.joinall(askers, raise_error=True)
    assert [g.value for g in askers] == [{"files": ["a.txt"]}] * 5
    assert len(calls) == 1


def test_an_answer_is_reused_while_fresh_then_worked_out_again():
    clock, calls = Clock(), []
    flight = SingleFlight(2.0, clock=clock)
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731 - the answer counts the calls
    assert flight.get("k", compute) == 1
    clock.now += 1.9
    assert flight.get("k", compute) == 1
    clock.now += 0.2
    assert flight.get("k", compute) == 2
    assert flight.get("other", compute) == 3  # each key its own


def test_a_failure_reaches_every_waiter_and_is_not_kept():
    flight, release = SingleFlight(60.0), gevent.event.Event()

    def fails():
        release.wait()
        raise ValueError("git failed")

    askers = [gevent.spawn(flight.get, "k", fails) for _ in range(3)]
    gevent.sleep(0)
    release.set()
    gevent.joinall(askers)
    assert all(isinstance(g.exception, ValueError) for g in askers)
    assert flight.get("k", lambda: "listed") == "listed"


def test_a_waiter_gives_up_after_its_timeout_with_a_timeout_error():
    flight, release = SingleFlight(2.0), gevent.event.Event()
    first = gevent.spawn(flight.get, "k", lambda: release.wait() and "done")
    gevent.sleep(0)
    with pytest.raises(TimeoutError):
        flight.get("k", lambda: "never", timeout=0.05)
    release.set()
    assert first.get() == "done"


def test_a_killed_computation_does_not_leave_its_waiters_waiting():
    flight = SingleFlight(2.0)
    first = gevent.spawn(flight.get, "k", lambda: gevent.sleep(60))
    gevent.sleep(0)
    waiter = gevent.spawn(flight.get, "k", lambda: "never")
    gevent.sleep(0)
    first.kill()
    waiter.join(timeout=5)
    assert waiter.ready() and isinstance(waiter.exception, TimeoutError)  # the routes' 503 "try again"
    assert flight.get("k", lambda: "again") == "again"


def test_only_the_newest_answers_are_kept():
    flight = SingleFlight(60.0, most_kept=2)
    for key in ("a", "b", "c"):
        flight.get(key, lambda key=key: key.upper())
    assert flight.get("a", lambda: "recomputed") == "recomputed"
    assert flight.get("c", lambda: "recomputed") == "C"

"""Upward calls between actors: fire-and-forget, with no future built for nobody to read.

A pykka proxy call (``proxy.method(...)``) is an ask: it builds a ``ThreadingFuture`` (a
Condition, an RLock, two gevent locks) and sets it, even when nobody reads it. For a CLI
frame relayed thousands of times a second that was a third of the daemon's time. ``tell``
sends the same message the proxy would, as ``ActorRef.tell`` does, without the future.

Whatever the called method raises has no future to go to: pykka would stop the actor. So
every method called this way is ``@guarded`` (actors/guard.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gevent
import pykka
from pykka.messages import ProxyCall

from actors.guard import spawn_later_logged


def tell(target, method: str, *args, **kwargs) -> bool:
    """Calls ``method`` on the actor behind ``target`` (a proxy or an ActorRef) without waiting.

    Returns False, quietly, when the actor is gone already (a chat removed before its CLI's last
    frames were read, say): an upward call to nobody has nobody left to tell.
    """
    ref = target.actor_ref if isinstance(target, pykka.ActorProxy) else target
    try:
        ref.tell(ProxyCall(attr_path=(method,), args=args, kwargs=kwargs))
    except pykka.ActorDeadError:
        return False
    return True


@dataclass(frozen=True)
class Call:
    """A message to an actor: run ``function(*args)`` inside it, in its turn with its other
    messages. Timers of an actor's plain parts (a deadline, an acknowledgement's wait) send one
    with the part's own bound method, so the timer calls its owner directly: no method name is
    written as a string, and the actor need not pass the call along. The actor's ``on_receive``
    runs it (guarded: what it raises is logged, never fatal)."""
    function: Callable
    args: tuple = ()


def call(target, function: Callable, *args) -> bool:
    """Runs ``function(*args)`` inside the actor behind ``target`` without waiting (False: gone)."""
    ref = target.actor_ref if isinstance(target, pykka.ActorProxy) else target
    try:
        ref.tell(Call(function, args))
    except pykka.ActorDeadError:
        return False
    return True


def call_later(seconds: float, target, function: Callable, *args) -> gevent.Greenlet:
    """``call`` after ``seconds``; the greenlet returned is the timer (kill it to cancel)."""
    return spawn_later_logged(seconds, call, target, function, *args)

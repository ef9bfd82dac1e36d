"""Keeping failures inside actors and greenlets visible, and never fatal to the daemon.

pykka stops an actor whose message handler raises with nobody waiting on the result, and a
greenlet that dies takes its error with it. Every upward (fire-and-forget) actor method is
wrapped in ``guarded`` and every background greenlet is started with ``spawn_logged``. An
object that works for one conversation says which in ``log_subject`` ("session <id>"), so a
failure in it names the session.
"""
from __future__ import annotations

import functools
import traceback

import gevent

from actors.chatlog import daemon_log


def guarded(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception:  # noqa: BLE001 - logged, and the actor lives on
            daemon_log(f"bug: {method.__qualname__}{_subject(args[0] if args else None)} failed:\n"
                       f"{traceback.format_exc()}")
            return None
    return wrapper


def spawn_logged(function, *args, **kwargs) -> gevent.Greenlet:
    greenlet = gevent.spawn(function, *args, **kwargs)
    greenlet.link_exception(functools.partial(_report, _subject(getattr(function, "__self__", None))))
    return greenlet


def spawn_later_logged(seconds: float, function, *args, **kwargs) -> gevent.Greenlet:
    greenlet = gevent.spawn_later(seconds, function, *args, **kwargs)
    greenlet.link_exception(functools.partial(_report, _subject(getattr(function, "__self__", None))))
    return greenlet


def on_threadpool(function, *args):
    """``function(*args)`` on the hub's threadpool, for file work that may wait on the disk. What
    it raises is raised here, to the caller that handles it: gevent would print it as a crash."""
    raised, value = gevent.get_hub().threadpool.apply(_outcome, (function, args))
    if raised:
        raise value
    return value


def _outcome(function, args):
    try:
        return False, function(*args)
    except Exception as exc:  # noqa: BLE001 - handed to the caller, which raises it
        return True, exc


def _subject(owner) -> str:
    """`` (session <id>)`` for an object that works for one conversation, else nothing."""
    subject = getattr(owner, "log_subject", None)
    return f" ({subject})" if isinstance(subject, str) else ""


def _report(subject: str, greenlet: gevent.Greenlet) -> None:
    daemon_log(f"bug: background task {greenlet}{subject} failed: {greenlet.exception!r}")

"""What the daemon does with every chat at a stop, for actor tests (devhostd/main.close_every_session)."""
from __future__ import annotations

import contextlib
import os

import pykka


def shut_down(registry, timeout: float = 30) -> None:
    """Freezes every chat, closes it, and waits until its CLI is gone."""
    for chat in registry.chats().get(timeout=timeout):
        try:
            chat.freeze().get(timeout=timeout)
            chat.close(1001).get(timeout=timeout)
            assert chat.cli_gone().get(timeout=timeout).wait(timeout=timeout), "a CLI outlived its chat"
        except pykka.ActorDeadError:
            continue


def stop_registry(ref, timeout: float = 30) -> None:
    """Ends a registry that may have stopped already, the way the daemon does: its chats shut down first."""
    if ref.is_alive():
        shut_down(ref.proxy(), timeout)
        ref.stop(timeout=timeout)


@contextlib.contextmanager
def registries(data_dir, timeout: float = 30, **options):
    """``start(commands)`` starts a Registry on ``data_dir`` (``options``: the Registry's own);
    every one started is shut down as the daemon does at the end."""
    from actors.registry import CoreClients, Registry

    started = []

    def start(commands: dict):
        ref = Registry.start(str(data_dir), CoreClients(), commands=lambda: commands,
                             environment=dict(os.environ), **options)
        started.append(ref)
        return ref.proxy()

    try:
        yield start
    finally:
        for ref in started:
            stop_registry(ref, timeout)

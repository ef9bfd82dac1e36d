"""A link's CLI processes (actors/cli_link.py): the current one, its serial, the retired ones ending.

A plain part of the CliLink. It owns the ``CliProcess`` actors of one chat: the current one (at
most one), those retired and still ending, the serial each was started with, and ``gone``
(set while none of them runs). What a process is started for (its command line, its driver,
its readiness) is the link's: it tells this part to launch, retire or count an exit.
"""
from __future__ import annotations

import gevent.event

from actors import proctree
from actors.cli_process import CliProcess
from actors.guard import spawn_logged

CLI_STOP_WAIT = 10.0  # seconds a stopping chat waits for a CLI's tree to end (SIGTERM, then SIGKILL)


class LinkProcesses:
    def __init__(self, *, chat_id: str, label: str, actor_ref):
        self._chat_id = chat_id
        self._label = label
        self._actor_ref = actor_ref  # the chat's actor: what a process tells goes there
        self.serial = 0  # the current process's (see actors/cli_link.py)
        self._cli = None  # the current process's proxy
        self._ref = None
        self._live = 0
        self._retired: list = []  # refs of retired processes that may still be ending
        self.gone = gevent.event.Event()  # set while no process of this chat runs, retired ones included
        self.gone.set()

    @property
    def running(self) -> bool:
        return self._cli is not None

    def next_serial(self) -> int:
        """The serial of the process about to start: what earlier ones still say counts no more."""
        self.serial += 1
        return self.serial

    def launch(self, argv: list[str], folder: str, agent_env: dict[str, str]) -> None:
        """Starts the current process, with the serial ``next_serial`` gave."""
        self._live += 1
        self.gone.clear()
        self._ref = CliProcess.start(self._actor_ref, self.serial, argv, folder, proctree.make_tag(self._chat_id),
                                     self._label, agent_env, session_id=self._chat_id)
        self._cli = self._ref.proxy()

    def write(self, frames: list[dict]) -> None:
        if frames and self._cli is not None:
            self._cli.write(frames)

    def terminate(self) -> None:
        """Ends the current process's tree (its exit follows)."""
        if self._cli is not None:
            self._cli.terminate()

    def retire(self) -> None:
        """The current process is no longer the chat's: what it still says counts no more, and
        ``shut`` still waits for it."""
        self.serial += 1
        # Those that ended are dropped: a chat let go when idle many times keeps no refs of them.
        self._retired = [ref for ref in self._retired if ref.is_alive()]
        if self._ref is not None:
            self._retired.append(self._ref)
        self._cli = None
        self._ref = None

    def exited(self, serial: int) -> bool:
        """Counts an exit; True when it is the current process's (none runs now)."""
        self._live -= 1
        if self._live <= 0:
            self.gone.set()
            self._retired = [ref for ref in self._retired if ref.is_alive()]
        if serial != self.serial:
            return False
        self._cli = None
        self._ref = None
        return True

    def shut(self) -> None:
        """The actor stops: each CliProcess's on_stop ends its process tree. No exit reaches a
        stopped chat, so ``gone`` is set here once they all stopped (a daemon stopping waits for
        the CLIs of chats killed just before)."""
        refs = [ref for ref in [self._ref, *self._retired] if ref is not None]
        self._retired.clear()
        if not refs:
            return
        gone = self.gone

        def stop_all() -> None:
            try:
                for ref in refs:
                    try:
                        ref.stop(block=True, timeout=CLI_STOP_WAIT)
                    except Exception:  # noqa: BLE001 - stopped already, or stuck: the daemon's sweep ends it
                        pass
            finally:
                gone.set()
        spawn_logged(stop_all)

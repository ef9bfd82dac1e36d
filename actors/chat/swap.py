"""The settings swap of a chat (actors/chat/actor.py): a change the running CLI cannot take.

A controller of the Chat actor. A runtime mode (or an account) the running process cannot move
to needs a new process, and ending a process ends whatever runs in it. So the swap waits while
a turn runs, background work runs or a request is pending. Meanwhile a message waits too: the
core's goes into the chat's queue, a page's is held by the link. Either way it never reaches
the old process, whose settings may be wider than the person now allows. The first message that
waits in a swap gets one note saying why. Switching back to the settings the process runs
under cancels the swap (the link's ``mode_needs_launch`` goes false), and what waited goes on.

Both surfaces reach this one path: the core's ``chat.configure`` and a page's session both
change the link's settings, and every send comes through ``waits``.
"""
from __future__ import annotations

WAIT_NOTE = ("Your message is queued until the current work and open requests finish. "
             "The changes to this chat will apply then.")


class Swap:
    def __init__(self, chat):
        self._chat = chat
        self._generation = 0  # counts the swaps asked for: one note each
        self._noted = None  # the generation whose note was added
        self._settling = False
        self._holding = False  # messages wait for a swap (the chat's queue, the link's held sends)

    @property
    def pending(self) -> bool:
        """A new process is owed before the next message."""
        return self._chat.link.swap_pending

    @property
    def holding(self) -> bool:
        """Messages wait for the swap (the chat's queue, the link's held sends)."""
        return self._holding

    def asked(self) -> None:
        """The settings changed: a swap that becomes pending is a new one (its own note)."""
        if self.pending:
            self._generation += 1

    def waits(self) -> bool:
        """A swap is owed and something still lives in the current process."""
        if not self.pending:
            return False
        link, durable = self._chat.link, self._chat.durable
        return bool(link.starting or link.turn_active or link.requests or link.driver.waiting
                    or durable.thread.busy() or durable.thread.pending_requests()
                    or durable.info.get("background"))

    def held(self) -> None:
        """A message waits for the swap: the note, once per swap."""
        self._holding = True
        if self._noted != self._generation and not self._chat.durable.record.frozen:
            self._noted = self._generation
            self._chat.durable.note("info", WAIT_NOTE, item_id=f"settings-wait-{self._generation}")

    def settle(self) -> None:
        """After any change, while messages wait: once nothing is in the way, the new process
        starts (when still owed) and what waited goes out. A swap nobody waits on starts its
        process with the next message (CliLink.send)."""
        chat = self._chat
        if not self._holding or self._settling or self.waits() or chat.durable.record.frozen:
            return
        self._settling, self._holding = True, False
        try:
            if self.pending:
                chat.link.restart_for_settings()
            chat.link.release_held()
            chat.turns.drain()
        finally:
            self._settling = False

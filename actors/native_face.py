"""The native face of a conversation: the Chat API's session over it.

A plain object owned by the Chat actor (actors/chat/). It holds the session's event history
(every CLI frame, byte for byte, in a private unlinked temp file: storage/history.py) and the
Chat-API sockets attached to it, and tells those sockets, in order, what the seed's chat socket
carries: native events with their sequence, the session's state, the results of a socket's own
sends, and errors meant for a person. What it tells are typed messages (actors/messages.py);
each socket's sink encodes them (web/chat_socket.py).

The session id is the Chat API's name for the conversation while it is open; resuming a closed
session gives it a new one (the seed: a resumed session replaces the closed one in the list).
The history stays with the conversation while the daemon runs, so a resumed session's snapshot
still has what came before.
"""
from __future__ import annotations

import itertools

from actors.messages import CommandResult, NativeEvents, Notice, SessionState
from storage.history import EventHistory, ReleasedReader


class NativeFace:
    def __init__(self, session_id: str, history: EventHistory | None = None):
        self.session_id = session_id
        # Made when the first frame is stored: a chat nothing ran in holds no file descriptor.
        self._history = history
        self._released_at = 0  # the last sequence of a released history; the next one goes on from it
        self._sockets: dict[int, object] = {}
        # Thread sockets (the panel's, web/thread_socket.py): told the session's state, their own
        # sends' results and notices, but not native frames (they read the chat's items instead).
        self._item_readers: set[int] = set()
        self._ids = itertools.count(1)
        self._watched: int | None = None  # the socket that sent last: the page a person watches

    def reopened_as(self, session_id: str) -> None:
        """The closed session is resumed under a new id (the same history goes on)."""
        self.session_id = session_id

    # ---- sockets -------------------------------------------------------------------------------

    def attach(self, sink):
        """(subscriber id, a reader of events 1..now) for a new socket; live events follow.

        The reader has a file descriptor of its own, so the snapshot stays readable even if the
        conversation is removed while it streams."""
        subscriber = next(self._ids)
        self._sockets[subscriber] = sink
        return subscriber, self._history.reader() if self._history is not None else ReleasedReader(self._released_at)

    def attach_item_reader(self, sink) -> int:
        """A subscriber id for a thread socket: an origin of sends like any socket, told
        everything a chat socket is told except the native frames."""
        subscriber = next(self._ids)
        self._sockets[subscriber] = sink
        self._item_readers.add(subscriber)
        return subscriber

    def detach(self, subscriber: int) -> None:
        self._sockets.pop(subscriber, None)
        self._item_readers.discard(subscriber)

    def watched(self, subscriber: int) -> None:
        """The socket that just sent: it is told everything first (its writer wakes first), so
        the page where a person waits for the answer is never the last of many."""
        self._watched = subscriber

    def _in_order(self, skip=()) -> list:
        sinks = [sink for subscriber, sink in self._sockets.items() if subscriber not in skip]
        first = self._sockets.get(self._watched)
        if first is not None and sinks and sinks[0] is not first and first in sinks:
            sinks.remove(first)
            sinks.insert(0, first)
        return sinks

    def has(self, subscriber: int) -> bool:
        return subscriber in self._sockets

    def reads_native(self) -> bool:
        """Whether a chat socket (not a thread socket) is attached."""
        return any(subscriber not in self._item_readers for subscriber in self._sockets)

    def close_sockets(self, code: int) -> None:
        for sink in self._sockets.values():
            sink.close(code)
        self._sockets.clear()
        self._item_readers.clear()

    # ---- what the sockets are told -------------------------------------------------------------

    def store(self, raws: list[bytes]) -> None:
        """Appends CLI frames to the history (one write) and sends them to every socket.
        HistoryWriteError propagates: the caller stops the CLI rather than lose an event."""
        if self._history is None:
            self._history = EventHistory(base=self._released_at)
        first = self._history.append_many(raws)
        message = NativeEvents(first, tuple(raws))
        readers = self._item_readers
        for sink in self._in_order(skip=readers) if readers else self._in_order():
            sink.push(message)

    def publish(self, record: dict, pending) -> None:
        message = SessionState(record, tuple(pending))
        for sink in self._in_order():
            sink.push(message)

    def answer(self, subscriber: int, command_id: str, delivery: str | None = None, error: str | None = None):
        """A send's result goes to the socket that sent it, and only there (gone: nobody to tell)."""
        sink = self._sockets.get(subscriber)
        if sink is not None:
            sink.push(CommandResult(self.session_id, command_id, delivery, error))

    def tell(self, subscriber: int, message: str) -> None:
        sink = self._sockets.get(subscriber)
        if sink is not None:
            sink.push(Notice(message))

    def tell_everyone(self, message: str, item_readers: bool = True) -> None:
        """A notice to every socket; ``item_readers=False``: to chat sockets only (what the
        thread sockets read as an item already)."""
        notice = Notice(message)
        for subscriber, sink in list(self._sockets.items()):
            if item_readers or subscriber not in self._item_readers:
                sink.push(notice)

    def new_history(self) -> None:
        """Starts over on an empty history (the old one could not be written)."""
        self.release()

    def release(self) -> None:
        """Gives the history's file and memory back (nothing reads it and no CLI writes it): a
        snapshot says its events were released; new ones go on numbering after them."""
        if self._history is not None:
            self._released_at = self._history.last_sequence
            self._history.close()
            self._history = None

    @property
    def holds_history(self) -> bool:
        return self._history is not None

    def close(self) -> None:
        self.release()

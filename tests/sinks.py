"""The one stand-in for a socket's sink (web/sinks.SocketSink) in the tests: what an actor
pushes is kept in order, as a client would read it.

``encode`` turns a typed message into frames as the real socket's sink would (web/chat_socket,
web/thread_socket, web/core/wire); without it a pushed frame (bytes) is kept as it came. Every
frame is kept decoded (``frames``). Sinks that share a ``journal`` list note there, by their
``name``, the type of each message and each close, in the order they were told.
"""
from __future__ import annotations

import json

import gevent


class Sink:
    def __init__(self, encode=None, *, name: str | None = None, journal: list | None = None):
        self._encode = encode
        self.name, self._journal = name, journal
        self.frames: list = []
        self.closed = False
        self.closed_with = None

    def push(self, message) -> None:
        if self._journal is not None:
            self._journal.append((self.name, type(message).__name__))
        if self._encode is not None:
            self.frames += [json.loads(frame) for frame in self._encode(message)]
        elif isinstance(message, (bytes, str)):
            self.frames.append(json.loads(message))
        else:
            self.frames.append(message)

    def close(self, code, reason="") -> None:
        self.closed, self.closed_with = True, code
        if self._journal is not None:
            self._journal.append((self.name, f"close {code}"))

    def wait_for(self, predicate, what: str = "a matching frame", timeout: float = 60, show=None) -> dict:
        """The first frame ``predicate`` holds for, waiting for it up to ``timeout`` s (``show``:
        how the last frames are named in the failure)."""
        def last():
            return [show(f) for f in self.frames[-12:]] if show else self.frames[-12:]
        with gevent.Timeout(timeout, AssertionError(f"no {what} in {last()}")):
            while True:
                for frame in self.frames:
                    if predicate(frame):
                        return frame
                gevent.sleep(0.005)

"""The log in the browser: ``/__devhost__/ws/log?pageURL=&chatTarget=`` on a routed hostname.

Scoped like the Chat API: the page's directory is resolved from its own address and target
(refused before the upgrade otherwise), and only that directory's records are sent: first the
latest LOG_ENTRIES (``{type: "snapshot", entries}``), then each as it comes
(``{type: "entry", entry}``). A record is ``{time, session, harness, record, fields}``: the same
records as the terminal's lines (actors/chatlog.py), so it never holds a prompt, a reply, a
tool's input or output, or an answer. The page sends nothing.
"""
from __future__ import annotations

from actors.chatlog import BOOK
from web.sockets import SocketRoute, frame


def _public(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "root"}


def encode(entry: dict) -> list[bytes]:
    return [frame({"type": "entry", "entry": _public(entry)})]


def serve_log_socket(ws, root: str) -> None:
    def attach(sink):
        latest = BOOK.subscribe(root, sink)
        sink.push(frame({"type": "snapshot", "entries": [_public(e) for e in latest]}))
        return sink

    # Nothing is read from the page: its frames are ignored until it closes.
    SocketRoute("log", attach, encode=encode, detach=lambda sink: BOOK.unsubscribe(root, sink)).serve(ws)

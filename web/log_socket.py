"""The log in the browser: ``/__devhost__/ws/log?pageURL=&chatTarget=`` on a routed hostname.

Scoped like the Chat API: the page's directory is resolved from its own address and target
(refused before the upgrade otherwise), and only that directory's records are sent: first the
latest LOG_ENTRIES (``{type: "snapshot", entries}``), then each as it comes
(``{type: "entry", entry}``). A record is ``{time, session, harness, record, fields}``: the same
records as the terminal's lines (actors/chatlog.py), so it never holds a prompt, a reply, a
tool's input or output, or an answer. The page sends nothing.
"""
from __future__ import annotations

import json

from actors.chatlog import BOOK
from actors.guard import spawn_logged
from web.sinks import SocketSink, abort, write_live


def _frame(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _public(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "root"}


def encode(entry: dict) -> list[bytes]:
    return [_frame({"type": "entry", "entry": _public(entry)})]


def serve_log_socket(ws, root: str) -> None:
    sink = SocketSink(abort=lambda: abort(ws), encode=encode)
    latest = BOOK.subscribe(root, sink)
    sink.push(_frame({"type": "snapshot", "entries": [_public(e) for e in latest]}))
    writer = spawn_logged(write_live, ws, sink)
    try:
        while not sink.closed and ws.receive() is not None:
            pass  # nothing is read from the page; its frames are ignored until it closes
    except Exception:  # noqa: BLE001 - a broken or oversized frame ends the stream like a close
        pass
    finally:
        BOOK.unsubscribe(root, sink)
        sink.close(1000)
        writer.join(timeout=5)
        if not writer.dead:
            writer.kill(block=False)

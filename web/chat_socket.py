"""One page's chat WebSocket: a snapshot, then live frames, and the page's commands.

The socket's greenlet reads commands; a writer greenlet owns every write, fed by the sink the
Chat actor pushes into. The snapshot streams the history from disk as one fragmented message,
so a long conversation does not have to fit in memory.
"""
from __future__ import annotations

import json

import gevent

from actors.chatlog import daemon_log
from actors.core.visuals import with_visuals
from actors.guard import spawn_logged
from actors.messages import CommandResult, NativeEvents, Notice, SessionState
from actors.tell import tell
from storage.manifest import DEFAULT_PROMPT, DEFAULT_PROMPT_NO_GIT, prompt_for
from web.commands import CommandError, Interrupt, Respond, Send, parse_command
from web.routing import RouteError, resolve_directory
from web.sinks import SocketSink, abort, encoded_once, write_live
from web.websocket import MessageTooBig

def serve_chat_socket(ws, context, chat, record, query: dict, request_hostname) -> None:
    sink = SocketSink(abort=lambda: abort(ws), encode=encode)
    try:
        subscriber, record, pending, reader = chat.attach(sink).get(timeout=10)
    except Exception as exc:  # noqa: BLE001 - the chat is gone or busy; the page reconnects
        ws.send_text(frame({"type": "error", "message": f"could not attach to the session: {exc}"}))
        ws.close(1011)
        return
    writer = spawn_logged(_write, ws, sink, record, pending, reader)
    try:
        _read(ws, context, chat, subscriber, record["projectRootPath"], query, request_hostname, sink)
    finally:
        tell(chat, "detach", subscriber)  # nothing waits on it; a chat gone already is no error
        sink.close(1000)
        writer.join(timeout=5)
        if not writer.dead:
            writer.kill(block=False)


MOVED = ("this page's checkout changed since the session started; the session keeps working in its "
         "own directory: open a new session for the current checkout")


def commands(ws, sink, parse, refuse):
    """A page's commands as they come, parsed; an unreadable one is refused (``refuse(error)``)
    and skipped. Ends when the page closes, or with a 1009 close for a frame over the limit."""
    while not sink.closed:
        try:
            message = ws.receive()
        except MessageTooBig:
            sink.push(frame({"type": "error", "message": "a frame over 16 MiB was refused; a send must fit in 8 MiB"}))
            sink.close(1009, "message too big")
            return
        if message is None:
            return
        try:
            yield parse(message)
        except CommandError as exc:
            sink.push(refuse(exc))


def _read(ws, context, chat, subscriber, root, query, request_hostname, sink) -> None:
    session_id = query.get("sessionId")
    for command in commands(ws, sink, parse_command, lambda exc: refusal(exc.command_id, str(exc), session_id)):
        if directory_now(context, query, request_hostname) != root:
            sink.push(refusal(getattr(command, "command_id", None), MOVED, chat_id=session_id))
            continue
        if isinstance(command, Send):
            tell(chat, "send", subscriber, command, page_prompt(context.manifests.current(), root))
        elif isinstance(command, Interrupt):
            tell(chat, "interrupt", subscriber)
        elif isinstance(command, Respond):
            tell(chat, "respond", subscriber, command.request_id, command.result)


def page_prompt(manifest, root: str) -> str:
    """What a page's message gets appended: the manifest's prompt for the folder, and, when it
    is devhostd's own, how the agent can show the person a page (actors/core/visuals.py)."""
    prompt = prompt_for(manifest, root)
    return with_visuals(prompt, prompt in (DEFAULT_PROMPT, DEFAULT_PROMPT_NO_GIT))


def directory_now(context, query, request_hostname) -> str | None:
    try:
        return resolve_directory(context.manifests.current(), query.get("pageURL"), query.get("chatTarget"),
                                 request_hostname=request_hostname, source_root=context.source_root)
    except RouteError:
        return None


def _write(ws, sink, record, pending, reader) -> None:
    try:
        try:
            ws.send_fragments(_snapshot_pieces(record, pending, reader))
        finally:
            reader.close()
    except Exception as exc:  # noqa: BLE001 - a dead peer (OSError, geventwebsocket's errors) or a bug
        if not ws.closed:
            daemon_log(f"chat socket writer of session {record['id']} stopped: {exc!r}")
            abort(ws)  # a half-sent snapshot must not leave the page waiting
        sink.closed = True
        return
    write_live(ws, sink)


def _snapshot_pieces(record, pending, reader):
    snapshot = {"type": "snapshot", "session": record, "pendingRequestIds": pending}
    if getattr(reader, "released", False):
        # The events before this one were released (nothing read them and no CLI ran): the
        # chat's items keep the conversation; the next event's sequence follows the last one.
        snapshot["historyReleased"] = True
        snapshot["lastReleasedSequence"] = reader.base
    head = json.dumps(snapshot, separators=(",", ":")).encode()
    yield head[:-1] + b',"events":['
    for count, (sequence, raw) in enumerate(reader):
        if count and count % 256 == 0:
            gevent.sleep(0)  # a long history must not hold the hub
        yield (b"," if count else b"") + b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw)
    yield b"]}"


def _encode(message) -> list[bytes]:
    """The Chat API's frames for what a conversation tells a socket (actors/messages.py).
    A native event's payload is the CLI's own line, spliced in as it is: never re-encoded."""
    if isinstance(message, NativeEvents):
        return [b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw)
                for sequence, raw in enumerate(message.raws, message.first)]
    if isinstance(message, SessionState):
        return [frame({"type": "state", "session": message.record, "pendingRequestIds": list(message.pending)})]
    if isinstance(message, CommandResult):
        result = {"type": "command_result", "sessionId": message.session_id, "commandId": message.command_id}
        if message.error is not None:
            result["error"] = message.error
        else:
            result["delivery"] = message.delivery
        return [frame(result)]
    if isinstance(message, Notice):
        return [frame({"type": "error", "message": message.message})]
    raise TypeError(f"a chat socket has no frame for {message!r}")


encode = encoded_once(_encode)


def refusal(command_id, message: str, chat_id=None) -> bytes:
    if command_id:
        return frame({"type": "command_result", "sessionId": chat_id, "commandId": command_id, "error": message})
    return frame({"type": "error", "message": message})


def frame(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()

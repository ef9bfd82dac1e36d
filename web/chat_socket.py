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
from actors.errors import ChatError
from actors.messages import CommandResult, NativeEvents, Notice, SessionState
from actors.tell import tell
from storage.manifest import DEFAULT_PROMPT, DEFAULT_PROMPT_NO_GIT, prompt_for
from web.commands import CommandError, Configure, Interrupt, Send, parse_command
from web.mode_switch import switch
from web.routing import RouteError, resolve_directory
from web.sinks import abort, encoded_once, write_live
from web.sockets import NotAttached, SocketRoute, frame

TOO_BIG = b'{"type":"error","message":"a frame over 16 MiB was refused; a send must fit in 8 MiB"}'


def serve_chat_socket(ws, context, chat, record, query: dict, request_hostname) -> None:
    root, session_id = record["projectRootPath"], query.get("sessionId")

    def attach(sink):
        try:
            return chat.attach(sink).get(timeout=10)  # (subscriber, record, pending, reader)
        except Exception as exc:  # noqa: BLE001 - the chat is gone or busy; the page reconnects
            raise NotAttached(f"could not attach to the session: {exc}") from None

    def respond(command, sink, attached):
        if isinstance(command, Configure):
            configure(context, chat, root, command, sink)
        else:
            tell(chat, "respond", attached[0], command.request_id, command.result)

    receive = page_commands(context, chat, lambda attached: attached[0], root, query, request_hostname, parse_command,
                            lambda exc: refusal(exc.command_id, str(exc), session_id),
                            lambda command: refusal(getattr(command, "command_id", None), MOVED, chat_id=session_id),
                            respond)

    SocketRoute("chat", attach, receive, encode=encode, too_big=TOO_BIG, write=_write,
                # nothing waits on the detach; a chat gone already is no error
                detach=lambda attached: tell(chat, "detach", attached[0])).serve(ws)


def page_commands(context, chat, subscriber_of, root, query, request_hostname, parse, unreadable, moved, other):
    """How a page socket takes a frame: ``parse`` it (a CommandError is answered ``unreadable``),
    refuse it (``moved``) once the page's checkout is no longer the session's, tell the chat a
    send or an interrupt, and hand anything else to ``other(command, sink, attached)``."""
    def receive(message, sink, attached):
        try:
            command = parse(message)
        except CommandError as exc:
            sink.push(unreadable(exc))
            return
        if directory_now(context, query, request_hostname) != root:
            sink.push(moved(command))
        elif isinstance(command, Send):
            tell(chat, "send", subscriber_of(attached), command, page_prompt(context.manifests.current(), root))
        elif isinstance(command, Interrupt):
            tell(chat, "interrupt", subscriber_of(attached))
        else:
            other(command, sink, attached)
    return receive


def configure(context, chat, root: str, command: Configure, sink) -> None:
    """The session's runtime mode (web/mode_switch.py): asked, so a refusal comes back to this page."""
    try:
        warning = switch(context, chat, root, command.runtime_mode, command.plan)
    except ChatError as exc:
        warning = str(exc)
    except Exception as exc:  # noqa: BLE001 - a busy or stopped chat: the page may ask again
        warning = f"the mode was not changed ({type(exc).__name__}); try again"
    if warning:
        sink.push(frame({"type": "error", "message": warning}))


MOVED = ("this page's checkout changed since the session started; the session keeps working in its "
         "own directory: open a new session for the current checkout")


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


def _write(ws, sink, attached) -> None:
    _, record, pending, reader = attached
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

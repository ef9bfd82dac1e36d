"""The panel's thread socket: one conversation as the chat core's items, scoped to a page.

``/__devhost__/ws/thread?sessionId=&pageURL=&chatTarget=[&since=N][&historyLimit=N]`` on a routed hostname,
under the chat socket's rules (Host, exact Origin, refused before the upgrade, the page's
directory checked on attach and again before every command). The items are the one
projection of the CLI's frames (each harness's ``projection.py`` under ``actors/harness/``): the
panel renders them and decodes nothing itself. The native chat socket (web/chat_socket.py) stays
as it is, for integrations.

Frames to the page:
- ``{type: "snapshot", session, seq, info, items}``: everything, on attach; with ``historyLimit``
  only the newest items (at most that many, 1..100: the chat core's history pages) and
  ``history: {start, cursor}``, where ``cursor`` (null when nothing is older) asks for the rest;
- ``{type: "history", cursor, items, history: {start, cursor}}``: the answer to a ``history``
  command, the page of items just before the cursor asked (``cursor`` echoes it); or
  ``{type: "history", cursor, error: {code, message}}`` (``history-expired`` after a clear or a
  rewind: the page attaches again for a new snapshot);
- ``{type: "resumed", session, seq}``: on attach with ``since`` while the chat's log still holds
  every event after it; the events follow as ordinary ``event`` frames;
- ``{type: "event", seq, event}``: one item event (``item``, ``delta``, ``info``, ``reset``);
- ``{type: "state", session}``, ``{type: "command_result", ...}``, ``{type: "error", message}``
  as on the chat socket; an answer refused names its request: ``{type: "error", requestId, message}``.

Frames from the page: ``send`` and ``interrupt`` as on the chat socket; ``history {cursor,
limit?}`` for the page of older items (chat.history's rules: newest first, at most 100); ``approve {requestId,
decision: allow | allow-always | deny}`` and ``answer {requestId, answers: {questionId: text}}``
in the chat core's words (the projector turns them into the CLI's own answer); ``stopTask
{taskId}`` and ``stopSubagent {subagentId}`` for background work; ``configure
{resumeAtReset?, runtimeMode?, plan?, account?}`` for the take-up of a turn that stopped on a usage limit
and the session's runtime mode (web/mode_switch.py: also remembered for the checkout's next
conversation), and whether it plans first; an ``approve`` of a plan may name the
``runtimeMode`` to go on in; ``bookmark {itemId,
name?}`` and ``unbookmark {itemId}``, whose list comes back as ``{type: "bookmarks", bookmarks}``
(also after the snapshot).
"""
from __future__ import annotations

import json

from actors.chatlog import daemon_log
from actors.core.history import MAX_PAGE_ITEMS, PAGE_ITEMS
from actors.errors import ChatError
from actors.harness.mode_names import RUNTIME_MODES
from actors.messages import ChatBookmarks, ChatEvent, ChatVisuals, CommandResult, Notice, SessionState
from actors.tell import tell
from web import command_rules as rules
from web.chat_socket import MOVED, TOO_BIG, page_commands, refusal
from web.chat_socket import encode as chat_encode
from web.commands import CommandError, Interrupt, Send, parse_command
from web.mode_switch import switch
from web.sinks import abort, encoded_once, write_live
from web.sockets import LIST_HERE, NotAttached, SocketRoute, frame, frame_with_list

ASK_TIMEOUT = 10.0


def serve_thread_socket(ws, context, chat, record, query: dict, request_hostname) -> None:
    root, session_id = record["projectRootPath"], query.get("sessionId")

    def attach(sink):
        try:
            return chat.thread_attach(sink, parse_since(query.get("since")),
                                      parse_history_limit(query.get("historyLimit"))).get(timeout=ASK_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the chat is gone or busy; the page reconnects
            raise NotAttached(f"could not attach to the session: {exc}") from None

    receive = page_commands(context, chat, lambda attached: attached["subscriber"], root, query, request_hostname,
                            _parse, lambda exc: _unreadable(exc, session_id),
                            lambda command: _answer_refused(command, MOVED, session_id),
                            lambda command, sink, attached: _settle(context, chat, root, command, sink))

    def write(ws, sink, attached):
        _write(ws, sink, _first_frames(attached, f"http://{context.visuals_host}"), attached["session"]["id"])

    SocketRoute("thread", attach, receive, encode=encode, too_big=TOO_BIG, write=write,
                detach=lambda attached: tell(chat, "thread_detach", attached["subscriber"], attached["reader"])
                ).serve(ws)


def parse_since(value) -> int | None:
    """``since`` from the address: a sequence number, or None (a snapshot)."""
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 18:
        raise ValueError("since must be a sequence number (0 or more)")
    return int(value)


def parse_history_limit(value) -> int | None:
    """``historyLimit`` from the address: how many of the newest items the snapshot holds (1..100,
    chat.attach's rule), or None (every item: what a panel that does not page reads)."""
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_PAGE_ITEMS:
        raise ValueError(f"historyLimit must be 1..{MAX_PAGE_ITEMS}")
    return int(value)


def _first_frames(attached: dict, visuals_origin: str) -> list[bytes]:
    if "events" in attached:
        first = attached["seq"] - len(attached["events"]) + 1
        return [frame({"type": "resumed", "session": attached["session"], "seq": first - 1})] + \
            [_event(seq, event) for seq, event in enumerate(attached["events"], first)] + \
            [frame({"type": "bookmarks", "bookmarks": attached["bookmarks"]}),
             frame({"type": "visuals", "visuals": attached["visuals"], "origin": visuals_origin})]
    paged = {"history": attached["history"]} if "history" in attached else {}
    # A whole chat (no historyLimit) is megabytes: its items are encoded a piece at a time.
    return [frame_with_list({"type": "snapshot", "session": attached["session"], "seq": attached["seq"],
                             "info": attached["info"], "items": LIST_HERE, **paged, "bookmarks": attached["bookmarks"],
                             "visuals": attached["visuals"], "visualsOrigin": visuals_origin}, attached["items"])]


def _write(ws, sink, first: list[bytes], session: str) -> None:
    try:
        ws.send_texts(first)
    except Exception as exc:  # noqa: BLE001 - a dead peer (OSError, geventwebsocket's errors) or a bug
        if not ws.closed:
            daemon_log(f"thread socket writer of session {session} stopped: {exc!r}")
            abort(ws)
        sink.closed = True
        return
    write_live(ws, sink)


def _answer_refused(command, text: str, session_id) -> bytes:
    if isinstance(command, dict):  # an answer names its request; a stop names nothing more
        named = {"requestId": command["requestId"]} if "requestId" in command else {}
        return frame({"type": "error", **named, "message": text})
    return refusal(getattr(command, "command_id", None), text, chat_id=session_id)


def _settle(context, chat, root: str, command: dict, sink) -> None:
    """An approval or a question answered in the core's words: asked, so a refusal (answered
    already, withdrawn) goes back to this page naming the request."""
    if command["type"] == "history":
        _history(chat, command, sink)
        return
    named = {"requestId": command["requestId"]} if "requestId" in command else {}
    try:
        if command["type"] == "approve":
            chat.approve(command["requestId"], command["decision"], command.get("message"),
                         command.get("runtimeMode")).get(timeout=ASK_TIMEOUT)
        elif command["type"] == "answer":
            chat.answer(command["requestId"], command["answers"]).get(timeout=ASK_TIMEOUT)
        elif command["type"] == "stopTask":
            chat.stop_task(command["taskId"]).get(timeout=ASK_TIMEOUT)
        elif command["type"] == "configure":
            warning = switch(context, chat, root, command["runtimeMode"], command["plan"],
                             resume_at_reset=command["resumeAtReset"], account=command["account"])
            if warning:
                sink.push(frame({"type": "error", "message": warning}))
        elif command["type"] == "bookmark":
            chat.add_bookmark(command["itemId"], command.get("name")).get(timeout=ASK_TIMEOUT)
        elif command["type"] == "unbookmark":
            chat.remove_bookmark(command["itemId"]).get(timeout=ASK_TIMEOUT)
        else:
            chat.stop_subagent(command["subagentId"]).get(timeout=ASK_TIMEOUT)
    except ChatError as exc:
        sink.push(frame({"type": "error", **named, "message": str(exc)}))
    except Exception as exc:  # noqa: BLE001 - a busy or stopped chat: the page may ask again
        sink.push(frame({"type": "error", **named, "message": f"not taken ({type(exc).__name__}); try again"}))


def _history(chat, command: dict, sink) -> None:
    """A page of older items (the chat core's chat.history), to this page only."""
    asked = {"type": "history", "cursor": command["cursor"]}
    try:
        answer = chat.history(command["cursor"], command["limit"]).get(timeout=ASK_TIMEOUT)
    except ChatError as exc:
        sink.push(frame({**asked, "error": {"code": exc.code, "message": str(exc)}}))
        return
    except Exception as exc:  # noqa: BLE001 - a busy or stopped chat: the page may ask again
        said = f"not taken ({type(exc).__name__}); try again"
        sink.push(frame({**asked, "error": {"code": "chat-busy", "message": said}}))
        return
    sink.push(frame({**asked, "items": answer["items"], "history": answer["history"]}))


def _history_command(value: dict) -> dict:
    cursor, limit = value.get("cursor"), value.get("limit", PAGE_ITEMS)
    if cursor is not None and (not isinstance(cursor, str) or not 1 <= len(cursor) <= 128):
        raise CommandError("history takes the cursor a snapshot or a history page gave (1..128 characters)")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE_ITEMS:
        raise CommandError(f"history's limit is 1..{MAX_PAGE_ITEMS} items")
    return {"type": "history", "cursor": cursor, "limit": limit}


def _parse(message):
    """A page's frame: a send or interrupt (web/commands.py), or a request in the core's words
    (web/command_rules.py: the core's own checks)."""
    try:
        value = json.loads(message)
    except (ValueError, RecursionError):
        value = None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "history":
        return _history_command(value)
    if kind not in ("stopTask", "stopSubagent", "bookmark", "unbookmark", "configure", "approve", "answer"):
        command = parse_command(message)
        if not isinstance(command, (Send, Interrupt)):
            raise CommandError("on the thread socket a request is answered with approve or answer, not respond")
        return command
    try:
        if kind == "stopTask":
            return {"type": kind, "taskId": rules.task_id(value)}
        if kind == "stopSubagent":
            return {"type": kind, "subagentId": rules.subagent_id(value)}
        if kind in ("bookmark", "unbookmark"):
            item = rules.item_id(value)
            return {"type": kind, "itemId": item, "name": rules.bookmark_name(value) if kind == "bookmark" else None}
        if kind == "configure":
            return _configure(value)
        if kind == "approve":
            request_id, decision, said, mode = rules.approval(value)
            return {"type": kind, "requestId": request_id, "decision": decision, "message": said, "runtimeMode": mode}
        request_id, answers = rules.answers(value)
        return {"type": kind, "requestId": request_id, "answers": answers}
    except rules.Invalid as exc:
        if exc.request_id is not None:
            raise AnswerRefused(exc.request_id, str(exc)) from None
        raise CommandError(str(exc)) from None


def _configure(value: dict) -> dict:
    command = {"type": "configure", "resumeAtReset": rules.resume_at_reset(value, required=False),
               "runtimeMode": rules.runtime_mode(value), "plan": rules.plan(value), "account": rules.account(value)}
    if all(command[key] is None for key in ("resumeAtReset", "runtimeMode", "plan")) and command["account"] is ...:
        raise rules.Invalid("configure takes resumeAtReset (true or false), runtimeMode (one of: "
                            f"{', '.join(RUNTIME_MODES)}), plan (true or false) or account (a manifest name, "
                            "or null for the CLI's default)")
    return command


class AnswerRefused(CommandError):
    """An answer that cannot be read: refused naming its request, which is open again."""

    def __init__(self, request_id, message: str):
        super().__init__(message)
        self.request_id = request_id


def _unreadable(exc: CommandError, session_id) -> bytes:
    if isinstance(exc, AnswerRefused):
        return frame({"type": "error", "requestId": exc.request_id, "message": str(exc)})
    return refusal(exc.command_id, str(exc), chat_id=session_id)


# ---- encoding ---------------------------------------------------------------------------------

def _encode(message) -> list[bytes]:
    if isinstance(message, ChatEvent):
        return [_event(message.seq, message.event)]
    if isinstance(message, SessionState):
        return [frame({"type": "state", "session": message.record})]
    if isinstance(message, ChatBookmarks):
        return [frame({"type": "bookmarks", "bookmarks": message.bookmarks})]
    if isinstance(message, ChatVisuals):
        return [frame({"type": "visuals", "visuals": message.visuals})]
    if isinstance(message, (CommandResult, Notice)):
        return chat_encode(message)  # the same frames as the chat socket's
    raise TypeError(f"a thread socket has no frame for {message!r}")


encode = encoded_once(_encode)


def _event(seq: int, event: dict) -> bytes:
    return frame({"type": "event", "seq": seq, "event": event})

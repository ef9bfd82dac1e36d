"""The chat core's protocol: requests over a WebSocket or one per POST.

Envelope: a request ``{id, type, payload}`` is answered ``{id, ok: true, result}`` or
``{id, ok: false, error: {code, message}}``; events are ``{type: "event", event, payload}``.
Served on the control origin only (an app's integration, not a page's): a routed hostname
gets 403. Codes: ``bad-request`` (unreadable frame or payload), ``unknown-request``,
``internal`` (logged), and the chat layer's own (``chat-not-found``, ``chat-busy``, ...).
"""
from __future__ import annotations

import base64
import json
import os
import time
import unicodedata

import gevent

import pykka

from actors.chatlog import daemon_log
from actors.core import attachments as attachment_rules
from actors.errors import ChatError
from actors.messages import ChatBookmarks, ChatEvent, ChatStatus, ChatVisuals
from actors.registry import RUNTIME_MODES
from storage import write_failure
from storage.attachments import read_file
from actors.harness.claude.files import claude_subagent_transcript
from actors.harness.claude.saved import claude_items
from actors.harness.codex.saved import codex_child_items, codex_transcript
from web.auth import PERSON, Caller
from web.sinks import SocketSink, abort, write_live
from web.websocket import MAX_MESSAGE_BYTES, MessageTooBig

ASK_TIMEOUT = 15.0
MAX_REQUEST_BYTES = 15 << 20  # a message with 10 MiB of attachments, base64, fits
_DECISIONS = ("allow", "allow-always", "deny")


def _text(payload, key, required=True, limit=200_000):
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        raise ChatError("bad-request", f"`{key}` must be a non-empty string")
    return value


def _chat_id(payload) -> str:
    chat_id = _text(payload, "chatId", limit=200)
    if any(unicodedata.category(c) == "Cc" for c in chat_id):
        raise ChatError("bad-request", "`chatId` may not hold control characters")
    return chat_id


def _request_name(frame) -> str:
    """A request for a log line: its type, and the session (chat id) it was about when it names one
    that passed its check."""
    if not isinstance(frame, dict):
        return "?"
    payload = frame.get("payload")
    try:
        chat_id = _chat_id(payload) if isinstance(payload, dict) and "chatId" in payload else None
    except ChatError:
        chat_id = None
    return f"{frame.get('type')}" + (f" of session {chat_id}" if chat_id else "")


def _request_id(payload):
    value = payload.get("requestId")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ChatError("bad-request", "`requestId` must be the request's id (a string or a number)")
    return value


def _bug(frame, request_id, exc: Exception) -> dict:
    daemon_log(f"bug: core request {_request_name(frame)} failed: {exc!r}")
    return {"id": request_id, "ok": False, "error": {"code": "internal", "message": "the request failed"}}


class CoreService:
    """Turns envelopes into asks of the registry and its chats. One per daemon."""

    def __init__(self, registry: pykka.ActorProxy, clients, visuals: pykka.ActorProxy | None = None):
        self.registry = registry
        self.clients = clients
        self.visuals = visuals

    def _chat(self, payload):
        return _get(self.registry.chat(_chat_id(payload)))

    def handle(self, frame, client=None, caller: Caller = PERSON) -> dict:
        """One envelope in, one answer out; never raises. ``caller`` says who asks: an agent may
        make only its own chat's agent-side requests (web/auth.py)."""
        request_id = frame.get("id") if isinstance(frame, dict) and isinstance(frame.get("id"), str) else None
        try:
            if not isinstance(frame, dict) or not request_id or not isinstance(frame.get("type"), str) \
                    or not frame["type"]:
                raise ChatError("bad-request", "a request is {id: <non-empty string>, type: <name>, payload: {...}}")
            payload = frame.get("payload", {})
            if not isinstance(payload, dict):
                raise ChatError("bad-request", "`payload` must be an object")
            handler = getattr(self, "do_" + frame["type"].replace(".", "_"), None)
            if handler is None or not frame["type"].startswith(("chat.", "visuals.")):
                raise ChatError("unknown-request", f"unknown request {frame['type']!r}")
            refusal = caller.refusal(frame["type"], payload)
            if refusal:
                raise ChatError("forbidden", refusal)
            return {"id": request_id, "ok": True, "result": handler(payload, client)}
        except ChatError as exc:
            return {"id": request_id, "ok": False, "error": {"code": exc.code, "message": str(exc)}}
        except pykka.Timeout:
            return {"id": request_id, "ok": False,
                    "error": {"code": "internal", "message": "the chat is busy; try again"}}
        except OSError as exc:
            if not write_failure.is_full(exc):
                return _bug(frame, request_id, exc)
            # A full disk is the machine's state, not a bug: the person is told what to free.
            full = {"code": "storage-full", "message": write_failure.not_done(exc)}
            return {"id": request_id, "ok": False, "error": full}
        except Exception as exc:  # noqa: BLE001 - answered as internal, and logged as the bug it is
            return _bug(frame, request_id, exc)

    # ---- requests ------------------------------------------------------------------------------

    def do_chat_create(self, payload, client):
        clean = {"chatId": _chat_id(payload)}
        for key in ("provider", "cwd", "resume", "runtimeMode"):
            if payload.get(key) is not None:
                clean[key] = _text(payload, key, limit=4096)
        if isinstance(payload.get("selection"), dict):
            model = payload["selection"].get("model")
            clean["selection"] = {"model": model if isinstance(model, str) else None}
        return _get(self.registry.create_chat(clean))

    def do_chat_list(self, payload, client):
        return {"chats": _get(self.registry.list_chats())}

    def do_chat_configure(self, payload, client):
        model = None
        if isinstance(payload.get("selection"), dict) and "model" in payload["selection"]:
            model = payload["selection"]["model"] or ""
            if not isinstance(model, str):
                raise ChatError("bad-request", "`selection.model` must be a model id")
        runtime_mode = payload.get("runtimeMode")
        if runtime_mode is not None and runtime_mode not in RUNTIME_MODES:
            raise ChatError("bad-request", f"runtimeMode must be one of: {', '.join(RUNTIME_MODES)}")
        resume_at_reset = payload.get("resumeAtReset")
        if resume_at_reset is not None and not isinstance(resume_at_reset, bool):
            raise ChatError("bad-request", "`resumeAtReset` must be true or false")
        return _get(self._chat(payload).configure(model, runtime_mode, resume_at_reset, _restart_words(payload)))

    def do_chat_attach(self, payload, client):
        if client is None:
            raise ChatError("bad-request", "chat.attach streams events: use the WebSocket /__devhost__/ws/core")
        chat_id = _chat_id(payload)
        since, limit = payload.get("since"), payload.get("historyLimit")
        if since is not None and (isinstance(since, bool) or not isinstance(since, int) or since < 0):
            raise ChatError("bad-request", "`since` must be a sequence number (0 or more)")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100):
            raise ChatError("bad-request", "`historyLimit` must be 1..100")
        if chat_id in client.attached:  # attaching again replaces the earlier attach, never doubles it
            _get(self._chat(payload).core_detach(client.attached.pop(chat_id)))
        answer = _get(self._chat(payload).core_attach(client.sink, since, limit))
        client.attached[chat_id] = answer.pop("subscriber")
        return answer

    def do_chat_detach(self, payload, client):
        chat_id = _chat_id(payload)
        if client is not None and chat_id in client.attached:
            self._chat(payload).core_detach(client.attached.pop(chat_id))
        return {}

    def do_chat_history(self, payload, client):
        limit = payload.get("limit", 60)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ChatError("bad-request", "`limit` must be 1..100")
        cursor = payload.get("cursor")
        if cursor is not None and (not isinstance(cursor, str) or not 1 <= len(cursor) <= 128):
            raise ChatError("bad-request", "`cursor` is the one a history page gave (1..128 characters)")
        return _get(self._chat(payload).history(cursor, limit))

    def do_chat_send(self, payload, client):
        text = payload.get("text", "")
        uploads = payload.get("attachments")
        if not isinstance(text, str) or len(text) > 200_000:
            raise ChatError("bad-request", "`text` is the message (at most 200,000 characters)")
        delivery = payload.get("delivery")
        if delivery not in (None, "steer", "queue"):
            raise ChatError("bad-request", "`delivery` is steer or queue")
        if not text.strip() and not uploads:
            raise ChatError("bad-request", "A message needs text or an attachment")
        chat = self._chat(payload)
        # Decoded off the hub (up to 10 MiB); refused with the first problem.
        files = gevent.get_hub().threadpool.apply(attachment_rules.decode, (uploads,)) if uploads is not None else []
        answer = _get(chat.core_send(text, delivery, files))
        steered = answer.pop("steered", None)
        return Later(steered, answer) if steered is not None else answer

    # Forking, summarizing and moving a chat to another account are a host's own add-ons (the
    # seed's plain host refuses them): the requests exist, and say so.
    def do_chat_fork(self, payload, client):
        raise ChatError("chat-unsupported", "This host does not fork chats")

    do_chat_forkInfo = do_chat_summarize = do_chat_fork

    def do_chat_continueOn(self, payload, client):
        raise ChatError("chat-unsupported", "This host does not continue a chat under another account")

    def do_chat_attachment(self, payload, client):
        """An attachment of the chat's messages, or a visual's page, read back: {attachment:
        {id, name, mime, size}, data}."""
        attachment_id = _text(payload, "attachmentId", limit=64)
        try:
            return _get(self._chat(payload).attachment(attachment_id))
        except ChatError as exc:
            page = _get(self.visuals.page(_chat_id(payload), attachment_id)) if self.visuals is not None else None
            if exc.code != "item-not-found" or page is None:
                raise
        try:
            content = gevent.get_hub().threadpool.apply(read_file, (page["path"],))
        except OSError:
            raise ChatError("item-not-found", f"Visual {attachment_id} is gone from disk") from None
        return {"attachment": {k: page[k] for k in ("id", "name", "mime", "size")},
                "data": base64.b64encode(content).decode()}

    # ---- visuals (actors/visual_store.py) ---------------------------------------------------------

    def _visual_store(self):
        if self.visuals is None:
            raise ChatError("chat-unsupported", "This host keeps no visuals")
        return self.visuals

    def _known(self, chat_id: str) -> dict:
        known = _get(self.registry.known(chat_id))
        if known is None:
            raise ChatError("chat-not-found", f"No chat {chat_id}")
        return known

    def do_chat_publishVisual(self, payload, client):
        """A page an agent publishes in a chat (loaded or not); a visual published while a turn
        runs belongs to that turn unless the input names another."""
        chat_id = _chat_id(payload)
        store = self._visual_store()
        turn = self._known(chat_id)["activeTurnId"]
        fields = {k: payload.get(k) for k in ("title", "html", "maxHeight", "heights", "turnId") if k in payload}
        return {"visual": _get(store.publish(chat_id, fields, turn), timeout=VISUAL_WAIT)}

    def do_chat_listVisuals(self, payload, client):
        chat_id = _chat_id(payload)
        self._known(chat_id)
        return {"visuals": _get(self._visual_store().list(chat_id))}

    def do_chat_removeVisual(self, payload, client):
        chat_id = _chat_id(payload)
        self._chat(payload)  # the chat must be loaded (the seed's rule)
        return {"visuals": _get(self._visual_store().remove(chat_id, _text(payload, "visualId", limit=64)))}

    def do_visuals_copyChat(self, payload, client):
        """A fork's visuals: those of ``fromChatId`` it keeps (``keep``: ids; all when absent)."""
        source, target = _text(payload, "fromChatId", limit=200), _text(payload, "toChatId", limit=200)
        self._known(source)
        self._known(target)
        keep = payload.get("keep")
        if keep is not None and (not isinstance(keep, list) or not all(isinstance(k, str) for k in keep)):
            raise ChatError("bad-request", "`keep` is a list of visual ids")
        return {"visuals": _get(self._visual_store().copy_chat(source, target, keep), timeout=VISUAL_WAIT)}

    def do_visuals_removeChat(self, payload, client):
        """Takes back what a fork that failed wrote."""
        self._visual_store().remove_chat(_text(payload, "chatId", limit=200))
        return {}

    def do_chat_addBookmark(self, payload, client):
        return _get(self._chat(payload).add_bookmark(_text(payload, "itemId", limit=300), _name(payload)))

    def do_chat_renameBookmark(self, payload, client):
        name = _name(payload)
        if name is None:
            raise ChatError("bad-request", "`name` is the bookmark's new name (empty removes the name)")
        return _get(self._chat(payload).rename_bookmark(_text(payload, "itemId", limit=300), name))

    def do_chat_removeBookmark(self, payload, client):
        return _get(self._chat(payload).remove_bookmark(_text(payload, "itemId", limit=300)))

    def do_chat_unqueue(self, payload, client):
        return _get(self._chat(payload).unqueue(_text(payload, "messageId", limit=200)))

    def do_chat_sendNow(self, payload, client):
        return _get(self._chat(payload).send_now(_text(payload, "messageId", limit=200)))

    def do_chat_approve(self, payload, client):
        decision = payload.get("decision")
        if decision not in _DECISIONS:
            raise ChatError("bad-request", "`decision` is allow, allow-always or deny")
        message = payload.get("message") if isinstance(payload.get("message"), str) else None
        return _get(self._chat(payload).approve(_request_id(payload), decision, message))

    def do_chat_answer(self, payload, client):
        answers = payload.get("answers")
        if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
            raise ChatError("bad-request", "`answers` maps each question id to the answer text")
        return _get(self._chat(payload).answer(_request_id(payload), answers))

    def do_chat_dismiss(self, payload, client):
        return _get(self._chat(payload).dismiss(_text(payload, "itemId", limit=300)))

    def do_chat_cancel(self, payload, client):
        subagents = payload.get("subagents", False)
        if not isinstance(subagents, bool):
            raise ChatError("bad-request", "`subagents` must be true or false")
        return _get(self._chat(payload).cancel(subagents))

    def do_chat_subagent(self, payload, client):
        """A delegated agent's own conversation, read from the CLI's transcript, a page at a time;
        ``watch`` (on a socket) sends chat.subagentChanged as it grows."""
        chat_id = _chat_id(payload)
        cursor, limit = payload.get("cursor", 0), payload.get("limit", SUBAGENT_PAGE)
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
            raise ChatError("bad-request", "`cursor` must be a position (0 or more) a previous page gave")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ChatError("bad-request", "`limit` must be 1..100")
        watch = payload.get("watch")
        if watch is not None and not isinstance(watch, bool):
            raise ChatError("bad-request", "`watch` must be true or false")
        source = _get(self._chat(payload).subagent_source(_subagent_ref(payload)))
        if watch is False and client is not None:  # released before reading (the seed's rule)
            watcher = client.watching.pop((chat_id, source["subagentId"]), None)
            if watcher is not None:
                watcher.kill(block=False)
        items, stamp = _subagent_items(source)
        page = items[cursor:cursor + limit]
        answer = {"subagentId": source["subagentId"], "toolUseId": source.get("toolUseId"), "status": source["status"],
                  "live": source["status"] == "running",
                  "source": "codex-thread" if source["harness"] == "codex" else "claude-transcript",
                  "items": page, "total": len(items),
                  **({"nextCursor": cursor + len(page)} if cursor + len(page) < len(items) else {})}
        if watch:
            if client is None:
                raise ChatError("bad-request", "watch streams events: use the WebSocket /__devhost__/ws/core")
            key = (chat_id, source["subagentId"])
            if key not in client.watching:
                if len(client.watching) >= MAX_WATCHED:
                    raise ChatError("bad-request", f"a client may watch at most {MAX_WATCHED} subagents at once")
                from actors.guard import spawn_logged
                client.watching[key] = spawn_logged(_watch_subagent, self, client, chat_id, source, len(items), stamp)
        return answer

    def do_chat_stopTask(self, payload, client):
        return _get(self._chat(payload).stop_task(_text(payload, "taskId", limit=200)))

    def do_chat_stopSubagent(self, payload, client):
        return _get(self._chat(payload).stop_subagent(_subagent_ref(payload)))

    def do_chat_clear(self, payload, client):
        return _get(self._chat(payload).clear(payload.get("force") is True))

    def do_chat_compact(self, payload, client):
        return _get(self._chat(payload).compact())

    def do_chat_kill(self, payload, client):
        chat_id = _chat_id(payload)
        chat = self._chat(payload)
        gone = _get(chat.cli_gone())
        _get(chat.kill())
        # Not waited for here (the seed's kill does not wait); a daemon stopping waits for it.
        _get(self.registry.forget(chat_id, gone))
        return {}


class Later:
    """An answer that comes when the CLI acts: a steer is answered by what the CLI did with it
    (taken up, or refused); without word in STEER_WAIT it is what it is until then (queued: it
    goes out after the turn if the CLI never takes it). A socket waits for it in a greenlet of
    its own, so the client's next requests are not held up."""

    def __init__(self, result, meanwhile: dict):
        self.result, self.meanwhile = result, meanwhile

    def wait(self) -> dict:
        return self.result.get() if self.result.wait(STEER_WAIT) else self.meanwhile


def settled(answer: dict) -> dict:
    """``answer`` with a Later result waited for (the HTTP route answers once it is known)."""
    if isinstance(answer.get("result"), Later):
        return {**answer, "result": answer["result"].wait()}
    return answer


def _subagent_ref(payload) -> str:
    """A delegated agent named by its item's id or task id (``subagentId``), or, in the seed's
    words, by the tool call that started it (``toolUseId``)."""
    key = "toolUseId" if "toolUseId" in payload and "subagentId" not in payload else "subagentId"
    return _text(payload, key, limit=300)


def _restart_words(payload) -> dict:
    """chat.configure's words for a restart: ``endedAt`` (ms: the chat was stopped on purpose
    then), ``unownedReason`` (why a turn is not resumed), ``resumeWords {prompt?, note?}``;
    null removes one."""
    words = {}
    if "endedAt" in payload:
        value = payload["endedAt"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ChatError("bad-request", "`endedAt` is a time in ms since the epoch, or null")
        words["endedAt"] = value
    if "unownedReason" in payload:
        value = payload["unownedReason"]
        if value is not None and (not isinstance(value, str) or not 1 <= len(value) <= 300):
            raise ChatError("bad-request", "`unownedReason` is 1..300 characters, or null")
        words["unownedReason"] = value
    if "resumeWords" in payload:
        value = payload["resumeWords"]
        if value is not None and (not isinstance(value, dict) or set(value) - {"prompt", "note"} or not all(
                isinstance(v, str) and 1 <= len(v) <= 2000 for v in value.values())):
            raise ChatError("bad-request", "`resumeWords` is {prompt?, note?} (1..2000 characters each), or null")
        words["resumeWords"] = value
    return words


def _name(payload) -> str | None:
    name = payload.get("name")
    if name is not None and (not isinstance(name, str) or len(name) > 4000):
        raise ChatError("bad-request", "`name` must be text (a bookmark's name is cut at 120 characters)")
    return name


def _get(future, timeout: float = ASK_TIMEOUT):
    try:
        return future.get(timeout=timeout)
    except pykka.ActorDeadError:
        raise ChatError("chat-not-found", "that chat is gone") from None


class CoreClient:
    """One connected WebSocket client: its sink, the chats it attached to, and the subagent
    transcripts it watches."""

    def __init__(self, sink: SocketSink):
        self.sink = sink
        self.attached: dict[str, int] = {}
        self.watching: dict[tuple[str, str], object] = {}  # (chat id, subagent id) -> its watcher

    def stop_watching(self) -> None:
        for watcher in self.watching.values():
            watcher.kill(block=False)
        self.watching.clear()


def encode(message) -> list[bytes]:
    """The core protocol's event frames for what a chat tells its clients (actors/messages.py)."""
    if isinstance(message, ChatEvent):
        payload = {"chatId": message.chat_id, "event": message.event, "seq": message.seq}
        return [_frame({"type": "event", "event": "chat.event", "payload": payload})]
    if isinstance(message, ChatVisuals):
        return [_frame({"type": "event", "event": "chat.visuals", "payload": {"chatId": message.chat_id,
                                                                             "visuals": message.visuals}})]
    if isinstance(message, ChatBookmarks):
        return [_frame({"type": "event", "event": "chat.bookmarks", "payload": {"chatId": message.chat_id,
                                                                               "bookmarks": message.bookmarks}})]
    if isinstance(message, ChatStatus):
        return [_frame({"type": "event", "event": "chat.status", "payload": {"chatId": message.chat_id,
                                                                            "info": message.info}})]
    raise TypeError(f"a core socket has no frame for {message!r}")


def _frame(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


LONG_LIST = 64  # items past which an answer's list is encoded a piece at a time
PIECE_BYTES = 256 * 1024  # encoded between two chances for other greenlets to run
_SPLICE = "\u2063devhost-list\u2063"  # stands where a list goes; never in a chat's own data as a whole value


def encode_answer(answer: dict) -> bytes:
    """An answer as JSON. A snapshot's list of items (or a reconnect's events) is encoded an
    element at a time, other greenlets let run every PIECE_BYTES: one json.dumps of a 20 MB
    chat holds the hub for over 100 ms, and a C call cannot be moved off the hub by a thread
    (it keeps the GIL throughout)."""
    result = answer.get("result")
    key = next((k for k in ("items", "events") if isinstance(result, dict) and isinstance(result.get(k), list)
                and len(result[k]) > LONG_LIST), None)
    if key is None:
        return _frame(answer)
    head, tail = _frame({**answer, "result": {**result, key: _SPLICE}}).split(_frame(_SPLICE), 1)
    pieces, size = [head, b"["], 0
    for n, element in enumerate(result[key]):
        piece = _frame(element)
        pieces.append(b"," + piece if n else piece)
        size += len(piece)
        if size >= PIECE_BYTES:
            size = 0
            gevent.sleep(0)
    pieces += [b"]", tail]
    return b"".join(pieces)


VISUAL_WAIT = 30.0  # seconds for writing a page of up to 16 MiB
STEER_WAIT = 20.0  # seconds chat.send waits for the CLI to take a steer up or refuse it
SUBAGENT_PAGE = 50
MAX_WATCHED = 8  # subagents one client may watch at once
WATCH_POLL = 0.5  # seconds between looks at a watched transcript
WATCH_LIMIT = 30 * 60.0  # a watch ends after this long, whatever happens


def _subagent_items(source: dict, known: tuple | None = None) -> tuple[list[dict] | None, tuple | None]:
    """The agent's items, read from the CLI's file on the hub's threadpool, and the file's
    (size, mtime) they were read at; (None, known) when the file is as ``known`` (unread)."""
    def read():
        if source["harness"] == "codex":
            path, items_of = codex_transcript(source["agent"], dict(os.environ)), codex_child_items
        else:
            path, items_of = claude_subagent_transcript(source["native"], source["agent"], dict(os.environ)), \
                lambda found: claude_items(found, sidechain=True)
        if path is None:
            return [], None
        try:
            info = os.stat(path)
        except OSError:
            return [], None
        stamp = (info.st_size, info.st_mtime_ns)
        if stamp == known:
            return None, known
        return items_of(path), stamp
    return gevent.get_hub().threadpool.apply(read)


def _watch_subagent(service: CoreService, client: CoreClient, chat_id: str, source: dict, seen: int,
                    stamp: tuple | None) -> None:
    """Sends chat.subagentChanged with the items a watched agent's transcript gained, until the
    agent ended and its file stopped growing, the client left, or WATCH_LIMIT passed. The file is
    read again only when its size or time changed."""
    started, quiet = time.monotonic(), 0
    try:
        while not client.sink.closed and time.monotonic() - started < WATCH_LIMIT:
            gevent.sleep(WATCH_POLL)
            fresh, stamp = _subagent_items(source, stamp)  # None: the file is as it was
            status = _get(service.registry.chat(chat_id).get(timeout=ASK_TIMEOUT).subagent_source(
                source["subagentId"]))["status"]
            grown = fresh is not None and len(fresh) > seen
            if grown or status != source["status"]:
                client.sink.push(_frame({"type": "event", "event": "chat.subagentChanged", "payload": {
                    "chatId": chat_id, "subagentId": source["subagentId"], "status": status,
                    "items": fresh[seen:] if grown else [], "total": len(fresh) if grown else seen}}))
                seen, source = len(fresh) if grown else seen, {**source, "status": status}
                quiet = 0
            elif status != "running":
                quiet += 1
                if quiet >= 2:
                    return  # it ended, and its file says nothing more
    except ChatError:
        return  # the chat or the agent is gone
    finally:
        client.watching.pop((chat_id, source["subagentId"]), None)


def serve_core_socket(ws, service: CoreService) -> None:
    from actors.guard import spawn_logged
    sink = SocketSink(abort=lambda: abort(ws), encode=encode)
    client = CoreClient(sink)
    service.clients.add(sink)
    writer = spawn_logged(write_live, ws, sink)
    try:
        while not sink.closed:
            try:
                message = ws.receive()
            except MessageTooBig:
                sink.push(json.dumps({"id": None, "ok": False, "error": {
                    "code": "bad-request",
                    "message": f"a frame over {MAX_MESSAGE_BYTES >> 20} MiB was refused; a request "
                               f"must fit in {MAX_REQUEST_BYTES // 1024} KiB"}}).encode())
                sink.close(1009, "message too big")
                return
            if message is None:
                return
            try:
                frame = json.loads(message)
            except (ValueError, RecursionError):
                frame = None
            answer = service.handle(frame, client) if frame is not None else {
                "id": None, "ok": False, "error": {"code": "bad-request", "message": "a request must be JSON"}}
            if isinstance(answer.get("result"), Later):
                spawn_logged(lambda later=answer: sink.push(encode_answer(settled(later))))
                continue
            sink.push(encode_answer(answer))
    except Exception as exc:  # noqa: BLE001 - a dead socket ends the client, nothing else
        daemon_log(f"core socket ended: {exc!r}")
    finally:
        service.clients.remove(sink)
        client.stop_watching()
        for chat_id, subscriber in client.attached.items():
            try:
                service.registry.chat(chat_id).get(timeout=5).core_detach(subscriber)
            except Exception:  # noqa: BLE001 - the chat may be gone already
                pass
        sink.close(1000)
        writer.join(timeout=5)


class CoreExtension:
    """Plugs the core's protocol into the daemon: its socket and its one-request-per-POST route.
    The chats themselves are the registry's, which the daemon's main starts."""

    def __init__(self):
        self.service = None

    def start(self, context):
        self.service = CoreService(context.registry, context.core_clients, context.visuals)
        return {}

    def install(self, app):
        import bottle

        from web.app import Endpoint, Refusal
        context = app.context

        auth = context.core_auth

        def control_only(environ):
            """The caller of a request on the control origin that carries a good token."""
            if (environ.get("HTTP_HOST") or "").lower() != context.control_host.lower():
                raise Refusal(403, "the chat core answers only on the control origin " + context.control_origin)
            caller = auth.caller(environ)
            if caller is None:
                raise Refusal(401, auth.unauthorized(environ))
            return caller

        def socket_caller(environ):
            if control_only(environ).agent_chat is not None:
                # An agent's commands are single requests; the socket streams every chat's events.
                raise Refusal(403, "an agent's DEVHOSTD_TOKEN is good only for POST /__devhost__/core, "
                                   "not for the core socket")

        app.websockets["/__devhost__/ws/core"] = Endpoint(
            check=socket_caller, serve=lambda ws, environ, _: serve_core_socket(ws, self.service))

        @app.bottle.post("/__devhost__/core")
        def core_request():
            try:
                caller = control_only(bottle.request.environ)
            except Refusal as exc:
                return _http(exc.status, {"error": str(exc)},
                             {"WWW-Authenticate": 'Bearer realm="devhostd"'} if exc.status == 401 else {})
            data = bottle.request.body.read(MAX_REQUEST_BYTES + 1)
            if len(data) > MAX_REQUEST_BYTES:
                return _http(413, {"error": f"a request must be at most {MAX_REQUEST_BYTES} bytes"})
            try:
                frame = json.loads(data)
            except (ValueError, RecursionError):
                frame = None
            answer = self.service.handle(frame, caller=caller) if frame is not None else {
                "id": None, "ok": False, "error": {"code": "bad-request", "message": "a request must be JSON"}}
            forbidden = not answer["ok"] and answer["error"]["code"] == "forbidden"
            return bottle.HTTPResponse(encode_answer(settled(answer)), status=403 if forbidden else 200,
                                       headers={"Content-Type": "application/json", "Cache-Control": "no-store"})


def _http(status: int, body: dict, headers: dict | None = None):
    import bottle
    return bottle.HTTPResponse(json.dumps(body), status=status,
                               headers={"Content-Type": "application/json", "Cache-Control": "no-store",
                                        **(headers or {})})

"""The chat core in the daemon: the socket ``/__devhost__/ws/core`` (requests and events) and
``POST /__devhost__/core`` (one request a POST), both on the control origin with a good token."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import bottle

from actors.guard import spawn_logged
from web.app import Endpoint
from web.core.later import Later, settled
from web.core.wire import encode, encode_answer
from web.edge import Refusal, json_answer
from web.sinks import SocketSink
from web.sockets import SocketRoute, frame
from web.websocket import MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from web.core.service import CoreService

MAX_REQUEST_BYTES = 15 << 20  # a message with 10 MiB of attachments, base64, fits
NOT_JSON = {"id": None, "ok": False, "error": {"code": "bad-request", "message": "a request must be JSON"}}
TOO_BIG = frame({"id": None, "ok": False, "error": {
    "code": "bad-request", "message": f"a frame over {MAX_MESSAGE_BYTES >> 20} MiB was refused; a request "
                                      f"must fit in {MAX_REQUEST_BYTES // 1024} KiB"}})


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


def _read(data) -> dict | None:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def serve_core_socket(ws, service: CoreService) -> None:
    def attach(sink):
        service.clients.add(sink)
        return CoreClient(sink)

    def receive(message, sink, client):
        request = _read(message)
        answer = service.handle(request, client) if request is not None else NOT_JSON
        if isinstance(answer.get("result"), Later):  # waited for in a greenlet of its own
            spawn_logged(lambda later=answer: sink.push(encode_answer(settled(later))))
        else:
            sink.push(encode_answer(answer))

    def detach(client):
        service.clients.remove(client.sink)
        service.preferences.drop(client)  # a client's preferences last as long as it is connected
        client.stop_watching()
        for chat_id, subscriber in client.attached.items():
            try:
                service.registry.chat(chat_id).get(timeout=5).core_detach(subscriber)
            except Exception:  # noqa: BLE001 - the chat may be gone already
                pass

    SocketRoute("core", attach, receive, detach, encode=encode, too_big=TOO_BIG).serve(ws)


class CoreExtension:
    """Plugs the core's protocol into the daemon: its socket and its one-request-per-POST route.
    The chats themselves are the registry's, which the daemon's main starts."""

    def __init__(self):
        self._context = None
        self._service = None

    def start(self, context):
        self._context = context
        return {}

    @property
    def service(self) -> CoreService | None:
        """The core's requests, made at the first (the service and its request families are
        imported then, not at start); None when the extension was not started."""
        if self._service is None and self._context is not None:
            from web.core.service import CoreService
            context = self._context
            self._service = CoreService(context.registry, context.core_clients, context.visuals)
            self._service.pages = context.actors.get("pageMemory")  # started after the core (web/page_loop.py)
        return self._service

    def install(self, app):
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
                return json_answer({"error": str(exc)}, exc.status,
                                   {"WWW-Authenticate": 'Bearer realm="devhostd"'} if exc.status == 401 else {})
            data = bottle.request.body.read(MAX_REQUEST_BYTES + 1)
            if len(data) > MAX_REQUEST_BYTES:
                return json_answer({"error": f"a request must be at most {MAX_REQUEST_BYTES} bytes"}, 413)
            request = _read(data)
            answer = self.service.handle(request, caller=caller) if request is not None else NOT_JSON
            forbidden = not answer["ok"] and answer["error"]["code"] == "forbidden"
            return bottle.HTTPResponse(encode_answer(settled(answer)), status=403 if forbidden else 200,
                                       headers={"Content-Type": "application/json", "Cache-Control": "no-store"})

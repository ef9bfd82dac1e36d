"""The WSGI app: the Host and Origin rules on every request, then devhostd's own routes (thin:
parse, check, ask an actor with a timeout, answer; web/routes/, one module a family), its
WebSockets (web/sockets.py), and everything else (the pages' proxy, a plain page).

Every answer under ``/__devhost__/`` is JSON; every refusal is ``{"error": <what to change>}``
with a 4xx status (web/edge.py).
"""
from __future__ import annotations

import base64
import binascii
import io
import json
from dataclasses import dataclass, field
from typing import Callable

import bottle
import pykka

from storage.manifest import ManifestSource
from storage.panel import PanelPositions
from web import edge, security
from web.control_page import plain_page
from web.edge import Refusal, json_answer, request_hostname
from web.routes import changes, compose, conversations, harnesses, panel, sessions, stack
from web.route_table import with_route_table

ROUTE_FAMILIES = (stack, harnesses, sessions, conversations, panel, compose, changes)

# The sockets' and the visuals origin's modules (most of web/ and what they import of actors/)
# are imported at their first request, not at start: the functions below stand for them.


def serve_chat_socket(*args):
    from web.chat_socket import serve_chat_socket
    return serve_chat_socket(*args)


def serve_thread_socket(*args):
    from web.thread_socket import serve_thread_socket
    return serve_thread_socket(*args)


def serve_log_socket(*args):
    from web.log_socket import serve_log_socket
    return serve_log_socket(*args)


def serve_visual(*args):
    from web.visual_pages import serve_visual
    return serve_visual(*args)


@dataclass
class Context:
    """What every request handler may reach: the manifest, the actors, the daemon's address."""

    manifests: ManifestSource
    registry: pykka.ActorProxy  # every conversation (actors/registry.py)
    catalog: pykka.ActorProxy
    panels: PanelPositions
    address: str
    port: int
    source_root: str
    core_clients: object = None  # every connected chat-core client (actors/registry.CoreClients)
    actors: dict = field(default_factory=dict)  # proxies of actors that extensions start, by name
    visuals: pykka.ActorProxy | None = None  # every chat's visuals (actors/visual_store.py)
    core_auth: object = None  # who may ask the chat core (web/auth.CoreAuth)
    panel_modes: object = None  # the mode last picked per checkout (storage/panel_modes.PanelModes)

    @property
    def visuals_host(self) -> str:
        """The origin that serves visuals and nothing else (web/visual_pages.py)."""
        return f"{VISUALS_HOSTNAME}:{self.port}"

    @property
    def control_host(self) -> str:
        return security.format_host(self.address, self.port)

    @property
    def control_origin(self) -> str:
        return f"http://{self.control_host}"


VISUALS_HOSTNAME = "visuals.localhost"


@dataclass
class Endpoint:
    """A WebSocket under /__devhost__/: ``check(environ)`` runs before the upgrade and raises
    Refusal (answered as plain HTTP) or returns what ``serve(ws, environ, checked)`` gets after it."""
    check: Callable
    serve: Callable


class DevhostApp:
    """WSGI entry: security checks, then the routes.

    Extensions (see web/server.py) add routes to ``bottle``, sockets to ``websockets``, and may
    replace ``fallback``, the WSGI app for every path outside /__devhost__/ (a plain page by
    default), and set ``raw_upgrade`` to take over WebSocket upgrades outside /__devhost__/.
    """

    def __init__(self, context: Context, extensions=()):
        self.context = context
        self.bottle = build_routes(context)
        self.websockets: dict[str, Endpoint] = {
            "/__devhost__/ws/chat": Endpoint(
                check=lambda environ: _chat_for_socket(context, environ),
                serve=lambda ws, environ, found: serve_chat_socket(
                    ws, context, *found, request_hostname(context, environ))),
            "/__devhost__/ws/log": Endpoint(
                check=lambda environ: _log_directory(context, environ),
                serve=lambda ws, environ, root: serve_log_socket(ws, root)),
            "/__devhost__/ws/thread": Endpoint(
                check=lambda environ: _chat_for_socket(context, environ, thread=True),
                serve=lambda ws, environ, found: serve_thread_socket(
                    ws, context, *found, request_hostname(context, environ))),
        }
        self.fallback = plain_page(context)
        self.raw_upgrade = None
        self.direct = None  # (handler) -> True when it answered the request itself, without the WSGI round
        for extension in extensions:
            extension.install(self)
        add_unknown_routes(self.bottle)  # last: everything else under /__devhost__/ is a JSON 404

    _hosts = None  # (manifest, control host, port, the allowed Hosts): built once per manifest read

    def _allowed_hosts(self, manifest):
        control_host, port = self.context.control_host, self.context.port
        cached = self._hosts
        if cached is None or cached[0] is not manifest or cached[1] != control_host or cached[2] != port:
            hosts = security.allowed_hosts(control_host, [s.host for s in manifest.services] + [VISUALS_HOSTNAME], port)
            self._hosts = cached = (manifest, control_host, port, hosts)
        return cached[3]

    def refusal(self, environ) -> tuple[str, str] | None:
        host = environ.get("HTTP_HOST")
        # The manifest this request is judged by, kept for what answers it (web/pages.py): the
        # file is looked at once per request, and the Host check and the routing agree.
        manifest = environ["devhost.manifest"] = self.context.manifests.current()
        message = security.host_refusal(host, self._allowed_hosts(manifest))
        if message:
            return "403 Forbidden", message
        if not environ.get("PATH_INFO", "").startswith("/__devhost__/"):
            return None  # the app's own requests keep the app's own rules
        if (environ.get("HTTP_SEC_FETCH_SITE") or "").strip().lower() == "cross-site":
            # Fetch metadata: another site's page never reaches devhostd, not even with a GET
            # (some GETs start CLIs, e.g. the model listing).
            return "403 Forbidden", "a cross-site request to devhostd is refused: use the page's own origin"
        is_upgrade = environ.get("HTTP_UPGRADE", "").lower() == "websocket"
        message = security.origin_refusal(environ.get("REQUEST_METHOD", "GET"), is_upgrade,
                                          environ.get("HTTP_ORIGIN"), host)
        if message:
            return "403 Forbidden", message
        return None

    def websocket_precheck(self, environ):
        if (environ.get("HTTP_HOST") or "").lower() == self.context.visuals_host:
            return "404 Not Found", "the visuals origin serves only visual pages"
        refusal = self.refusal(environ)
        if refusal:
            return refusal
        endpoint = self.websockets.get(environ.get("PATH_INFO"))
        if endpoint is None:
            return "404 Not Found", "no WebSocket is served at this path"
        handshake = _handshake_refusal(environ)
        if handshake:
            return "400 Bad Request", handshake
        try:
            # Kept for the upgraded request, so the socket serves exactly what was checked here.
            environ["devhost.checked"] = endpoint.check(environ)
        except Refusal as exc:
            return f"{exc.status} {bottle.HTTP_CODES.get(exc.status, '')}".strip(), str(exc)
        return None

    def __call__(self, environ, start_response):
        if (environ.get("HTTP_HOST") or "").lower() == self.context.visuals_host:
            return serve_visual(self.context, environ, start_response)  # that origin has nothing else
        refusal = self.refusal(environ)
        if refusal:
            status, message = refusal
            body = json.dumps({"error": message}).encode()
            start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        websocket = environ.get("wsgi.websocket")
        if websocket is not None:
            self.websockets[environ["PATH_INFO"]].serve(websocket, environ, environ["devhost.checked"])
            return []
        if environ.get("PATH_INFO", "").startswith("/__devhost__/"):
            problem = read_whole_body(environ)
            if problem:
                status, message = problem
                body = json.dumps({"error": message}).encode()
                start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                        ("Connection", "close")])
                return [body]
            return self.bottle(environ, start_response)
        return self.fallback(environ, start_response)


MAX_DEVHOST_BODY = 16 * 1024 * 1024  # no route of devhostd's own takes more


def read_whole_body(environ) -> tuple[str, str] | None:
    """Reads a request body to devhostd's own routes whole, before any route sees it, so a body
    that ends before its Content-Length (a browser aborting an upload) is a 400 that says so,
    never a route failing half-way; one over MAX_DEVHOST_BODY is a 413. (status, message) when
    refused; else the body waits in ``wsgi.input``."""
    length = (environ.get("CONTENT_LENGTH") or "").strip()
    chunked = (environ.get("HTTP_TRANSFER_ENCODING") or "").lower() == "chunked"
    if not chunked and (not length or length == "0"):
        return None
    expected = int(length) if length.isdigit() else None
    if expected is not None and expected > MAX_DEVHOST_BODY:
        return "413 Payload Too Large", f"a request body to devhostd may be at most {MAX_DEVHOST_BODY} bytes"
    stream, pieces, got = environ["wsgi.input"], [], 0
    try:
        while expected is None or got < expected:
            piece = stream.read(min(65536, (expected - got) if expected is not None else 65536))
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
            if got > MAX_DEVHOST_BODY:
                return "413 Payload Too Large", f"a request body to devhostd may be at most {MAX_DEVHOST_BODY} bytes"
    except (OSError, ValueError):
        pass  # the client stopped sending: what came is less than promised
    if expected is not None and got < expected:
        return "400 Bad Request", (f"the request body ended before its Content-Length: {expected} bytes were "
                                   f"promised and {got} came")
    environ["wsgi.input"] = io.BytesIO(b"".join(pieces))
    environ["CONTENT_LENGTH"] = str(got)
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return None


def _repr_outside_requests(cls) -> None:
    """bottle's thread-local request and response raise on repr outside a request, and gevent's
    blocked-hub monitor reprs every greenlet's locals: without this its first report dies and
    a blocked hub is never logged."""
    original = cls.__repr__

    def __repr__(self):
        try:
            return original(self)
        except RuntimeError:
            return f"<{cls.__name__}: no request in this greenlet>"
    cls.__repr__ = __repr__


_repr_outside_requests(bottle.LocalRequest)
_repr_outside_requests(bottle.LocalResponse)


def _handshake_refusal(environ) -> str | None:
    """What gevent-websocket would trip over (with a 500) in an upgrade request, said as a 400."""
    if environ.get("SERVER_PROTOCOL") != "HTTP/1.1":
        return "a WebSocket upgrade needs HTTP/1.1"
    try:
        key_length = len(base64.b64decode(environ.get("HTTP_SEC_WEBSOCKET_KEY", "").strip(), validate=True))
    except (binascii.Error, ValueError):
        key_length = 0
    if key_length != 16:
        return "Sec-WebSocket-Key must be 16 bytes in base64"
    if environ.get("HTTP_SEC_WEBSOCKET_VERSION") != "13":
        return "only WebSocket version 13 is supported"
    return None


def _chat_for_socket(context: Context, environ, thread: bool = False):
    query = edge.query(environ)
    session_id = query.get("sessionId")
    if not session_id:
        raise Refusal(400, "sessionId is required in the WebSocket address")
    if thread:
        from web.thread_socket import parse_history_limit, parse_since
        if request_hostname(context, environ) is None:
            raise Refusal(403, "the thread socket belongs to a routed page: connect from the page's own hostname")
        try:
            parse_since(query.get("since"))
            parse_history_limit(query.get("historyLimit"))
        except ValueError as exc:
            raise Refusal(400, str(exc)) from None
    directory = edge.page_directory(context, environ, query.get("pageURL"), query.get("chatTarget"))
    chat, record = edge.page_session(context, session_id, directory)
    return chat, record, query


def _log_directory(context: Context, environ) -> str:
    """The directory whose log a page may read: its own (the Chat API's scoping)."""
    if request_hostname(context, environ) is None:
        raise Refusal(403, "the log stream belongs to a routed page: connect from the page's own hostname")
    query = edge.query(environ)
    return edge.page_directory(context, environ, query.get("pageURL"), query.get("chatTarget"))


def add_unknown_routes(app: bottle.Bottle) -> None:
    @app.route("/__devhost__/<path:path>", method=["GET", "POST", "PUT", "DELETE", "PATCH"])
    def unknown(path):
        return json_answer({"error": f"nothing is served at /__devhost__/{path}"}, 404)


def build_routes(context: Context) -> bottle.Bottle:
    app = with_route_table(bottle.Bottle(catchall=True))  # its regexes built at the first request
    for family in ROUTE_FAMILIES:
        family.install(app, context)

    def error_page(res):
        res.content_type = "application/json"
        if res.status_code == 405:
            return json.dumps({"error": f"method {bottle.request.method} is not allowed here"})
        if res.status_code == 404:
            return json.dumps({"error": f"nothing is served at {bottle.request.path}"})
        return json.dumps({"error": "the daemon failed on this request; it is logged"})

    app.default_error_handler = error_page
    return app

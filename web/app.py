"""The bottle app: thin routes that parse, check, ask an actor (with a timeout), and answer.

Every answer under ``/__devhost__/`` is JSON; every refusal is ``{"error": <what to change>}``
with a 4xx status. The WSGI wrapper in ``DevhostApp`` applies the Host and Origin rules to
every request before a route sees it.
"""
from __future__ import annotations

import base64
import binascii
import errno
import io
import json
import os
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, urlencode

import bottle
import pykka

import gevent
import gevent.event

from actors.harness_catalog import command_for, unavailable
from actors.errors import ChatError
from storage.manifest import HARNESS_IDS, ManifestSource
from storage.panel import PanelError, PanelPositions, validate_position
from storage.saved_conversations import saved_conversations
from web import security
from web.visual_pages import serve_visual
from web.chat_socket import serve_chat_socket
from web.log_socket import serve_log_socket
from web.openapi import document as openapi_document
from web.thread_socket import parse_since, serve_thread_socket
from web.commands import check_model
from web.routing import RouteError, resolve_directory

ASK_TIMEOUT = 10.0
RESUME_TIMEOUT = 120.0  # reading a saved conversation of up to 64 MiB takes seconds on a busy machine
MODELS_TIMEOUT = 45.0
MAX_JSON_BODY = 64 * 1024
_UUID_CHARS = set("0123456789abcdefABCDEF-")


# How the Chat API answers a refusal of the chat runtime (actors/errors.py).
HTTP_STATUS = {"bad-request": 400, "chat-not-found": 404, "not-found": 404, "request-not-found": 404,
               "subagent-not-found": 404, "task-not-found": 404, "item-not-found": 404,
               "bookmark-not-found": 404, "too-many-bookmarks": 409, "invalid-attachments": 400,
               "visual-invalid": 400, "visual-too-large": 413,
               "conflict": 409, "chat-busy": 409, "chat-unreadable": 409, "chat-unsupported": 400, "forbidden": 403,
               "unavailable": 503, "storage-full": 507, "storage-failed": 503}


@dataclass
class Context:
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


class Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _json(value, status: int = 200) -> bottle.HTTPResponse:
    return bottle.HTTPResponse(json.dumps(value), status=status,
                               headers={"Content-Type": "application/json", "Cache-Control": "no-store"})


def refusals_as_json(function):
    """A route whose Refusal becomes its JSON answer: {"error": ...} with the refusal's status."""
    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Refusal as exc:
            return _json({"error": str(exc)}, exc.status)
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            # Out of file descriptors: the daemon is full, not broken.
            return _json({"error": "devhostd has no file descriptors left: close some sessions, or raise its limit "
                                   "(ulimit -n) and restart it"}, 503)
    wrapped.__name__ = function.__name__
    return wrapped


def _ask(future, timeout: float = ASK_TIMEOUT):
    try:
        return future.get(timeout=timeout)
    except pykka.Timeout:
        raise Refusal(503, "the daemon is busy; try again in a moment") from None
    except pykka.ActorDeadError:
        raise Refusal(404, "that session is gone (it was replaced by its resume)") from None
    except ChatError as exc:
        raise Refusal(HTTP_STATUS.get(exc.code, 400), str(exc)) from None


def _waited(result: gevent.event.AsyncResult, timeout: float):
    """What an actor answered later (an AsyncResult), refused as an ask's answer would be."""
    result.wait(timeout)
    if not result.ready():
        raise Refusal(503, "the daemon is still reading that conversation; try again in a moment")
    return _ask(result, timeout)


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
                    ws, context, *found, _request_hostname(context, environ))),
            "/__devhost__/ws/log": Endpoint(
                check=lambda environ: _log_directory(context, environ),
                serve=lambda ws, environ, root: serve_log_socket(ws, root)),
            "/__devhost__/ws/thread": Endpoint(
                check=lambda environ: _chat_for_socket(context, environ, thread=True),
                serve=lambda ws, environ, found: serve_thread_socket(
                    ws, context, *found, _request_hostname(context, environ))),
        }
        self.fallback = plain_page(context)
        self.raw_upgrade = None
        for extension in extensions:
            extension.install(self)
        add_unknown_routes(self.bottle)  # last: everything else under /__devhost__/ is a JSON 404

    def _allowed_hosts(self):
        manifest = self.context.manifests.current()
        return security.allowed_hosts(self.context.control_host,
                                      [s.host for s in manifest.services] + [VISUALS_HOSTNAME], self.context.port)

    def refusal(self, environ) -> tuple[str, str] | None:
        host = environ.get("HTTP_HOST")
        message = security.host_refusal(host, self._allowed_hosts())
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


def _request_hostname(context: Context, environ) -> str | None:
    """The routed hostname a request came to, or None on the control origin."""
    host = (environ.get("HTTP_HOST") or "").lower()
    if host == context.control_host.lower():
        return None
    return host.rsplit(":", 1)[0]


def _query(environ) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(environ.get("QUERY_STRING", "")).items()}


def _directory(context: Context, environ, page_url, target) -> str:
    try:
        return resolve_directory(context.manifests.current(), page_url, target,
                                 request_hostname=_request_hostname(context, environ), source_root=context.source_root)
    except RouteError as exc:
        raise Refusal(exc.status, str(exc)) from None


def _chat_for_socket(context: Context, environ, thread: bool = False):
    query = _query(environ)
    session_id = query.get("sessionId")
    if not session_id:
        raise Refusal(400, "sessionId is required in the WebSocket address")
    if thread:
        if _request_hostname(context, environ) is None:
            raise Refusal(403, "the thread socket belongs to a routed page: connect from the page's own hostname")
        try:
            parse_since(query.get("since"))
        except ValueError as exc:
            raise Refusal(400, str(exc)) from None
    directory = _directory(context, environ, query.get("pageURL"), query.get("chatTarget"))
    chat, record = _ask(context.registry.session(session_id))
    if chat is None or record["projectRootPath"] != directory:
        raise Refusal(404, f"no session {session_id} in this directory")
    return chat, record, query


def _log_directory(context: Context, environ) -> str:
    """The directory whose log a page may read: its own (the Chat API's scoping)."""
    if _request_hostname(context, environ) is None:
        raise Refusal(403, "the log stream belongs to a routed page: connect from the page's own hostname")
    query = _query(environ)
    return _directory(context, environ, query.get("pageURL"), query.get("chatTarget"))


def _body(request) -> dict:
    data = request.body.read(MAX_JSON_BODY + 1)
    if len(data) > MAX_JSON_BODY:
        raise Refusal(413, f"the JSON body must be at most {MAX_JSON_BODY} bytes")
    try:
        value = json.loads(data or b"null")
    except (ValueError, RecursionError):
        raise Refusal(400, "the body must be JSON") from None
    if not isinstance(value, dict):
        raise Refusal(400, "the body must be a JSON object")
    return value


def build_routes(context: Context) -> bottle.Bottle:
    app = bottle.Bottle(catchall=True)
    request = bottle.request

    handler = refusals_as_json

    def directory_from_query():
        return _directory(context, request.environ, request.query.get("pageURL"), request.query.get("chatTarget"))

    @app.get("/__devhost__/openapi.json")
    @handler
    def openapi():
        return _json(openapi_document())

    @app.get("/__devhost__/config.json")
    @handler
    def config():
        manifest = context.manifests.current()
        return _json({
            "name": manifest.name,
            "controlOrigin": context.control_origin,
            "devhostSourceRootPath": context.source_root,
            "manifestPath": manifest.path or "",
            "services": [{"name": s.name, "host": s.host, "url": f"http://{s.host}:{context.port}/",
                          "projectRootPath": s.root, "proxied": bool(s.upstream)} for s in manifest.services],
            "features": {"chat": True},
        })

    @app.get("/__devhost__/chat/harnesses")
    @handler
    def harnesses():
        directory = directory_from_query()
        manifest = context.manifests.current()
        return _json({"harnesses": _ask(context.catalog.harnesses(manifest.commands, directory), MODELS_TIMEOUT)})

    @app.post("/__devhost__/chat/sessions")
    @handler
    def create_session():
        body = _body(request)
        directory = _directory(context, request.environ, body.get("pageURL"), body.get("target"))
        harness = body.get("harness")
        if harness not in HARNESS_IDS:
            raise Refusal(400, f"harness must be one of: {', '.join(HARNESS_IDS)}")
        model = body.get("model")
        if model is not None:
            try:
                model = check_model(model) or None
            except ValueError as exc:
                raise Refusal(400, str(exc)) from None
        resume_id = body.get("resumeId")
        if resume_id is not None and (not isinstance(resume_id, str) or len(resume_id) != 36
                                      or not set(resume_id) <= _UUID_CHARS):
            raise Refusal(400, "resumeId must be the CLI's session id (a UUID)")
        manifest = context.manifests.current()
        command = command_for(harness, manifest.commands)
        missing = unavailable(harness, command)
        if missing:
            raise Refusal(400, f"harness {harness} is not available: {missing}")
        record = _ask(context.registry.create_session(harness, directory, command, model,
                                                      resume_id.lower() if resume_id else None))
        if isinstance(record, gevent.event.AsyncResult):
            record = _waited(record, RESUME_TIMEOUT)  # a resume: the CLI's files are read meanwhile
        return _json(record, 201)

    @app.get("/__devhost__/chat/sessions")
    @handler
    def list_sessions():
        return _json({"sessions": _ask(context.registry.sessions(directory_from_query()))})

    @app.get("/__devhost__/chat/saved")
    @handler
    def saved():
        """The CLIs' own saved conversations of this page's folder that no session holds:
        resumable with POST /chat/sessions {resumeId}, their transcript kept."""
        directory = directory_from_query()
        held = {record.get("nativeSessionId") for record in _ask(context.registry.sessions(directory))}
        # File work on the hub's threadpool: reading many transcripts never holds the hub.
        found = gevent.get_hub().threadpool.apply(saved_conversations, (directory, dict(os.environ)))
        return _json({"conversations": [c for c in found if c["nativeSessionId"] not in held]})

    @app.post("/__devhost__/chat/sessions/<session_id>/close")
    @handler
    def close_session(session_id):
        directory = directory_from_query()
        chat, record = _ask(context.registry.session(session_id))
        if chat is None or record["projectRootPath"] != directory:
            raise Refusal(404, f"no session {session_id} in this directory")
        return _json(_ask(chat.close(1000)))

    @app.route("/__devhost__/chat/panel", method=["GET", "PUT"])
    @handler
    def panel():
        manifest = context.manifests.current()
        if manifest.path is None:
            raise Refusal(404, "panel positions are kept per manifest; this daemon runs without one")
        if request.method == "GET":
            return _json({"position": context.panels.load(manifest.path)})
        try:
            position = validate_position(_body(request))
        except PanelError as exc:
            raise Refusal(400, str(exc)) from None
        # fsync and rename on the hub's threadpool: file work never holds the hub.
        gevent.get_hub().threadpool.apply(context.panels.save, (manifest.path, position))
        return _json({"position": position})

    def error_page(res):
        res.content_type = "application/json"
        if res.status_code == 405:
            return json.dumps({"error": f"method {request.method} is not allowed here"})
        if res.status_code == 404:
            return json.dumps({"error": f"nothing is served at {request.path}"})
        return json.dumps({"error": "the daemon failed on this request; it is logged"})

    app.default_error_handler = error_page
    return app


def add_unknown_routes(app: bottle.Bottle) -> None:
    @app.route("/__devhost__/<path:path>", method=["GET", "POST", "PUT", "DELETE", "PATCH"])
    def unknown(path):
        return _json({"error": f"nothing is served at /__devhost__/{path}"}, 404)


def plain_page(context: Context):
    """What the daemon serves outside /__devhost__/ when nothing else does: on the control origin,
    the stack's own page (its routed pages, each with its agents' activity, and the manifest)."""
    def app(environ, start_response):
        manifest = context.manifests.current()
        hostname = _request_hostname(context, environ)
        if hostname is None:
            body = control_page_html(manifest, context.port)
        else:
            title = bottle.html_escape(f"{manifest.name}: {hostname}")
            body = (f"<!doctype html><meta charset=utf-8><title>{title}</title>"
                    f"<h1>{title}</h1><p>devhostd serves this stack.</p>")
        data = body.encode()
        start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(data))),
                                  ("Cache-Control", "no-store")])
        return [data]
    return app


def control_page_html(manifest, port: int) -> str:
    esc = bottle.html_escape
    rows = []
    for service in manifest.services:
        url = f"http://{service.host}:{port}/"
        activity = "/__devhost__/agents/activity?" + urlencode({"pageURL": url, "chatTarget": "project"})
        rows.append(f"<li><a href=\"{esc(url)}\">{esc(url)}</a> &mdash; {esc(service.name)}, "
                    f"<code>{esc(service.root)}</code>"
                    f"{' (proxied to ' + esc(service.upstream) + ')' if service.upstream else ''}"
                    f" &middot; <a href=\"{esc(activity)}\">agents working there</a></li>")
    where = (f"the manifest <code>{esc(manifest.path)}</code>" if manifest.path else
             "no manifest: the folder devhostd was started in is the one routed page (add a "
             "<code>devhost.toml</code> there, or pass <code>--config</code>, to route more)")
    return (f"<!doctype html><html lang=en><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\"><title>{esc(manifest.name)}</title>"
            f"<body style=\"font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 3rem auto; "
            f"padding: 0 1rem\">"
            f"<h1>{esc(manifest.name)}</h1><p>devhostd serves this stack from {where}. Open a page to chat with "
            f"the coding agents in its checkout (the round button in its corner):</p>"
            f"<ul>{''.join(rows)}</ul></body></html>")

"""Routed pages: what a routed hostname serves outside /__devhost__/, and the chat panel's files.

An extension (see ``EXTENSIONS`` in web/server.py):
- ``/__devhost__/static/chat/…`` serves the panel (plain JavaScript modules and CSS);
- a service with an ``upstream`` is proxied to it (web/proxy/), the panel injected into its
  HTML; a service without one gets a plain page that carries the panel;
- the app's own WebSocket upgrades (its hot reload) are tunnelled to the upstream.
The control origin keeps the daemon's own plain page: it is no routed page, so no panel.
"""
from __future__ import annotations

import hashlib
import json
import os

import bottle

from web.page_loop import record_proxy_failure
from web.proxy.injection import PANEL_SCRIPT
from web.proxy.upstream import Upstream
from web.reload_hold import ReloadHolds

STATIC_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
          ".png": "image/png"}


class Pages:
    def __init__(self):
        self.holds = ReloadHolds()  # hot reloads held per routed hostname

    def start(self, context) -> dict:
        return {}  # no actors: pages only read the manifest

    def install(self, app) -> None:
        add_static_routes(app.bottle, "chat")
        add_hold_routes(app.bottle, app.context, self.holds)
        app.fallback = routed_pages(app.context, control_page=app.fallback)
        app.raw_upgrade = lambda handler: app_socket(app, handler, self.holds)
        app.direct = direct_answers(app)


EXTENSION = Pages()


def add_static_routes(routes: bottle.Bottle, folder: str) -> None:
    root = os.path.realpath(os.path.join(STATIC_ROOT, folder))

    @routes.route(f"/__devhost__/static/{folder}/<path:path>", method=["GET", "HEAD"])
    def static(path):
        if "\x00" in path:  # no file has one; realpath would refuse it with an error
            return bottle.HTTPResponse(json.dumps({"error": "nothing is served at "
                                                            f"/__devhost__/static/{folder}/{path!r}"}),
                                       status=404, headers={"Content-Type": "application/json"})
        file = os.path.realpath(os.path.join(root, path))
        if not file.startswith(root + os.sep) or not os.path.isfile(file):
            return bottle.HTTPResponse(json.dumps({"error": "nothing is served at "
                                                            f"/__devhost__/static/{folder}/{path}"}),
                                       status=404, headers={"Content-Type": "application/json"})
        mimetype = _TYPES.get(os.path.splitext(file)[1], "auto")
        response = bottle.static_file(os.path.relpath(file, root), root=root, mimetype=mimetype, charset="utf-8",
                                      etag=content_etag(file))
        # Revalidated on every load, so a changed panel shows after a reload; the ETag is the
        # file's content, so an unchanged one is a 304 without a body (README "The page first").
        response.set_header("Cache-Control", "no-cache")
        response.set_header("X-Content-Type-Options", "nosniff")
        return response


_etags: dict[str, tuple[int, int, str]] = {}  # file -> (mtime_ns, size, its content's ETag)


def content_etag(file: str) -> str:
    """The file's ETag: a hash of its content, read again only when its mtime or size changed
    (the panel's files are small; a checkout edited while the daemon runs gets new ones)."""
    stat = os.stat(file)
    known = _etags.get(file)
    if known and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2]
    with open(file, "rb") as handle:
        etag = '"' + hashlib.sha256(handle.read()).hexdigest()[:32] + '"'
    _etags[file] = (stat.st_mtime_ns, stat.st_size, etag)
    return etag


def add_hold_routes(routes: bottle.Bottle, context, holds: ReloadHolds) -> None:
    """``/__devhost__/reloads`` on a routed hostname: whether its hot reloads are held.
    GET -> {held, updates, bytes, ended}; PUT {held: bool}; POST .../apply sends what is held."""

    def hostname_or_refuse():
        hostname = _hostname(context, bottle.request.environ)
        if hostname is None:
            raise bottle.HTTPResponse(json.dumps({"error": "reloads are held for a routed page: ask on its hostname"}),
                                      status=404, headers={"Content-Type": "application/json"})
        return hostname

    def answer(value):
        return bottle.HTTPResponse(json.dumps(value), headers={"Content-Type": "application/json",
                                                                "Cache-Control": "no-store"})

    @routes.route("/__devhost__/reloads", method=["GET", "PUT"])
    def reloads():
        hostname = hostname_or_refuse()
        if bottle.request.method == "GET":
            return answer(holds.state(hostname))
        try:
            body = json.loads(bottle.request.body.read(4096) or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("held"), bool):
            return bottle.HTTPResponse(json.dumps({"error": "the body must be {\"held\": true or false}"}),
                                       status=400, headers={"Content-Type": "application/json"})
        return answer(holds.hold(hostname, body["held"]))

    @routes.post("/__devhost__/reloads/apply")
    def apply():
        return answer(holds.apply(hostname_or_refuse()))


def _hostname(context, environ) -> str | None:
    """The routed hostname of a request, or None on the control origin."""
    host = (environ.get("HTTP_HOST") or "").lower()
    if host == context.control_host.lower():
        return None
    return host.rsplit(":", 1)[0]


def routed_pages(context, control_page):
    def app(environ, start_response):
        hostname = _hostname(context, environ)
        if hostname is None:
            return control_page(environ, start_response)
        manifest = environ.get("devhost.manifest") or context.manifests.current()  # the Host check's (web/app.py)
        service = manifest.service_for_host(hostname)
        if service is None:  # the manifest changed since the Host check
            return _html(start_response, "404 Not Found", "Not routed",
                         f"{hostname} is no longer a routed service of this stack.", panel=False,
                         head=environ.get("REQUEST_METHOD") == "HEAD")
        if service.upstream:
            from web.proxy.relay import forward  # at the first proxied request: the relay and its decoders
            upstream = Upstream.parse(service.upstream)

            def error_page(status, message, close=False):
                if status.startswith("502"):
                    record_proxy_failure(context, hostname, environ, 502, message)
                return _html(start_response, status, "Upstream not answering", message,
                             head=environ.get("REQUEST_METHOD") == "HEAD", close=close)
            return forward(upstream, environ, start_response, error_page,
                           failed=lambda status: record_proxy_failure(context, hostname, environ, status))
        return _plain_page(environ, start_response, manifest.name, service, manifest.path)
    return app


def _plain_page(environ, start_response, stack: str, service, manifest_path: str | None):
    method = environ.get("REQUEST_METHOD", "GET")
    if method not in ("GET", "HEAD"):
        return _html(start_response, "405 Method Not Allowed", "Method not allowed",
                     f"{service.host} has no app behind it, so it only answers GET.", panel=False)
    if manifest_path:
        where = (f"add the line upstream = \"http://127.0.0.1:3000\" (your dev server's address) under "
                 f"[services.{service.name}] in {manifest_path}")
    else:
        where = (f"write a devhost.toml in the folder devhostd starts in, with [services.{service.name}], "
                 f"host = \"{service.host}\", root = \".\" and upstream = \"http://127.0.0.1:3000\" "
                 f"(your dev server's address), and start devhostd again")
    text = (f"{service.host} serves the checkout {service.root}. It has no app behind it: {where} to see your "
            f"app here, with the chat panel on it. The chat works on this page too.")
    if environ.get("PATH_INFO", "/") != "/":
        return _html(start_response, "404 Not Found", f"{stack}: {service.host}", text, head=method == "HEAD")
    return _html(start_response, "200 OK", f"{stack}: {service.host}", text, head=method == "HEAD")


def _html(start_response, status: str, title: str, text: str, panel: bool = True, head: bool = False,
          close: bool = False):
    title, text = bottle.html_escape(title), bottle.html_escape(text)
    body = (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\"><title>{title}</title>"
            f"{PANEL_SCRIPT.decode() if panel else ''}</head>"
            f"<body style=\"font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; "
            f"padding: 0 1rem\"><h1>{title}</h1><p>{text}</p></body></html>").encode()
    start_response(status, [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
                            ("Cache-Control", "no-store"), *([("Connection", "close")] if close else [])])
    return [] if head else [body]


def direct_answers(app):
    """What the handler offers each request first (web/proxy/direct.py): a routed page's module
    request, past the same Host rule as every request, answered from its upstream without the
    WSGI round; True when answered. Everything else (devhostd's own paths, the control and
    visuals origins, a navigation, which may get the panel) goes the WSGI way."""
    context = app.context
    direct = None  # web/proxy/direct.py, imported at the first proxied request (as the relay)

    def answer(handler) -> bool:
        nonlocal direct
        environ = handler.environ
        if direct is None:
            from web.proxy import direct
        if not direct.qualifies(environ) or environ["PATH_INFO"].startswith("/__devhost__/"):
            return False
        hostname = _hostname(context, environ)
        if hostname is None or (environ.get("HTTP_HOST") or "").lower() == context.visuals_host \
                or app.refusal(environ) is not None:
            return False  # the WSGI round answers (or refuses) it
        service = environ["devhost.manifest"].service_for_host(hostname)
        if service is None or not service.upstream or direct.is_navigation(environ):
            return False
        return direct.answer(handler, Upstream.parse(service.upstream))
    return answer


def app_socket(app, handler, holds=None) -> None:
    """A WebSocket upgrade outside /__devhost__/: the app's own socket, tunnelled to its upstream."""
    environ = handler.environ
    # The pre-upgrade check is bypassed for these, so the Host rule is applied here. Origin is
    # the app's business outside /__devhost__/: it is passed on for the app to judge.
    from web.proxy.tunnel import answer as answer_upgrade  # at the first app socket, as the relay
    from web.proxy.tunnel import tunnel_websocket
    refusal = app.refusal(environ)
    if refusal:
        answer_upgrade(handler, *refusal)
        return
    hostname = _hostname(app.context, environ)
    service = app.context.manifests.current().service_for_host(hostname) if hostname else None
    if service is None or not service.upstream:
        answer_upgrade(handler, "404 Not Found", "no WebSocket is served at this path: this hostname has no upstream")
        return
    tunnel_websocket(handler, Upstream.parse(service.upstream), holds, hostname)

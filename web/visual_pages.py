"""The visuals origin: ``http://visuals.localhost:<port>`` answers nothing but visual pages.

A visual is an agent's HTML, so it never runs on an app's origin or the control origin (where it
could call devhostd's API or read the app's storage). Here it gets an origin that holds no API
at all, and a Content-Security-Policy that shuts it in: it runs its own inline scripts and
styles, loads nothing from the network (no fetch, no images or fonts from anywhere but itself),
runs in a sandbox without same-origin rights (no cookies, no storage, no reaching the page that
frames it, no top navigation), and may be framed only by this daemon's own pages.

    GET /v/<chat id, percent-encoded>/<16 hex visual id>   the page (HEAD too)
"""
from __future__ import annotations

import json
import re
from urllib.parse import unquote

import gevent
import pykka

from storage.attachments import read_file

VISUAL_PATH = re.compile(r"^/v/([^/]+)/([0-9a-f]{16})$")


def policy(frame_ancestors: list[str]) -> str:
    return "; ".join([
        "default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'",
        "img-src data: blob:", "font-src data:", "media-src data: blob:", "connect-src 'none'",
        "form-action 'none'", "base-uri 'none'", "frame-ancestors " + " ".join(frame_ancestors),
        "sandbox allow-scripts",
    ])


def serve_visual(context, environ, start_response):
    method = environ.get("REQUEST_METHOD", "GET")
    found = VISUAL_PATH.match(environ.get("PATH_INFO") or "")
    if method not in ("GET", "HEAD") or not found or context.visuals is None:
        return _plain(start_response, "404 Not Found", "the visuals origin serves only visual pages")
    try:
        chat_id, visual_id = unquote(found.group(1), errors="strict"), found.group(2)
        page = context.visuals.page(chat_id, visual_id).get(timeout=10)
    except (pykka.ActorDeadError, pykka.Timeout, ValueError):  # (an id that is no UTF-8, or too long)
        page = None
    try:
        body = gevent.get_hub().threadpool.apply(read_file, (page["path"],)) if page else None
    except OSError:
        body = None
    if body is None:
        return _plain(start_response, "404 Not Found", "no such visual")
    manifest = context.manifests.current()
    ancestors = [f"http://{service.host}:{context.port}" for service in manifest.services] + [context.control_origin]
    start_response("200 OK", [
        ("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
        ("Content-Security-Policy", policy(ancestors)), ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-store"),
        ("Cross-Origin-Opener-Policy", "same-origin")])
    return [b"" if method == "HEAD" else body]


def _plain(start_response, status: str, message: str):
    body = json.dumps({"error": message}).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                            ("X-Content-Type-Options", "nosniff")])
    return [body]

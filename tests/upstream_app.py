"""A tiny dev server for the tests: the person's own app that devhostd proxies.

    app = UpstreamApp().start()     # http://127.0.0.1:<port>/
    ...
    app.stop()

It runs in gevent greenlets of the test process (as the mock model servers do) and serves:
- ``/``: an HTML page with a fixed layout (``#box`` is 300×120 at 40,60) whose script opens the
  app's own WebSocket at ``/hmr`` (as a dev server's hot reload does) and shows what it hears;
- ``/hmr``: a WebSocket that says ``hello`` and answers ``ping:X`` with ``pong:X``;
- ``/gzip``, ``/deflate``, ``/chunked``, ``/nohead``, ``/brotli``, ``/zstd``: HTML sent compressed,
  chunked, or without a <head>; ``/compress`` (an encoding devhostd does not undo);
  ``/validated`` (HTML with an ETag); ``/status/<code>[/empty]`` (HTML with any status);
  ``/empty-chunked`` (an HTML answer with no body, chunked); ``/redirect`` (a 302 to the
  upstream's own address); ``/echo`` (the request, as JSON); ``/events`` (a server-sent event stream); ``/style.css``.
Every request is recorded in ``.requests`` as ``(method, path, headers)``.
"""
from __future__ import annotations

import gzip
import json
import zlib

import brotli
import pytest

from gevent import pool, pywsgi
from geventwebsocket.handler import WebSocketHandler

from web.proxy.decoders import zstd

PAGE = b"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Upstream app</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
<h1 id="title">The person's own app</h1>
<div id="box">A box that must not move</div>
<p id="ws-status">ws: waiting</p>
<p id="ws-echo"></p>
<script>
  const socket = new WebSocket(`ws://${location.host}/hmr`);
  socket.onopen = () => { document.getElementById("ws-status").textContent = "ws: open"; socket.send("ping:1"); };
  socket.onmessage = (m) => { document.getElementById("ws-echo").textContent += m.data + " "; };
  socket.onclose = () => { document.getElementById("ws-status").textContent = "ws: closed"; };
</script>
</body>
</html>
"""

STYLE = b"""
* { margin: 0; padding: 0; box-sizing: border-box; }
body { font: 16px/20px sans-serif; background: #fdf6e3; }
h1 { position: absolute; left: 40px; top: 10px; font-size: 24px; }
#box { position: absolute; left: 40px; top: 60px; width: 300px; height: 120px; background: #268bd2; color: white; }
#ws-status { position: absolute; left: 40px; top: 200px; }
#ws-echo { position: absolute; left: 40px; top: 230px; }
/* A page that styles everything it can: the panel must not be affected. */
div, section, button, textarea, select { font-family: serif !important; color: red; }
"""


class UpstreamApp:
    def __init__(self):
        self.requests: list[tuple[str, str, dict]] = []
        self.sockets_open = 0
        self._server = None
        self.url = None
        self.port = None

    def start(self) -> "UpstreamApp":
        self._server = pywsgi.WSGIServer(("127.0.0.1", 0), self._app, spawn=pool.Pool(64), log=None,
                                         handler_class=WebSocketHandler)
        self._server.start()
        self.port = self._server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(timeout=0.5)
            self._server = None

    def _app(self, environ, start_response):
        path = environ.get("PATH_INFO", "/")
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        self.requests.append((environ["REQUEST_METHOD"], path, headers))
        socket = environ.get("wsgi.websocket")
        if socket is not None:
            return self._socket(socket)
        if path == "/":
            return _answer(start_response, "200 OK", "text/html; charset=utf-8", PAGE)
        if path == "/style.css":
            return _answer(start_response, "200 OK", "text/css", STYLE)
        if path == "/gzip":
            return _answer(start_response, "200 OK", "text/html", gzip.compress(PAGE), [("Content-Encoding", "gzip")])
        if path == "/deflate":
            return _answer(start_response, "200 OK", "text/html", zlib.compress(PAGE),
                           [("Content-Encoding", "deflate")])
        if path == "/compress":
            return _answer(start_response, "200 OK", "text/html", b"\x1f\x9d\x90not undone here",
                           [("Content-Encoding", "compress")])
        if path == "/brotli":
            return _answer(start_response, "200 OK", "text/html", brotli.compress(PAGE), [("Content-Encoding", "br")])
        if path == "/zstd":
            return _answer(start_response, "200 OK", "text/html", zstd.compress(PAGE), [("Content-Encoding", "zstd")])
        if path == "/validated":
            return _answer(start_response, "200 OK", "text/html", PAGE,
                           [("ETag", '"upstream-v1"'), ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT"),
                            ("Vary", "Accept-Encoding")])
        if path.startswith("/status/"):  # /status/<code>[/empty]: an HTML answer with that status
            code = int(path.split("/")[2])
            body = b"" if path.endswith("/empty") else PAGE
            extra = [("Location", "/")] if 300 <= code < 400 else []
            start_response(f"{code} Status", [("Content-Type", "text/html"), *extra]
                           + ([] if code in (204, 304) else [("Content-Length", str(len(body)))]))
            return [b"" if code in (204, 304) else body]
        if path == "/empty-chunked":
            start_response("200 OK", [("Content-Type", "text/html")])  # chunked, with no chunk at all
            return iter([])
        if path == "/nohead":
            return _answer(start_response, "200 OK", "text/html", b"<p>no head at all</p>")
        if path == "/chunked":
            start_response("200 OK", [("Content-Type", "text/html")])  # no length: pywsgi chunks it
            return iter([PAGE[:40], PAGE[40:90], PAGE[90:]])
        if path == "/redirect":
            start_response("302 Found", [("Location", f"{self.url}/echo?from=redirect"), ("Content-Length", "0")])
            return [b""]
        if path == "/echo":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
            value = {"method": environ["REQUEST_METHOD"], "path": path, "query": environ.get("QUERY_STRING", ""),
                     "headers": headers, "body": body.decode(errors="replace")}
            return _answer(start_response, "200 OK", "application/json", json.dumps(value).encode(),
                           [("X-Upstream", "yes"), ("Set-Cookie", "session=abc; Path=/")])
        if path == "/events":
            start_response("200 OK", [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            return iter([b"data: one\n\n", b"data: two\n\n"])
        return _answer(start_response, "404 Not Found", "text/plain", b"upstream: not found")

    def _socket(self, socket):
        self.sockets_open += 1
        try:
            socket.send("hello")
            while True:
                message = socket.receive()
                if message is None:
                    break
                if isinstance(message, str) and message.startswith("ping:"):
                    socket.send("pong:" + message[5:])
        finally:
            self.sockets_open -= 1
        return []


def _answer(start_response, status, content_type, body, extra=()):
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body))), *extra])
    return [body]


def write_routed_manifest(root, upstream_url: str):
    """A stack whose app.localhost proxies to ``upstream_url``; other.localhost has no upstream."""
    (root / "project").mkdir(exist_ok=True)
    (root / "other").mkdir(exist_ok=True)
    path = root / "devhost.toml"
    path.write_text('name = "teststack"\n'
                    f'[services.app]\nhost = "app.localhost"\nroot = "project"\nupstream = "{upstream_url}"\n'
                    '[services.other]\nhost = "other.localhost"\nroot = "other"\n')
    return path


# ---- fixtures: import both into a test module (or conftest) that tests through the proxy ------

@pytest.fixture
def upstream():
    """The small upstream app, running for the test."""
    app = UpstreamApp().start()
    yield app
    app.stop()


@pytest.fixture(name="stack")
def proxied_stack(tmp_path, upstream):
    """A stack whose app.localhost proxies to ``upstream``; other.localhost is a plain page."""
    write_routed_manifest(tmp_path, upstream.url)
    return tmp_path

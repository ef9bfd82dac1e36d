"""The page in the loop, as a daemon extension (``EXTENSIONS`` in web/server.py): the page memory
actor (actors/page_memory.py), the page socket (web/page_socket.py), the locate route
(web/page_locate.py), and how the proxy tells the memory its own failures.
"""
from __future__ import annotations

import time

from actors.page_memory import PageMemory
from actors.tell import tell
from web import page_locate
from web.app import Endpoint
from web.page_socket import check, serve_page_socket
from web.sockets import frame

NAME = "pageMemory"


class PageLoop:
    name = NAME

    def start(self, context) -> dict:
        ref = PageMemory.start(encode=frame)
        ref.proxy().ping().get(timeout=10)
        return {NAME: ref}

    def install(self, app) -> None:
        context = app.context
        page_locate.install(app.bottle, context)
        app.websockets["/__devhost__/ws/page"] = Endpoint(
            check=lambda environ: check(context, environ),
            serve=lambda ws, environ, page: serve_page_socket(ws, context.actors[NAME], page))


EXTENSION = PageLoop()


def record_proxy_failure(context, hostname: str, environ, status: int, error: str | None = None) -> None:
    """One failed answer of the proxy (an upstream 5xx, a 502 of devhostd's own), told to the page
    memory: its method, path and status only, never a body or a header."""
    memory = context.actors.get(NAME)
    if memory is not None:
        tell(memory, "proxy_failure", hostname, environ.get("REQUEST_METHOD", "GET"),
             (environ.get("PATH_INFO") or "/")[:2000], status, error, int(time.time() * 1000))

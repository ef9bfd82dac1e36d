"""The page socket: ``/__devhost__/ws/page?pageURL=&chatTarget=`` on the page's own hostname.

Opened by the panel (web/static/chat/page_link.js) at load, one per page; under the thread
socket's rules (Host, exact Origin, refused before the upgrade, a page of the hostname it was
sent to). What the page reports is told to the page memory (actors/page_memory.py); it forgets
the page a little after its socket closes (a reload opens it again).

Page -> daemon: ``{type: "entries", errors: [...], requests: [...]}`` (what is new),
``{type: "element", requestId, element, count}`` (an answer to the daemon's question).
Daemon -> page: ``{type: "element", requestId, selector}``, ``{type: "proxy-requests", requests}``.
"""
from __future__ import annotations

import json
import secrets

from actors.tell import tell
from web import edge
from web.edge import Refusal
from web.sockets import SocketRoute


def check(context, environ) -> dict:
    """What the socket serves, checked before the upgrade: the page's URL, checkout, hostname."""
    hostname = edge.request_hostname(context, environ)
    if hostname is None:
        raise Refusal(403, "the page socket belongs to a routed page: connect from the page's own hostname")
    query = edge.query(environ)
    directory = edge.page_directory(context, environ, query.get("pageURL"), query.get("chatTarget"))
    service = context.manifests.current().service_for_host(hostname)
    # What the page's stacks are mapped with when the agent reads them (web/core/pages.py).
    mapping = {"upstream": service.upstream, "root": service.root, "host": environ.get("HTTP_HOST") or ""}
    return {"url": query["pageURL"][:4096], "directory": directory, "hostname": hostname, "mapping": mapping}


def serve_page_socket(ws, memory, page: dict) -> None:
    page_id = secrets.token_hex(8)

    def attach(sink):
        tell(memory, "open_page", page_id, page["url"], page["directory"], page["hostname"], sink, page["mapping"])
        return page_id

    def receive(message, sink, held):
        value = _read(message)
        if value is None:
            return  # a page's frame that is not ours is ignored, never fatal to its socket
        if value.get("type") == "entries":
            tell(memory, "page_entries", page_id, value.get("errors"), value.get("requests"))
        elif value.get("type") == "element":
            tell(memory, "element_answer", page_id, value.get("requestId"), value.get("element"), value.get("count"))

    SocketRoute("page", attach, receive, detach=lambda held: tell(memory, "close_page", page_id)).serve(ws)


def _read(message) -> dict | None:
    try:
        value = json.loads(message)
    except (ValueError, RecursionError, TypeError):
        return None
    return value if isinstance(value, dict) else None

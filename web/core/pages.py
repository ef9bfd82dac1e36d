"""The core's requests of the open pages of a chat's checkout: ``page.errors``, ``page.requests``
and ``page.element {selector}``, each ``{chatId, ...}`` (an agent may ask them for its own chat:
actors/agent_tokens.AGENT_REQUESTS). Only pages whose checkout is the chat's own directory are
answered; none open is an answer that says so (``pages: []`` and a ``note``), not an error.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import gevent

from actors.errors import ChatError
from actors.tell import tell
from web.core.payload import chat_of, get, text
from web.page_locate import locate
from web.proxy.upstream import Upstream
from web.source_maps import MAX_POSITIONS

ELEMENT_WAIT = 5.0  # seconds the pages have to describe an element
NO_PAGE = ("no page of this checkout is open in a browser with the devhost panel: open the app's page (its routed "
           "hostname) and ask again")


def _memory(service):
    if service.pages is None:
        raise ChatError("chat-unsupported", "This host keeps no page memory")
    return service.pages


def _directory(service, payload) -> str:
    info = get(chat_of(service, payload).info())
    directory = info.get("cwd") if isinstance(info, dict) else None
    if not directory:
        raise ChatError("chat-unsupported", "This chat has no checkout, so it has no pages")
    return directory


def _answer(pages: list) -> dict:
    return {"pages": pages} if pages else {"pages": [], "note": NO_PAGE}


def page_errors(service, payload, client):
    """Each page's errors, their stack frames mapped to the checkout's files (web/page_locate.py)."""
    directory = _directory(service, payload)
    pages = get(_memory(service).errors(directory))
    for page in pages:
        _map_stacks(page.pop("mapping", None), page["errors"], page["url"], directory)
    return _answer(pages)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10_000_000


def _map_stacks(mapping: dict | None, errors: list, page_url: str, directory: str) -> None:
    """Adds ``source: {file, line, column}`` to each frame the page's upstream has a map for."""
    frames = [frame for error in errors for frame in error["stack"] if "source" not in frame and frame.get("url")
              and _count(frame.get("line")) and _count(frame.get("column"))]
    if not mapping or not mapping.get("upstream") or not frames:
        return
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(page_url))
    found = locate([{"url": f["url"], "line": f["line"], "column": f["column"]} for f in frames[:MAX_POSITIONS]],
                   Upstream.parse(mapping["upstream"]), origin, mapping["host"], mapping["root"], directory)
    for frame, source in zip(frames, found):
        if source is not None:
            frame["source"] = source


def page_requests(service, payload, client):
    return _answer(get(_memory(service).requests(_directory(service, payload))))


def page_element(service, payload, client):
    """What each open page of the checkout says of the element ``selector`` finds there (its
    description, and how many elements match)."""
    selector = text(payload, "selector", limit=2000)
    memory = _memory(service)
    asked = get(memory.element_request(_directory(service, payload), selector))
    gevent.joinall([answer for _, _, answer in asked], timeout=ELEMENT_WAIT) if asked else None
    pages = []
    for url, _, answer in asked:
        said = answer.get(block=False) if answer.ready() else None
        if said is None:
            pages.append({"url": url, "error": f"the page did not answer in {ELEMENT_WAIT:.0f} s"})
        elif said.get("closed"):
            pages.append({"url": url, "error": "the page closed before it answered"})
        else:
            pages.append({"url": url, "element": said["element"], "count": said["count"]})
    late = [request_id for _, request_id, answer in asked if not answer.ready()]
    if late:
        tell(memory, "forget_requests", late)
    return _answer(pages)


REQUESTS = {"page.errors": page_errors, "page.requests": page_requests, "page.element": page_element}

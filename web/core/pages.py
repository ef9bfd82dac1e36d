"""The core's requests of the open pages of a chat's checkout: ``page.errors``, ``page.requests``
and ``page.element {selector}``, each ``{chatId, ...}`` (an agent may ask them for its own chat:
actors/agent_tokens.AGENT_REQUESTS). Only pages whose checkout is the chat's own directory are
answered; none open is an answer that says so (``pages: []`` and a ``note``), not an error.
"""
from __future__ import annotations

import gevent

from actors.errors import ChatError
from actors.tell import tell
from web.core.payload import chat_of, get, text

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
    return _answer(get(_memory(service).errors(_directory(service, payload))))


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

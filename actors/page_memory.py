"""PageMemory: the daemon's bounded memory of the open pages (one per page socket), for the agent.

One actor for every page: the page sockets (web/page_socket.py) tell it what their panel
reports, the proxy tells it its own failed answers (web/proxy/relay.py, by ``tell``: never an
ask on a request's path), and the chat core asks it for a checkout's pages (web/core/pages.py).
The data and its bounds are actors/page_ring.py's. Nothing is written to disk.

``page.element`` is asked of the pages themselves: ``element_request`` pushes the question to
each page of the checkout and answers one AsyncResult per page, which the page's answer sets
(``element_answer``, told by its socket); the edge waits for them with a timeout.
"""
from __future__ import annotations

import copy
import itertools
import time

import gevent.event
import pykka

from actors.guard import guarded
from actors.page_ring import PageBook, clean_request


class PageMemory(pykka.ThreadingActor):
    def __init__(self, clock=time.monotonic, encode=None):
        super().__init__()
        self._book = PageBook()
        self._clock = clock
        self._encode = encode  # value -> a frame (bytes) for a page's sink
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[str, gevent.event.AsyncResult]] = {}  # request id -> (page id, answer)

    def ping(self) -> bool:
        return True

    # ---- told by the page sockets ---------------------------------------------------------------

    @guarded
    def open_page(self, page_id: str, url: str, directory: str, hostname: str, sink, mapping=None) -> None:
        self._book.open(page_id, url, directory, hostname, sink, self._clock(), mapping)
        known = list(self._book.proxy.get(hostname, ()))
        if known and sink is not None:
            sink.push(self._encode({"type": "proxy-requests", "requests": known}))

    @guarded
    def close_page(self, page_id: str) -> None:
        self._book.close(page_id, self._clock())
        for request_id, (page, answer) in list(self._pending.items()):
            if page == page_id:
                del self._pending[request_id]
                answer.set({"closed": True})

    @guarded
    def page_entries(self, page_id: str, errors, requests) -> None:
        self._book.add(page_id, errors, requests)

    @guarded
    def element_answer(self, page_id: str, request_id, element, count) -> None:
        pending = self._pending.get(request_id) if isinstance(request_id, str) else None
        if pending is None or pending[0] != page_id:
            return  # late (the asker gave up) or another page's: nobody waits for it
        del self._pending[request_id]
        pending[1].set({"element": element if isinstance(element, dict) else None,
                        "count": count if isinstance(count, int) and not isinstance(count, bool) else 0})

    # ---- told by the proxy ----------------------------------------------------------------------

    @guarded
    def proxy_failure(self, hostname: str, method: str, path: str, status: int | None, error: str | None,
                      at_ms: int) -> None:
        entry = clean_request({"method": method, "url": path, "status": status, "error": error, "time": at_ms},
                              source="proxy")
        for sink in self._book.add_proxy(hostname, entry):
            sink.push(self._encode({"type": "proxy-requests", "requests": [entry]}))

    # ---- asked by the chat core -----------------------------------------------------------------

    # Copies: the asker (another greenlet) adds to what it got, and the rings stay this actor's.

    def errors(self, directory: str) -> list[dict]:
        return copy.deepcopy(self._book.errors(directory, self._clock()))

    def requests(self, directory: str) -> list[dict]:
        return copy.deepcopy(self._book.requests(directory, self._clock()))

    def element_request(self, directory: str, selector: str) -> list[tuple[str, str, gevent.event.AsyncResult]]:
        """Asks each open page of the checkout for the element ``selector`` finds: (its URL, the
        request's id, the answer to wait for), one per page."""
        asked = []
        for page in self._book.of(directory, self._clock()):
            if page.sink is None:
                continue
            request_id = f"e{next(self._ids)}"
            answer = gevent.event.AsyncResult()
            self._pending[request_id] = (page.page_id, answer)
            page.sink.push(self._encode({"type": "element", "requestId": request_id, "selector": selector}))
            asked.append((page.url, request_id, answer))
        return asked

    @guarded
    def forget_requests(self, request_ids: list[str]) -> None:
        """The asker stopped waiting for these."""
        for request_id in request_ids:
            self._pending.pop(request_id, None)

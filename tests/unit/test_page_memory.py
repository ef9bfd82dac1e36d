"""The PageMemory actor (actors/page_memory.py): what the page sockets tell it, the proxy's failures
passed to the pages of their hostname, and an element asked of each open page of a checkout,
answered by the page or settled when it closes."""
from __future__ import annotations

import json

import pytest

from actors.page_memory import PageMemory
from actors.tell import tell


class Sink:
    """What a page socket's sink gets: the frames, decoded."""

    def __init__(self):
        self.frames = []

    def push(self, frame: bytes) -> None:
        self.frames.append(json.loads(frame))


@pytest.fixture
def memory():
    ref = PageMemory.start(encode=lambda value: json.dumps(value).encode())
    yield ref.proxy()
    ref.stop()


def open_page(memory, page_id, url="http://app.localhost:7777/", directory="/co/shop", hostname="app.localhost"):
    sink = Sink()
    tell(memory, "open_page", page_id, url, directory, hostname, sink)
    return sink


def test_what_a_page_reports_is_answered_for_its_checkout(memory):
    open_page(memory, "p1")
    tell(memory, "page_entries", "p1", [{"kind": "console-warn", "message": "slow", "stack": []}],
         [{"method": "GET", "url": "/api/x", "status": None, "error": "Failed to fetch"}])
    [page] = memory.errors("/co/shop").get(timeout=5)
    assert page["errors"][0]["message"] == "slow" and page["open"]
    [page] = memory.requests("/co/shop").get(timeout=5)
    assert page["requests"][0]["error"] == "Failed to fetch" and page["requests"][0]["source"] == "page"
    assert memory.errors("/co/other").get(timeout=5) == []


def test_an_answer_is_a_copy_the_asker_may_change(memory):
    open_page(memory, "p1")
    tell(memory, "page_entries", "p1", [{"kind": "error", "message": "x", "stack": [{"url": "u", "line": 1}]}], [])
    memory.errors("/co/shop").get(timeout=5)[0]["errors"][0]["stack"][0]["source"] = "added by the edge"
    assert "source" not in memory.errors("/co/shop").get(timeout=5)[0]["errors"][0]["stack"][0]


def test_the_proxys_failure_goes_to_the_open_pages_of_its_hostname_and_to_a_page_opened_later(memory):
    shop, other = open_page(memory, "p1"), open_page(memory, "p2", "http://other.localhost:7777/", "/co/other",
                                                     "other.localhost")
    tell(memory, "proxy_failure", "app.localhost", "GET", "/api/cart", 502, "the upstream is not answering", 1000)
    memory.ping().get(timeout=5)
    assert shop.frames == [{"type": "proxy-requests", "requests": [
        {"kind": "request", "method": "GET", "url": "/api/cart", "status": 502,
         "error": "the upstream is not answering", "time": 1000, "source": "proxy"}]}]
    assert other.frames == []
    later = open_page(memory, "p3", "http://app.localhost:7777/cart")
    memory.ping().get(timeout=5)
    assert later.frames == shop.frames


def test_an_element_is_asked_of_each_open_page_of_the_checkout_and_settled_by_its_answer_or_its_close(memory):
    first, second = open_page(memory, "p1"), open_page(memory, "p2", "http://app.localhost:7777/cart")
    elsewhere = open_page(memory, "p3", "http://other.localhost:7777/", "/co/other", "other.localhost")
    asked = memory.element_request("/co/shop", "#checkout").get(timeout=5)
    assert [url for url, _, _ in asked] == ["http://app.localhost:7777/", "http://app.localhost:7777/cart"]
    [question] = first.frames
    assert question == {"type": "element", "requestId": asked[0][1], "selector": "#checkout"}
    assert elsewhere.frames == []
    tell(memory, "element_answer", "p2", asked[0][1], {"tag": "button"}, 1)  # another page's request: ignored
    tell(memory, "element_answer", "p1", asked[0][1], {"tag": "button"}, 1)
    assert asked[0][2].get(timeout=5) == {"element": {"tag": "button"}, "count": 1}
    assert second.frames[0]["requestId"] == asked[1][1]
    tell(memory, "close_page", "p2")
    assert asked[1][2].get(timeout=5) == {"closed": True}


def test_a_closed_page_is_asked_nothing_but_answers_from_its_memory_in_the_grace(memory):
    open_page(memory, "p1")
    tell(memory, "page_entries", "p1", [{"kind": "rejection", "message": "late", "stack": []}], [])
    tell(memory, "close_page", "p1")
    assert memory.element_request("/co/shop", "div").get(timeout=5) == []
    [page] = memory.errors("/co/shop").get(timeout=5)
    assert page["open"] is False and page["errors"][0]["message"] == "late"

"""The page's memory as data (actors/page_ring.py): per page a bounded ring, forgotten a grace
after its socket closed, a reload taking it over; the proxy's failures per hostname."""
from __future__ import annotations

from actors.page_ring import (MAX_ERRORS, MAX_FRAMES, MAX_MESSAGE, MAX_PAGES, MAX_REQUESTS, RELOAD_GRACE, PageBook,
                              clean_error, clean_request)

PAGE = "http://app.localhost:7777/cart"


def error(n: int, **extra) -> dict:
    return {"kind": "error", "message": f"boom {n}", "stack": [{"url": "http://app.localhost:7777/src/Cart.jsx",
                                                                 "line": 5, "column": 9, "fn": "fail"}],
            "time": n, **extra}


def failed(n: int, **extra) -> dict:
    return {"kind": "request", "method": "GET", "url": f"/api/{n}", "status": 500, "error": None, "time": n,
            "source": "page", **extra}


def book_with_page(directory="/co/shop", hostname="app.localhost") -> PageBook:
    book = PageBook()
    book.open("p1", PAGE, directory, hostname, sink=[], now=0)
    return book


def test_a_pages_errors_keep_the_newest_hundred_and_count_the_dropped():
    book = book_with_page()
    book.add("p1", [error(n) for n in range(MAX_ERRORS + 5)], [failed(n) for n in range(MAX_REQUESTS + 1)])
    [page] = book.errors("/co/shop", now=1)
    assert len(page["errors"]) == MAX_ERRORS and page["errors"][0]["message"] == "boom 5" and page["dropped"] == 5
    [page] = book.requests("/co/shop", now=1)
    assert len(page["requests"]) == MAX_REQUESTS and page["dropped"] == 1


def test_an_entry_is_cut_to_its_bounds_and_keeps_no_body_or_header():
    long = clean_error({**error(1), "message": "x" * 5000, "stack": [error(1)["stack"][0]] * 80})
    assert len(long["message"]) == MAX_MESSAGE + 1 and len(long["stack"]) == MAX_FRAMES
    kept = clean_request({**failed(1), "body": "secret=1", "headers": {"Authorization": "Bearer t"}})
    assert set(kept) == {"kind", "method", "url", "status", "error", "time", "source"}
    assert clean_error({"kind": "alert", "message": "x"}) is None and clean_request({"url": 3}) is None


def test_only_the_pages_of_the_checkout_are_answered():
    book = book_with_page()
    book.open("p2", "http://other.localhost:7777/", "/co/other", "other.localhost", sink=[], now=0)
    book.add("p2", [error(1)], [])
    assert book.errors("/co/shop", now=1)[0]["errors"] == []
    assert [p["url"] for p in book.errors("/co/other", now=1)] == ["http://other.localhost:7777/"]
    assert book.errors("/co/nothing", now=1) == []


def test_a_closed_page_is_forgotten_after_the_grace():
    book = book_with_page()
    book.add("p1", [error(1)], [])
    book.close("p1", now=10)
    [page] = book.errors("/co/shop", now=10 + RELOAD_GRACE - 1)
    assert page["open"] is False and page["errors"][0]["message"] == "boom 1"
    assert book.errors("/co/shop", now=10 + RELOAD_GRACE + 1) == []


def test_a_reload_in_the_grace_takes_the_pages_entries_over():
    book = book_with_page()
    book.add("p1", [error(1)], [failed(1)])
    book.close("p1", now=10)
    book.open("p2", PAGE, "/co/shop", "app.localhost", sink=[], now=12)
    book.add("p2", [error(2)], [])
    [page] = book.errors("/co/shop", now=13)
    assert page["open"] and [e["message"] for e in page["errors"]] == ["boom 1", "boom 2"]


def test_the_proxys_failures_go_to_the_pages_of_their_hostname_and_into_its_answers():
    book = book_with_page()
    sinks = book.add_proxy("app.localhost", clean_request(failed(5, url="/api/orders"), source="proxy"))
    assert sinks == [[]]  # the one open page's
    assert book.add_proxy("other.localhost", clean_request(failed(6), source="proxy")) == []
    book.add("p1", [], [failed(3), failed(7, source="proxy")])  # the proxy's, echoed by the page's ring: not kept twice
    [page] = book.requests("/co/shop", now=1)
    assert [(r["url"], r["source"]) for r in page["requests"]] == [("/api/3", "page"), ("/api/orders", "proxy")]


def test_at_most_sixteen_pages_are_kept_the_longest_open_going_first():
    book = PageBook()
    for n in range(MAX_PAGES + 2):
        book.open(f"p{n}", f"{PAGE}?{n}", "/co/shop", "app.localhost", sink=[], now=n)
    urls = [page["url"] for page in book.errors("/co/shop", now=100)]
    assert len(urls) == MAX_PAGES and urls[0] == f"{PAGE}?2"

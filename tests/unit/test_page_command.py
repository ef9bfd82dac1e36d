"""`devhostd page …`'s plain text (devhostd/page_command.py): one entry a group of lines, frames as
the checkout's file:line first, and what to do when there is nothing to read or nobody to ask."""
from __future__ import annotations

from devhostd import page_command
from devhostd.page_command import render

URL = "http://app.localhost:7777/cart"


def test_no_page_open_says_so():
    assert render("errors", {"pages": [], "note": "no page of this checkout is open in a browser"}) == \
        "no page of this checkout is open in a browser"


def test_errors_print_each_entry_with_its_frames_mapped_first():
    text = render("errors", {"pages": [{"url": URL, "open": True, "dropped": 3, "errors": [
        {"kind": "rejection", "message": "TypeError: x is undefined", "count": 4, "stack": [
            {"url": "http://app.localhost:7777/src/Cart.jsx?t=1", "line": 12, "column": 5, "fn": "load",
             "source": {"file": "src/Cart.jsx", "line": 40, "column": 7}},
            {"url": "http://app.localhost:7777/node_modules/.vite/deps/react.js", "line": 9, "column": 1}]}]}]})
    assert text.splitlines() == [
        f"page {URL}: 1 error (3 older dropped)",
        "- unhandled rejection (x4): TypeError: x is undefined",
        "    at load src/Cart.jsx:40:7 (served as http://app.localhost:7777/src/Cart.jsx?t=1:12:5)",
        "    at http://app.localhost:7777/node_modules/.vite/deps/react.js:9:1"]


def test_requests_say_the_status_or_the_network_error_and_who_answered():
    text = render("requests", {"pages": [{"url": URL, "open": False, "requests": [
        {"method": "GET", "url": "/api/cart", "status": None, "error": "Failed to fetch", "source": "page"},
        {"method": "POST", "url": "/api/orders", "status": 502, "error": "the upstream is down", "source": "proxy"}]}]})
    assert text.splitlines() == [
        f"page {URL} (closed just now: reloading?): 2 failed requests",
        "- GET /api/cart -> network error: Failed to fetch",
        "- POST /api/orders -> 502 (answered by the devhost proxy)",
        "    the upstream is down"]


def test_an_element_no_page_matches_or_that_did_not_answer_is_said_per_page():
    text = render("element", {"pages": [{"url": URL, "element": None, "count": 0},
                                        {"url": URL + "?2", "error": "the page did not answer in 5 s"}]})
    assert text == f"page {URL}: no element matches\n\npage {URL}?2: the page did not answer in 5 s"


def test_without_a_chat_to_ask_it_exits_1_with_what_to_do(monkeypatch, capsys, tmp_path):
    for name in ("DEVHOSTD_CHAT", "DEVHOSTD_URL", "DEVHOSTD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert page_command.main(["errors"], str(tmp_path)) == 1
    assert "run this from an agent that devhostd started" in capsys.readouterr().err

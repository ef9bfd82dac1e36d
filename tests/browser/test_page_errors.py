"""The ring of the page's errors and failed requests, and its "Attach page errors" button, in
Chromium on a plain page behind the real proxy, with the real Claude Code on the mock model
server (web/static/chat/page_errors.js, page_errors_text.js, page_attach.js).

- From the page's first moments (a warning its module logs as it loads, before the panel is
  there) the ring keeps an uncaught error, an unhandled rejection, console.error (repeats counted
  on one entry, not kept again) and console.warn, each with its stack as frames of the page's own
  module; and failed requests: a 404 fetch, a 404 XHR, a fetch that cannot connect — never
  devhostd's own requests, never a body or a header. The page's own calls go on as before.
- The ring is bounded (100 errors, the oldest dropped and counted; messages cut at 2,000
  characters) and parses Chromium's and Firefox's stacks.
- "Attach page errors (N)" appears once there is an entry and says how many; pressing it shows
  the exact [Page errors] text before anything is sent; that text is what reaches the model,
  after the person's words, and then it is gone from the composer. axe-core finds nothing on
  the button and the preview.
"""
from __future__ import annotations

import socket

import pytest
from playwright.sync_api import expect

from tests.browser.a11y import assert_clean_in_both_themes, assert_every_control_labelled
from tests.browser.page_app import upstream  # noqa: F401 - the app with /errors behind app.localhost
from tests.browser.panel import Panel
from tests.mock_anthropic import message_text, text_reply

MODULE = "/__devhost__/static/chat/page_errors.js"
ENTRIES = f"async () => (await import('{MODULE}')).pageEntries()"


@pytest.fixture
def page(throwing_page):
    """The page, allowed to throw: these tests make it (the conftest's page fails a test that does)."""
    return throwing_page


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def go_wrong(page) -> None:
    """Everything /errors.js can do wrong, once each, and console.error three times alike."""
    said = []
    page.on("console", lambda message: said.append(message.text))
    page.evaluate("app.throwLater()")
    page.evaluate("app.reject()")
    for _ in range(3):
        page.evaluate("app.logError(42)")
    assert page.evaluate("app.fetchMissing()") == 404  # the page gets its answer as before
    assert page.evaluate("app.xhrMissing()") == 404
    assert page.evaluate("app.fetchOwn()") == 404
    assert page.evaluate("(port) => app.fetchUnreachable(port)", closed_port()) == "Failed to fetch"
    assert said.count("checkout failed: 42") == 3  # the console still says it, every time
    page.wait_for_function(f"async () => {{ const e = await ({ENTRIES})(); "
                           "return e.errors.length === 4 && e.requests.length === 3; }")


def test_the_ring_keeps_errors_rejections_console_and_failed_requests_but_not_devhostds(page, daemon):
    panel = Panel(page, daemon).open("/errors")
    origin = daemon.page("app.localhost").rstrip("/")
    go_wrong(page)
    entries = page.evaluate(ENTRIES)
    warn, thrown, rejection, logged = entries["errors"]
    assert warn["kind"] == "console-warn" and warn["message"] == "the app started without a cart"
    assert warn["stack"][0]["url"] == f"{origin}/errors.js" and warn["stack"][0]["line"] == 1
    assert thrown["kind"] == "error" and thrown["message"] == "TypeError: cart is undefined"
    assert thrown["stack"][0] == {"url": f"{origin}/errors.js", "line": 4, "column": 9, "fn": "explode"}
    assert rejection["kind"] == "rejection" and rejection["message"] == "Error: the price could not be loaded"
    assert rejection["stack"][0]["fn"] == "refuse"
    assert logged["kind"] == "console-error" and logged["message"] == "checkout failed: 42" and logged["count"] == 3
    assert logged["stack"][0]["fn"] == "Object.logError", logged["stack"]  # where the page called it, not the hook
    assert all(set(e) <= {"kind", "message", "stack", "time", "count"} for e in entries["errors"])
    requests = [{k: r[k] for k in ("method", "url", "status", "source")} | {"error": bool(r["error"])}
                for r in entries["requests"]]
    assert requests == [
        {"method": "GET", "url": f"{origin}/api/missing", "status": 404, "source": "page", "error": False},
        {"method": "POST", "url": f"{origin}/api/xhr-missing", "status": 404, "source": "page", "error": False},
        {"method": "GET", "url": requests[2]["url"], "status": None, "source": "page", "error": True},
    ]
    assert entries["requests"][2]["error"] == "TypeError: Failed to fetch"
    assert all(set(r) == {"kind", "method", "url", "status", "error", "time", "source"} for r in entries["requests"])
    assert not any("/__devhost__/" in r["url"] for r in entries["requests"])  # the panel's calls too
    assert len(page.thrown) == 2 and "cart is undefined" in page.thrown[0], page.thrown
    expect(panel.find(".attach-errors")).to_have_text("Attach page errors (7)")


def test_the_ring_is_bounded_and_reads_chromium_and_firefox_stacks(page, daemon):
    Panel(page, daemon).load("/errors")
    result = page.evaluate("""async (module) => {
      const ring = await import(module);
      for (let n = 0; n < 150; n++) console.error(`failure number ${n}`);
      console.error("y".repeat(5000));
      ring.addProxyRequests([{ method: "get", url: `${location.origin}/api/down`, status: 502, time: 1 },
                             { method: "GET", url: `${location.origin}/__devhost__/x`, status: 500 }]);
      const entries = ring.pageEntries();
      const chromium = ring.parseStack([
        "TypeError: x is undefined",
        "    at render (http://app.localhost:7777/src/Cart.jsx?t=1:42:7)",
        "    at async Promise.all (index 0)",
        "    at http://app.localhost:7777/@vite/client:10:3",
        "    at new Store (http://app.localhost:7777/src/store.js:3:1)",
      ].join("\\n"));
      const firefox = ring.parseStack("render@http://app.localhost:7777/src/Cart.jsx:42:7\\n@http://app.localhost:7777/main.js:1:1\\n");
      let heard = [];
      const stop = ring.onEntry((entry) => heard.push(entry.message));
      console.warn("once");
      console.warn("once");
      stop();
      console.warn("not heard");
      ring.clearEntries();
      return { count: entries.errors.length, first: entries.errors[0].message, dropped: entries.dropped,
               last: entries.errors.at(-1).message.length, proxy: entries.requests, chromium, firefox, heard,
               after: ring.pageEntries().errors.length };
    }""", MODULE)
    assert result["count"] == 100 and result["dropped"]["errors"] == 52  # the load's warning, 151 errors: 52 dropped
    assert result["first"] == "failure number 51"
    assert result["last"] == 2000
    assert [(r["method"], r["status"], r["source"]) for r in result["proxy"]] == [("GET", 502, "proxy")]
    assert result["chromium"] == [
        {"url": "http://app.localhost:7777/src/Cart.jsx?t=1", "line": 42, "column": 7, "fn": "render"},
        {"url": "http://app.localhost:7777/@vite/client", "line": 10, "column": 3},
        {"url": "http://app.localhost:7777/src/store.js", "line": 3, "column": 1, "fn": "new Store"},
    ]
    assert result["firefox"] == [
        {"url": "http://app.localhost:7777/src/Cart.jsx", "line": 42, "column": 7, "fn": "render"},
        {"url": "http://app.localhost:7777/main.js", "line": 1, "column": 1},
    ]
    assert result["heard"] == ["once"]  # a repeat is counted on its entry, not told again
    assert result["after"] == 0


def test_attach_page_errors_shows_the_exact_text_before_it_goes_and_the_model_gets_it(page, daemon, mock, shots):
    mock.add(text_reply("The cart is undefined in explode()."))
    panel = Panel(page, daemon).open("/errors")
    origin = daemon.page("app.localhost").rstrip("/")
    attach = page.get_by_role("button", name="Attach page errors (1)")
    expect(attach).to_be_visible()  # the warning of the page's load
    go_wrong(page)
    attach = page.get_by_role("button", name="Attach page errors (7)")
    expect(attach).to_be_visible()
    assert attach.get_attribute("title")
    attach.click()
    preview = page.get_by_role("region", name="Page errors to send")
    expect(preview).to_be_visible()
    shown = preview.locator(".page-errors-text").text_content()
    lines = shown.splitlines()
    assert lines[:3] == ["[Page errors]", f"Page: {origin}/errors", "Errors (4):"], shown
    assert "2. Uncaught error: TypeError: cart is undefined" in lines
    # A frame the daemon does not map keeps the URL it ran from (errors.js has no source map).
    assert f"   at explode ({origin}/errors.js:4:9)" in lines, shown
    assert "4. console.error: checkout failed: 42 (3 times)" in lines
    assert "Failed requests (3):" in lines
    assert f"1. GET {origin}/api/missing → 404" in lines and f"2. POST {origin}/api/xhr-missing → 404" in lines
    unreachable = "→ network error: TypeError: Failed to fetch"
    assert any(line.startswith("3. GET http://127.0.0.1:") and line.endswith(unreachable) for line in lines), shown
    shots(page, "40-page-errors-preview")
    assert_every_control_labelled(page, "with the page errors attached")
    assert_clean_in_both_themes(page, "with the page errors attached")
    panel.send("Why does the cart fail?")
    expect(panel.items("assistant")).to_have_text("The cart is undefined in explode().")
    expect(preview).to_have_count(0)
    said = message_text(mock.requests[0])
    assert f"Why does the cart fail?\n\n{shown}" in said, said  # exactly what the person saw, after their words
    stored = page.evaluate("() => Object.keys(localStorage).filter((k) => localStorage[k].includes('Page errors'))")
    assert stored == []  # nothing of it is kept in the page's storage
    # Drawn again from what devhostd kept, the message shows the person's words; the errors are a chip.
    panel.reload()
    bubble = panel.items("user").locator(".bubble")
    expect(bubble.locator("details.context > summary")).to_have_text("page context")
    expect(bubble.locator("details.context > .pre")).to_be_hidden()  # until opened
    expect(bubble.locator("details.context > .pre")).to_contain_text("checkout failed: 42 (3 times)")
    expect(bubble).to_contain_text("Why does the cart fail?")


def test_removing_the_preview_sends_no_errors(page, daemon, mock):
    mock.add(text_reply("Fine."))
    panel = Panel(page, daemon).open("/errors")
    page.get_by_role("button", name="Attach page errors (1)").click()
    expect(page.get_by_role("region", name="Page errors to send")).to_be_visible()
    page.get_by_role("button", name="Remove the page errors").click()
    expect(page.get_by_role("region", name="Page errors to send")).to_have_count(0)
    panel.send("Just a question.")
    expect(panel.items("assistant")).to_have_text("Fine.")
    assert "[Page errors]" not in message_text(mock.requests[0])

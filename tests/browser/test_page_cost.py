"""The page first (issue 29): what devhostd's panel costs a real Vite page through the proxy in
Chromium. Before the panel is opened a page load makes at most 3 requests to /__devhost__/ (panel.js,
the ring of page errors, the page socket's module: web/static/chat/panel.js); a reload gets them
from the browser's cache, revalidated by their content's ETag (304s, no body); the launcher then
opens the whole panel, which loads at that moment; and once the panel is in use a reload loads
it at once again, as before."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import vite, vite_port, write_config  # noqa: F401 - fixtures

MODULES = 30  # the app's own modules: the page's load is the app's, not a blank page's

INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vite app</title><link rel="icon" href="data:,"></head>
<body><h1 id="app">loading</h1><script type="module" src="/main.js"></script></body></html>
"""

# The resource timings of devhostd's files on this load: how each came (a body, or none).
OWN_TIMINGS = """() => performance.getEntriesByType("resource")
    .filter((e) => new URL(e.name).pathname.startsWith("/__devhost__/static/"))
    .map((e) => ({url: e.name, transferSize: e.transferSize, encodedBodySize: e.encodedBodySize,
                  status: e.responseStatus}))"""


@pytest.fixture
def stack(tmp_path, vite_port):
    """app.localhost proxies to the Vite dev server of project/, an app of MODULES modules."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    project = tmp_path / "project"
    write_config(project, "plain")
    (project / "index.html").write_text(INDEX)
    imports = "".join(f'import {{ part as p{i} }} from "./m{i}.js";\n' for i in range(MODULES))
    (project / "main.js").write_text(imports + f'document.getElementById("app").textContent = '
                                     f'"ready " + [{", ".join(f"p{i}" for i in range(MODULES))}].length;\n')
    for i in range(MODULES):
        (project / f"m{i}.js").write_text(f"export const part = {i};\n")
    return tmp_path


def own_requests(page):
    """The URLs of devhostd's requests the page makes from now on (page.on("request"))."""
    seen = []
    page.on("request", lambda request: seen.append(request.url) if "/__devhost__/" in request.url else None)
    return seen


def load_until_settled(page, url_or_reload):
    """Loads (or reloads) the page and waits until its panel script ran and its page socket is open."""
    with page.expect_websocket(lambda ws: "/__devhost__/ws/page" in ws.url):
        url_or_reload()
    expect(page.locator("#app")).to_have_text(f"ready {MODULES}")
    page.wait_for_function("() => window.__devhostChat?.booted === true")


def test_the_panel_costs_a_page_load_at_most_three_requests_cached_by_content_and_opens_when_asked(
        page, daemon, vite):
    url = daemon.page("app.localhost")
    seen = own_requests(page)
    load_until_settled(page, lambda: page.goto(url))
    assert 1 <= len(seen) <= 3, seen
    assert page.evaluate("() => window.__devhostChat.lite") is True  # only the launcher so far
    panel = Panel(page, daemon)
    expect(panel.find(".launcher")).to_be_visible()
    expect(panel.find(".panel")).to_have_count(0)

    # A reload: the same files, none of them with a body (the cache's copy, or a 304 by content).
    seen.clear()
    load_until_settled(page, page.reload)
    assert 1 <= len(seen) <= 3, seen
    timings = page.evaluate(OWN_TIMINGS)
    assert len(timings) == len(seen), (timings, seen)
    for timing in timings:
        # A 304's transfer is its head only: no more bytes came than a head's.
        assert timing["transferSize"] < 600, timing

    # Opening it from the launcher loads the whole panel, which works as ever.
    seen.clear()
    panel.find(".launcher").click()
    expect(panel.find(".panel")).to_be_visible()
    panel.wait_for_harnesses()
    assert any(u.endswith("/ui.js") for u in seen), seen
    expect(panel.find(".launcher")).to_have_count(1)
    expect(panel.find(".launcher")).to_be_hidden()

    # In use now: a reload loads the panel at once (open, as it was left), without the launcher.
    load_until_settled(page, page.reload)
    page.wait_for_function("() => window.__devhostChat?.booted === true && !window.__devhostChat.lite")
    expect(panel.find(".panel")).to_be_visible()

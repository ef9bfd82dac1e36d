"""The Vite test apps (tests/vite_apps.py) do what the page-error tests count on, in Chromium on
Vite itself: each renders, its #throw button's handler throws and its #reject button's promise is
rejected (both reach the page uncaught, with a stack frame in Cart's served module), and its
fetches fail with a 404 and a 500."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.vite_apps import KINDS, REJECTED, THROWN, run_vite, vite_port, write_app  # noqa: F401 - fixtures

# What reaches the window: "error" events and "unhandledrejection"s.
RECORD = """() => {
  window.__seen = [];
  const frame = (error) => String(error?.stack || "").split("\\n")
    .find((line) => /\\/(src\\/Cart\\.|main\\.js)/.test(line));
  const seen = (kind, error) => __seen.push({kind, message: error?.message, frame: frame(error)});
  addEventListener("error", (event) => seen("error", event.error));
  addEventListener("unhandledrejection", (event) => seen("rejection", event.reason));
}"""


@pytest.mark.parametrize("kind", KINDS)
def test_each_app_renders_throws_rejects_and_fails_its_fetches(browser, tmp_path, vite_port, kind):
    app = write_app(tmp_path / "project", kind)
    with run_vite(app.project, vite_port, hmr_port=vite_port, log_path=tmp_path / "vite.log"):
        page = browser.new_page()
        page.add_init_script(f"({RECORD})()")
        page.goto(f"http://127.0.0.1:{vite_port}/")
        expect(page.locator("#status")).to_have_text("ready")
        page.click("#throw")
        page.click("#reject")
        page.wait_for_function("() => __seen.length >= 2")
        seen = {entry["message"]: entry for entry in page.evaluate("() => __seen")}
        assert set(seen) == {THROWN, REJECTED}
        cart = app.cart or "main.js"
        assert all(f"/{cart}:" in entry["frame"] for entry in seen.values()), seen
        assert (seen[THROWN]["kind"], seen[REJECTED]["kind"]) == ("error", "rejection")
        for button, status in (("#fetch-missing", 404), ("#fetch-broken", 500)):
            with page.expect_response(lambda response: "/api/" in response.url) as answer:
                page.click(button)
            assert answer.value.status == status

"""Browser tests: Debian's Chromium, driven by Playwright for Python, on the pages devhostd
routes, with the real CLIs behind the panel (on the tests' mock model servers) and a real
upstream app (tests/upstream_app.py) behind the routed hostname.

Playwright's sync API runs its asyncio loop in greenlets of this (gevent-patched) process; its
waits go through patched selectors, so the mock servers and the upstream app, which run in
greenlets too, keep answering while a test waits on the browser.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.integration.conftest import daemon, daemon_env, mock, openai  # noqa: F401 - shared fixtures
from tests.upstream_app import proxied_stack, upstream  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# The committed pictures the README shows are refreshed on request only
# (DEVHOST_UPDATE_SCREENSHOTS=1); otherwise a run writes its screenshots to a folder git ignores.
SCREENSHOTS = REPO / ("docs/screenshots" if os.environ.get("DEVHOST_UPDATE_SCREENSHOTS") else ".screenshots")
# Keeps Chromium off the network (no updates, sync, metrics, first-run pages) and lets the
# panel's screenshot capture its own tab without a permission prompt.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
         "--disable-breakpad", "--metrics-recording-only", "--auto-accept-this-tab-capture",
         "--host-resolver-rules=MAP *.localhost 127.0.0.1"]
VIEWPORT = {"width": 1280, "height": 800}
# Waits are for conditions (a reply from a real CLI can take a while), never measured timings.
expect.set_options(timeout=60_000)



@pytest.fixture(scope="session")
def playwright():
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"{CHROMIUM} is missing: `bash tests/run.sh` installs Debian's chromium")
    with sync_playwright() as running:
        yield running


@pytest.fixture
def browser(playwright, tmp_path):
    """A fresh Chromium profile per test (its own localStorage), closed with the test."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
        viewport=VIEWPORT, locale="en-US", timezone_id="UTC", color_scheme="light")
    context.set_default_timeout(60_000)
    yield context
    context.close()


@pytest.fixture
def page(browser):
    page = browser.pages[0] if browser.pages else browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"the page threw: {errors}"


@pytest.fixture
def throwing_page(browser):
    """The page, allowed to throw (what it threw is in ``page.thrown``), for the modules whose tests
    make it: their own ``page`` fixture returns it."""
    page = browser.pages[0] if browser.pages else browser.new_page()
    page.thrown = []
    page.on("pageerror", lambda error: page.thrown.append(str(error)))
    return page


@pytest.fixture
def shots():
    """Writes a screenshot of the panel's main states (see SCREENSHOTS for where)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), animations="disabled", caret="hide")
        return path
    return take

"""The page in the loop, end to end, in Chromium on real Vite apps (tests/vite_apps.py: React 19 and
18 by @vitejs/plugin-react, Vue 3 by @vitejs/plugin-vue, Svelte 5 by @sveltejs/vite-plugin-svelte,
and a page of no framework) behind devhostd, with the real Claude Code on the mock model server:

- a picked element reaches the model with the file and line that create it (Vue's dev build keeps
  no line per element: its file) and its component chain, each file relative to the checkout;
- an error thrown in a component and a failed fetch, attached with "Attach page errors", reach the
  model with the component's file and line, mapped through the served module's source map;
- an element of a page with no framework still gets everything else.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.browser.test_page_picker import field, sections
from tests.mock_anthropic import message_text, text_reply
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import THROWN, App, vite, vite_port, write_app  # noqa: F401 - fixtures


@pytest.fixture
def app(request, tmp_path, vite_port) -> App:
    """The app named by the test's parametrize (indirect), at app.localhost."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    return write_app(tmp_path / "project", getattr(request, "param", "plain"))


@pytest.fixture
def stack(app):
    return app.project.parent


@pytest.fixture
def page(throwing_page):
    """The page, allowed to throw: the errors test makes it (the conftest's page fails a test that does)."""
    return throwing_page


def opened(page, daemon) -> Panel:
    panel = Panel(page, daemon).open()
    expect(page.locator("#status")).to_have_text("ready")
    return panel


def pick(page, panel, selector: str) -> None:
    page.get_by_role("button", name="Pick an element").click()
    page.click(selector)
    expect(panel.find(".page-tray .page-chip")).to_have_count(1)


def cart_files(app: App) -> tuple[str, str]:
    """(Cart's file, App's file), relative to the checkout (the service's root, the project)."""
    return app.cart, app.cart.replace("Cart", "App")


def context_of(request: dict) -> str:
    """The one [Page context] section of the message the model got, without the prompt after it."""
    [section] = sections(message_text(request))
    return section.split("\n\n---\n")[0]


@pytest.mark.parametrize("app", ["react19", "react18", "vue", "svelte"], indirect=True)
def test_a_picked_element_reaches_the_model_with_the_line_that_creates_it_and_its_components(
        page, daemon, mock, app, vite):
    mock.add(text_reply("That is the checkout button."))
    panel = opened(page, daemon)
    pick(page, panel, "#checkout")
    panel.send("why is this one grey?")
    expect(panel.items("assistant").last).to_have_text("That is the checkout button.")
    section = context_of(mock.requests[0])
    cart, app_file = cart_files(app)
    where = cart if app.kind == "vue" else f"{cart}:{app.checkout_line}"
    assert field(section, "Source") == where, section
    components = field(section, "Components")
    assert components.startswith(f"Cart ({cart}") and f" < App ({app_file}" in components, section
    assert field(section, "Selector") == "#checkout"


@pytest.mark.parametrize("app", ["react19", "vue", "svelte"], indirect=True)
def test_an_error_thrown_in_a_component_and_a_failed_fetch_are_attached_with_the_components_line(
        page, daemon, mock, app, vite):
    mock.add(text_reply("The cart throws."))
    panel = opened(page, daemon)
    page.click("#throw")
    page.click("#fetch-missing")
    # Two at least: Vue's dev build also warns of the unhandled error, in words of its own.
    attach = page.get_by_role("button", name=re.compile(r"^Attach page errors \(\d+\)"))
    expect(attach).to_be_visible()
    page.wait_for_function("""async () => {
      const { pageEntries } = await import("/__devhost__/static/chat/page_errors.js");
      const { errors, requests } = pageEntries();
      return errors.length >= 1 && requests.length === 1;
    }""")
    attach.click()
    preview = page.get_by_role("region", name="Page errors to send")
    cart, _ = cart_files(app)
    thrown_at = f"{cart}:{app.line_of(app.cart, 'throw new Error')}"
    expect(preview).to_contain_text(thrown_at)  # mapped before it is shown, as it will be sent
    panel.send("why does checkout fail?")
    expect(panel.items("assistant").last).to_have_text("The cart throws.")
    said = message_text(mock.requests[0])
    assert f"Uncaught error: Error: {THROWN}" in said, said
    assert thrown_at in said, said
    assert f"GET {daemon.page('app.localhost').rstrip('/')}/api/missing → 404" in said, said
    assert page.thrown and THROWN in page.thrown[0]  # the page itself still saw its error


def test_an_element_of_a_page_without_a_framework_gets_everything_else(page, daemon, mock, app, vite):
    mock.add(text_reply("A plain button."))
    panel = opened(page, daemon)
    pick(page, panel, "#checkout")
    panel.send("what is this?")
    expect(panel.items("assistant").last).to_have_text("A plain button.")
    section = context_of(mock.requests[0])
    assert field(section, "Source") is None and field(section, "Components") is None, section
    assert field(section, "Selector") == "#checkout"
    assert field(section, "Page") == daemon.page("app.localhost")
    assert field(section, "HTML").startswith('<button id="checkout"'), section

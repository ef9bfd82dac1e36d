"""What frameworkInfo (web/static/chat/frameworks.js) reads off an element of a real dev build,
in Chromium, on the Vite apps of tests/vite_apps.py behind devhostd: the framework, where the
element itself is created (its JSX or template line) and the component chain Cart → App.

- React 18 names the file and line (fibers' _debugSource);
- React 19 names the served module's url, line and column (the JSX call's frame of the fiber's
  _debugStack), which the module's own source map (served by Vite) maps to Cart's line;
- Vue 3 names Cart's file, and no line: the dev build keeps none per element;
- Svelte 5 names the file (relative to the dev server's root) and line;
- a page without a framework gets none, and no source.
"""
from __future__ import annotations

import base64
import json
import re
import subprocess

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import NODE_MODULES, App, vite, vite_port, write_app  # noqa: F401 - fixtures

FRAMEWORK_INFO = """async (selector) => {
  const { frameworkInfo } = await import("/__devhost__/static/chat/frameworks.js");
  return frameworkInfo(document.querySelector(selector));
}"""


@pytest.fixture
def app(request, tmp_path, vite_port) -> App:
    """The app named by the test's parametrize (indirect), at app.localhost."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    return write_app(tmp_path / "project", request.param)


@pytest.fixture
def stack(app):
    return app.project.parent


def info_of(page, daemon, selector: str = "#checkout") -> dict:
    Panel(page, daemon).load()
    expect(page.locator("#status")).to_have_text("ready")
    return page.evaluate(FRAMEWORK_INFO, selector)


def original_position(page, url: str, line: int, column: int) -> dict:
    """Where the served module at ``url`` (as the page fetches it) says line:column comes from,
    by the source map Vite inlines in it, read with source-map-js (a dependency of Vite's)."""
    code = page.evaluate("(url) => fetch(url).then((r) => r.text())", url)
    found = re.search(r"//# sourceMappingURL=data:application/json;(?:charset=utf-8;)?base64,(\S+)", code)
    assert found, f"{url} has no inline source map: {code[-300:]!r}"
    source_map = base64.b64decode(found.group(1)).decode()
    script = ("const { SourceMapConsumer } = require('source-map-js');"
              "const [map, line, column] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const found = new SourceMapConsumer(map).originalPositionFor({ line, column: column - 1 });"
              "process.stdout.write(JSON.stringify(found));")
    out = subprocess.run(["node", "-e", script], input=json.dumps([json.loads(source_map), line, column]),
                         capture_output=True, text=True, timeout=30, check=True,
                         env={"PATH": "/usr/bin:/bin", "NODE_PATH": str(NODE_MODULES)})
    return json.loads(out.stdout)


@pytest.mark.parametrize("app", ["react18"], indirect=True)
def test_react_18_names_the_file_and_line_of_the_elements_jsx_and_the_chain_cart_app(page, daemon, vite, app):
    info = info_of(page, daemon)
    cart, app_file = str(app.project / "src/Cart.jsx"), str(app.project / "src/App.jsx")
    assert info["framework"] == "react"
    assert info["source"] == {"file": cart, "line": app.checkout_line,
                              "column": app.column_of(app.cart, '<button id="checkout"')}
    # Each component where its own markup begins (Cart's <section>, App's <main>); StrictMode
    # and Suspense are React's own.
    assert info["components"] == [
        {"name": "Cart", "file": cart, "line": app.line_of(app.cart, "<section"), "column": 5},
        {"name": "App", "file": app_file, "line": app.line_of("src/App.jsx", "<main>"), "column": 5},
    ]


@pytest.mark.parametrize("app", ["react19"], indirect=True)
def test_react_19_names_the_served_module_position_that_its_source_map_maps_to_the_elements_line(
        page, daemon, vite, app):
    info = info_of(page, daemon)
    assert info["framework"] == "react"
    source = info["source"]
    assert source["url"] == f"{daemon.page('app.localhost').rstrip('/')}/src/Cart.jsx"
    original = original_position(page, source["url"], source["line"], source["column"])
    assert original["source"].endswith("Cart.jsx")
    assert original["line"] == app.checkout_line
    assert [c["name"] for c in info["components"]] == ["Cart", "App"]
    assert [c["url"].rsplit("/", 1)[1] for c in info["components"]] == ["Cart.jsx", "App.jsx"]
    cart_root = original_position(page, info["components"][0]["url"], info["components"][0]["line"],
                                  info["components"][0]["column"])
    assert cart_root["line"] == app.line_of(app.cart, "<section")
    app_root = original_position(page, info["components"][1]["url"], info["components"][1]["line"],
                                 info["components"][1]["column"])
    assert app_root["line"] == app.line_of("src/App.jsx", "<main>")


@pytest.mark.parametrize("app", ["vue"], indirect=True)
def test_vue_names_the_components_file_and_the_chain_cart_app_without_keep_alive(page, daemon, vite, app):
    info = info_of(page, daemon)
    cart, app_file = str(app.project / "src/Cart.vue"), str(app.project / "src/App.vue")
    assert info == {"framework": "vue", "source": {"file": cart},
                    "components": [{"name": "Cart", "file": cart}, {"name": "App", "file": app_file}]}


@pytest.mark.parametrize("app", ["svelte"], indirect=True)
def test_svelte_names_the_file_and_line_of_the_elements_tag_and_the_chain_cart_app(page, daemon, vite, app):
    info = info_of(page, daemon)
    assert info["framework"] == "svelte"
    assert info["source"] == {"file": "src/Cart.svelte", "line": app.checkout_line,
                              "column": app.column_of(app.cart, '<button id="checkout"')}
    # Each component where its own markup begins (Cart's <section>, App's <main>); the {#if}
    # block around Cart is no component.
    assert info["components"] == [
        {"name": "Cart", "file": "src/Cart.svelte", "line": app.line_of(app.cart, "<section"), "column": 1},
        {"name": "App", "file": "src/App.svelte", "line": app.line_of("src/App.svelte", "<main>"), "column": 1},
    ]


@pytest.mark.parametrize("app", ["react19", "svelte"], indirect=True)
def test_an_element_a_script_added_inside_the_app_gets_the_components_around_it_and_no_source(
        page, daemon, vite, app):
    Panel(page, daemon).load()
    expect(page.locator("#status")).to_have_text("ready")
    page.evaluate("""() => { const added = document.createElement("span"); added.id = "added";
                             document.getElementById("checkout").append(added); }""")
    info = page.evaluate(FRAMEWORK_INFO, "#added")
    assert info["source"] is None
    assert [c["name"] for c in info["components"]] == ["Cart", "App"]


@pytest.mark.parametrize("app", ["plain"], indirect=True)
def test_a_page_without_a_framework_gets_no_framework_and_no_source(page, daemon, vite, app):
    assert info_of(page, daemon) == {"framework": None, "source": None, "components": []}
    assert page.evaluate(FRAMEWORK_INFO, "body") == {"framework": None, "source": None, "components": []}

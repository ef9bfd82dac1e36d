"""Small real Vite projects, and Vite running them behind devhostd at app.localhost.

    app = write_app(project, "react19")   # or "react18", "vue", "svelte", "plain" (KINDS)
    with run_vite(app.project, port, hmr_port=daemon.port, log_path=...): ...

Every app but the plain one is the same shop built with its framework (the pinned peers of
tests/peers.sh; node_modules is a link to .peers/node_modules): an ``App`` component
(``src/App.*``) around a ``Cart`` component in its own file (``App.cart``, ``src/Cart.*``) that holds
- ``<button id="checkout">`` on the line ``App.checkout_line`` of ``App.cart``;
- ``#throw``, whose click handler throws ``Error(THROWN)``, and ``#reject``, whose handler returns
  a promise rejected with ``Error(REJECTED)``: both reach the window uncaught (an "error" event,
  an "unhandledrejection"; React 18's dev build reports the thrown one twice), their stacks'
  first frame in Cart's served module;
- ``#fetch-missing`` (a fetch of ``/api/missing``, a 404) and ``#fetch-broken`` (``/api/broken``,
  a 500 from a middleware in vite.config.mjs).
The plain app has the same buttons in index.html (``App.cart`` None) and their handlers in
main.js, and no framework. Each app's ``#status`` says "ready" once it has rendered.
tests/browser/test_vite_apps.py checks all of that.

Fixtures, to import into a test module: ``vite_port`` (a free port; carries the ``vite``
marker), ``stack`` (app.localhost routed to that port, the plain app in project/; a module
overrides it to write another), ``vite`` (Vite on project/, its HMR client told to connect
through devhostd's port; yields the project's folder).
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from tests.peers import PEERS_BIN
from tests.tiers import needs
from tests.upstream_app import write_routed_manifest

NODE_MODULES = PEERS_BIN.parent
VITE = NODE_MODULES / "vite" / "bin" / "vite.js"

# Each app's own error, rejection and failing fetches, by the buttons' ids.
THROWN = "Cart failed to check out"
REJECTED = "Cart's promise was rejected"


@dataclasses.dataclass(frozen=True)
class App:
    kind: str
    project: Path
    cart: str | None  # Cart's file, relative to the project (None: the plain app)
    checkout_line: int  # the line of <button id="checkout"> in cart (or in index.html)
    framework: str | None  # what frameworkInfo names

    def line_of(self, path: str, text: str) -> int:
        """The 1-based line of the project's file ``path`` where ``text`` first stands."""
        lines = (self.project / path).read_text().splitlines()
        return next(number for number, line in enumerate(lines, 1) if text in line)

    def column_of(self, path: str, text: str) -> int:
        """The 1-based column where ``text`` first stands on its line."""
        return (self.project / path).read_text().splitlines()[self.line_of(path, text) - 1].index(text) + 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the apps ------------------------------------------------------------------------------

INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title><link rel="icon" href="data:,"></head>
<body>{body}<script type="module" src="{entry}"></script></body></html>
"""

REACT_CART = """\
import { useState } from "react";

export default function Cart() {
  const [items] = useState(["apple", "pear"]);
  const fail = () => { throw new Error("Cart failed to check out"); };
  const reject = () => Promise.reject(new Error("Cart's promise was rejected"));
  return (
    <section className="cart">
      <h2>Cart</h2>
      <ul>{items.map((item) => <li key={item}>{item}</li>)}</ul>
      <button id="checkout" type="button">Check out</button>
      <button id="throw" type="button" onClick={fail}>Throw</button>
      <button id="reject" type="button" onClick={reject}>Reject</button>
      <button id="fetch-missing" type="button" onClick={() => fetch("/api/missing")}>Missing</button>
      <button id="fetch-broken" type="button" onClick={() => fetch("/api/broken")}>Broken</button>
    </section>
  );
}
"""
# Cart stands inside the framework's own wrappers (StrictMode, Suspense; Vue's KeepAlive; a
# Svelte {#if} block), which a component chain leaves out.
REACT_APP = """\
import { Suspense } from "react";
import Cart from "./Cart.jsx";

export default function App() {
  return (
    <main>
      <h1 id="status">ready</h1>
      <Suspense fallback={null}><Cart /></Suspense>
    </main>
  );
}
"""
REACT_MAIN = """\
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import App from "./App.jsx";

createRoot(document.getElementById("root")).render(<StrictMode><App /></StrictMode>);
"""

VUE_CART = """\
<script setup>
import { ref } from "vue";

const items = ref(["apple", "pear"]);
const fail = () => { throw new Error("Cart failed to check out"); };
const reject = () => Promise.reject(new Error("Cart's promise was rejected"));
</script>

<template>
  <section class="cart">
    <h2>Cart</h2>
    <ul><li v-for="item in items" :key="item">{{ item }}</li></ul>
    <button id="checkout" type="button">Check out</button>
    <button id="throw" type="button" @click="fail">Throw</button>
    <button id="reject" type="button" @click="reject">Reject</button>
    <button id="fetch-missing" type="button" @click="fetch('/api/missing')">Missing</button>
    <button id="fetch-broken" type="button" @click="fetch('/api/broken')">Broken</button>
  </section>
</template>
"""
VUE_APP = """\
<script setup>
import Cart from "./Cart.vue";
</script>

<template>
  <main>
    <h1 id="status">ready</h1>
    <KeepAlive><Cart /></KeepAlive>
  </main>
</template>
"""
VUE_MAIN = """\
import { createApp } from "vue";
import App from "./App.vue";

const app = createApp(App);
// A template's own expressions see only the component: fetch is the page's.
app.config.globalProperties.fetch = (url) => window.fetch(url);
app.mount("#root");
"""

SVELTE_CART = """\
<script>
  let items = $state(["apple", "pear"]);
  const fail = () => { throw new Error("Cart failed to check out"); };
  const reject = () => Promise.reject(new Error("Cart's promise was rejected"));
</script>

<section class="cart">
  <h2>Cart</h2>
  <ul>{#each items as item (item)}<li>{item}</li>{/each}</ul>
  <button id="checkout" type="button">Check out</button>
  <button id="throw" type="button" onclick={fail}>Throw</button>
  <button id="reject" type="button" onclick={reject}>Reject</button>
  <button id="fetch-missing" type="button" onclick={() => fetch("/api/missing")}>Missing</button>
  <button id="fetch-broken" type="button" onclick={() => fetch("/api/broken")}>Broken</button>
</section>
"""
SVELTE_APP = """\
<script>
  import Cart from "./Cart.svelte";
  let open = $state(true);
</script>

<main>
  <h1 id="status">ready</h1>
  {#if open}<Cart />{/if}
</main>
"""
SVELTE_MAIN = """\
import { mount } from "svelte";
import App from "./App.svelte";

mount(App, { target: document.getElementById("root") });
"""

PLAIN_BODY = """
<main>
  <h1 id="status">loading</h1>
  <section class="cart">
    <h2>Cart</h2>
    <button id="checkout" type="button">Check out</button>
    <button id="throw" type="button">Throw</button>
    <button id="reject" type="button">Reject</button>
    <button id="fetch-missing" type="button">Missing</button>
    <button id="fetch-broken" type="button">Broken</button>
  </section>
</main>
"""
PLAIN_MAIN = """\
const on = (id, handler) => document.getElementById(id).addEventListener("click", handler);
on("throw", () => { throw new Error("Cart failed to check out"); });
on("reject", () => Promise.reject(new Error("Cart's promise was rejected")));
on("fetch-missing", () => fetch("/api/missing"));
on("fetch-broken", () => fetch("/api/broken"));
document.getElementById("status").textContent = "ready";
"""

# The React 18 app imports "react" and "react-dom" as any app does; the aliases give it the
# react18 / react-dom18 copies (npm aliases in .peers), also inside react-dom18 itself and in
# the JSX runtime @vitejs/plugin-react imports, since Vite applies resolve.alias to every import.
REACT18_ALIAS = """[
    { find: /^react-dom(\\/.*)?$/, replacement: "react-dom18$1" },
    { find: /^react(\\/.*)?$/, replacement: "react18$1" },
  ]"""

# kind: (plugin import, plugin call, alias, files {path: text}, Cart's file, entry, framework)
FRAMEWORKS = {
    "react19": ('import react from "@vitejs/plugin-react";', "react()", "[]",
                {"src/Cart.jsx": REACT_CART, "src/App.jsx": REACT_APP, "src/main.jsx": REACT_MAIN},
                "src/Cart.jsx", "/src/main.jsx", "react"),
    "react18": ('import react from "@vitejs/plugin-react";', "react()", REACT18_ALIAS,
                {"src/Cart.jsx": REACT_CART, "src/App.jsx": REACT_APP, "src/main.jsx": REACT_MAIN},
                "src/Cart.jsx", "/src/main.jsx", "react"),
    "vue": ('import vue from "@vitejs/plugin-vue";', "vue()", "[]",
            {"src/Cart.vue": VUE_CART, "src/App.vue": VUE_APP, "src/main.js": VUE_MAIN},
            "src/Cart.vue", "/src/main.js", "vue"),
    "svelte": ('import { svelte } from "@sveltejs/vite-plugin-svelte";', "svelte()", "[]",
               {"src/Cart.svelte": SVELTE_CART, "src/App.svelte": SVELTE_APP, "src/main.js": SVELTE_MAIN},
               "src/Cart.svelte", "/src/main.js", "svelte"),
    "plain": ("", "", "[]", {"main.js": PLAIN_MAIN}, None, "/main.js", None),
}
KINDS = tuple(FRAMEWORKS)

CONFIG = """\
import {{ defineConfig }} from "vite";
{plugin_import}

// /api/broken answers 500, as a dev server's failing route does; /api/missing is no file (404).
const brokenRoute = {{
  name: "broken-route",
  configureServer(server) {{
    server.middlewares.use("/api/broken", (request, response) => {{
      response.statusCode = 500;
      response.end("the cart service is down");
    }});
  }},
}};

export default defineConfig({{
  plugins: [{plugin_call}brokenRoute],
  resolve: {{ alias: {alias} }},
  // Own dependency cache: node_modules is the shared .peers/node_modules (a symlink).
  cacheDir: {cache_dir},
  // No index.html fallback: an unknown URL is a 404, as the failing fetch wants.
  appType: "mpa",
  // The page reaches Vite through devhostd: its HMR client connects to devhostd's port (run_vite).
  server: {{ hmr: {{ clientPort: Number(process.env.DEVHOST_HMR_PORT) }},
            fs: {{ allow: [{project}, {node_modules}] }} }},
  clearScreen: false,
}});
"""


def _js(value) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_config(project: Path, kind: str) -> None:
    """vite.config.mjs for ``kind``, and node_modules: a link to .peers/node_modules."""
    plugin_import, plugin_call, alias, *_ = FRAMEWORKS[kind]
    project.mkdir(parents=True, exist_ok=True)
    (project / "vite.config.mjs").write_text(CONFIG.format(
        plugin_import=plugin_import, plugin_call=f"{plugin_call}, " if plugin_call else "", alias=alias,
        cache_dir=_js(project / ".vite-cache"), project=_js(project), node_modules=_js(NODE_MODULES.resolve())))
    link = project / "node_modules"
    if not link.exists():
        # Vite and Node resolve the apps' imports (and the config's) from here.
        link.symlink_to(NODE_MODULES.resolve(), target_is_directory=True)


def write_app(project: Path, kind: str) -> App:
    """Writes the ``kind`` app (one of KINDS) into ``project``, with its vite.config.mjs."""
    _, _, _, files, cart, entry, framework = FRAMEWORKS[kind]
    write_config(project, kind)
    body = PLAIN_BODY if kind == "plain" else '<div id="root"></div>'
    (project / "index.html").write_text(INDEX.format(body=body, entry=entry))
    for path, text in files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(textwrap.dedent(text))
    app = App(kind, project, cart, 0, framework)
    return dataclasses.replace(app, checkout_line=app.line_of(cart or "index.html", 'id="checkout"'))


@contextlib.contextmanager
def run_vite(project: Path, port: int, *, hmr_port: int, log_path: Path):
    """Vite's dev server on ``project`` at 127.0.0.1:``port`` until the block ends."""
    if not VITE.exists():
        pytest.fail(f"Vite is not installed at {VITE}: run bash tests/peers.sh")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(["node", str(VITE), str(project), "--host", "127.0.0.1", "--port", str(port),
                                 "--strictPort", "--logLevel", "warn"], cwd=project, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "DEVHOST_HMR_PORT": str(hmr_port)})
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise AssertionError(f"Vite did not start: {log_path.read_text()[-800:]}") from None
                    time.sleep(0.2)
            yield project
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---- fixtures ------------------------------------------------------------------------------

@pytest.fixture
@needs("vite")
def vite_port():
    if not VITE.exists():
        pytest.fail(f"Vite is not installed at {VITE}: run bash tests/peers.sh")
    return free_port()


@pytest.fixture
def stack(tmp_path, vite_port):
    """app.localhost proxies to the Vite dev server of project/ (the plain app)."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    write_app(tmp_path / "project", "plain")
    return tmp_path


@pytest.fixture
def vite(stack, daemon, vite_port):
    """Vite on project/, its HMR client told to connect through devhostd's port."""
    with run_vite(stack / "project", vite_port, hmr_port=daemon.port, log_path=stack / "vite.log") as project:
        yield project

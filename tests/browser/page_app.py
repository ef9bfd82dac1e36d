"""A plain upstream app without a framework, for the page-in-the-loop tests (picking elements,
the ring of page errors): the tests' UpstreamApp with two more pages.

- ``/shop``: a cart (``button#checkout.primary``), a list of items without ids (each with a
  Remove button), a login form whose fields hold values (a user name typed in the markup, a
  password, a note) and a link; every click on the page that the page's own handlers see is counted in
  ``window.pageClicks``.
- ``/errors``: a page whose module ``/errors.js`` warns as it loads (console.warn) and offers
  ``window.app``: functions that throw later, reject, log with console.error, fetch and XHR a
  path that is a 404 (``/api/missing``), fetch one that cannot connect (a closed port) and a
  path of devhostd's own that is a 404.
"""
from __future__ import annotations

import pytest

from tests.upstream_app import UpstreamApp, _answer

SHOP = b"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop</title>
<style>
  body { font: 16px/20px sans-serif; margin: 0; }
  main { position: absolute; left: 40px; top: 40px; width: 500px; }
  #checkout { width: 120px; height: 40px; }
  .items li { height: 32px; }
  #login { padding: 12px; border: 1px solid #ccc; }
</style>
</head>
<body>
<main id="cart">
  <h1>Your cart</h1>
  <ul class="items">
    <li class="item"><span class="name">Apple</span> <button class="remove">Remove</button></li>
    <li class="item"><span class="name">Pear</span> <button class="remove">Remove</button></li>
    <li class="item"><span class="name">Plum</span> <button class="remove">Remove</button></li>
  </ul>
  <button id="checkout" class="primary" type="button">Check out</button>
  <form id="login" class="login">
    <label for="user">User name</label>
    <input id="user" name="user" value="markup-user-value">
    <label>Password <input type="password" name="password" value="markup-secret"></label>
    <textarea name="note" aria-label="Note">markup note text</textarea>
  </form>
  <a href="/elsewhere" class="away">Go elsewhere</a>
</main>
<script>
  window.pageClicks = 0;
  // The panel's own clicks bubble out of its shadow root as its host's: not the page's.
  document.addEventListener("click", (event) => {
    if (event.target.localName !== "devhost-chat") window.pageClicks += 1;
  });
</script>
</body>
</html>
"""

ERRORS_PAGE = b"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Errors</title><script type="module" src="/errors.js"></script></head>
<body><h1>A page that goes wrong</h1></body>
</html>
"""

ERRORS_JS = b"""console.warn("the app started without a cart");

export function explode() {
  throw new TypeError("cart is undefined");
}

function refuse() {
  return Promise.reject(new Error("the price could not be loaded"));
}

window.app = {
  throwLater() { setTimeout(explode, 0); },
  reject() { refuse(); },
  logError(n) { console.error("checkout failed:", n); },
  fetchMissing() { return fetch("/api/missing").then((r) => r.status); },
  fetchUnreachable(port) { return fetch(`http://127.0.0.1:${port}/nothing`).then(() => "answered", (e) => e.message); },
  fetchOwn() { return fetch("/__devhost__/no-such-route").then((r) => r.status); },
  xhrMissing() {
    return new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("POST", "/api/xhr-missing");
      request.onloadend = () => resolve(request.status);
      request.send("{}");
    });
  },
};
"""


class PageApp(UpstreamApp):
    def _app(self, environ, start_response):
        path = environ.get("PATH_INFO", "/")
        if path == "/shop":
            return _answer(start_response, "200 OK", "text/html; charset=utf-8", SHOP)
        if path == "/errors":
            return _answer(start_response, "200 OK", "text/html; charset=utf-8", ERRORS_PAGE)
        if path == "/errors.js":
            return _answer(start_response, "200 OK", "text/javascript", ERRORS_JS)
        return super()._app(environ, start_response)


@pytest.fixture
def upstream():
    """Overrides tests/upstream_app.py's fixture of the same name: this app behind app.localhost."""
    app = PageApp().start()
    yield app
    app.stop()

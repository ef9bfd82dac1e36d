"""The page in the loop on a real devhostd in front of a real Vite: positions of the modules Vite
serves located in the checkout through their real source maps (and nothing outside the page's
own upstream or checkout), the page socket's reports kept in the page memory with the proxy's own
failures, and `devhostd page errors | requests` run with a chat's own DEVHOSTD_TOKEN (the real
Claude Code started it), which reads only the pages of that chat's checkout."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request

import pytest
import websocket

from tests.integration.daemon import DEVHOSTD, processes_with_env, wait_until
from tests.mock_anthropic import text_reply
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import run_vite, vite_port  # noqa: F401 - a fixture
INDEX = '<!doctype html><html><body><script type="module" src="/src/main.ts"></script></body></html>\n'
# Vite strips the comment and the type lines: line 3 of what it serves is line 5 here.
MAIN_TS = """// the shop's entry
type Cart = { items: string[] };
const cart: Cart = { items: ["apple"] };
export function fail(): never {
  throw new Error("Cart failed " + cart.items.length);
}
document.body.append("ready");
"""


@pytest.fixture
def stack(tmp_path, vite_port):
    """app.localhost proxies to Vite on project/ (a TypeScript entry); other.localhost has no app."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    (tmp_path / "project" / "index.html").write_text(INDEX)
    (tmp_path / "project" / "src").mkdir()
    (tmp_path / "project" / "src" / "main.ts").write_text(MAIN_TS)
    return tmp_path


@pytest.fixture
def vite(stack, daemon, vite_port):
    with run_vite(stack / "project", vite_port, hmr_port=daemon.port, log_path=stack / "vite.log") as project:
        yield project


def locate(daemon, positions, hostname="app.localhost", page_host="app.localhost", origin="same"):
    query = daemon.query(page_host)
    return daemon.request("POST", f"/__devhost__/page/locate?{query}", {"positions": positions},
                          host=daemon.host(hostname), origin=origin)


def page_socket(daemon, hostname="app.localhost", page_url=None, origin=None):
    query = daemon.query(hostname) if page_url is None else f"pageURL={page_url}&chatTarget=project"
    host = daemon.host(hostname)
    return websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/page?{query}", host=host,
                                       origin=origin or f"http://{host}", timeout=30)


def test_a_position_in_a_module_vite_serves_is_located_in_the_checkout_through_its_real_map(daemon, vite):
    served = f"http://app.localhost:{daemon.port}/src/main.ts"
    status, body = locate(daemon, [{"url": served, "line": 3, "column": 2},
                                   {"url": served, "line": 3, "column": 8},
                                   {"file": str(vite / "src" / "main.ts"), "line": 4, "column": 2},
                                   {"file": "/src/main.ts", "line": 2}])
    assert status == 200, body
    assert body["positions"] == [{"file": "src/main.ts", "line": 5, "column": 3},
                                 {"file": "src/main.ts", "line": 5, "column": 9},
                                 {"file": "src/main.ts", "line": 4, "column": 2},
                                 {"file": "src/main.ts", "line": 2}]


def throw_line(vite_port) -> int:
    """The line of the throw in the module as Vite serves it now."""
    served = urllib.request.urlopen(f"http://127.0.0.1:{vite_port}/src/main.ts", timeout=10).read().decode()
    return next(n for n, line in enumerate(served.splitlines(), 1) if "throw" in line)


def test_an_edit_is_located_in_its_new_lines_once_the_cached_map_is_old(daemon, vite, vite_port):
    served = f"http://app.localhost:{daemon.port}/src/main.ts"
    assert locate(daemon, [{"url": served, "line": 3, "column": 2}])[1]["positions"][0]["line"] == 5
    lines = MAIN_TS.splitlines(keepends=True)
    (vite / "src" / "main.ts").write_text(lines[0] + 'console.log("edited");\n' + "".join(lines[1:]))
    # The throw is now line 6 of the file, on whichever line Vite serves it.
    wait_until(lambda: locate(daemon, [{"url": served, "line": throw_line(vite_port), "column": 2}])[1]["positions"]
               == [{"file": "src/main.ts", "line": 6, "column": 3}], timeout=20, what="the edited module's new map")


def test_nothing_outside_the_pages_upstream_or_checkout_is_located(daemon, vite, vite_port, stack):
    (stack / "secret.txt").write_text("outside the checkout")
    status, body = locate(daemon, [
        {"url": f"http://127.0.0.1:{vite_port}/src/main.ts", "line": 3, "column": 2},  # the upstream, named directly
        {"url": f"http://other.localhost:{daemon.port}/src/main.ts", "line": 3, "column": 2},  # another page's origin
        {"url": "https://cdn.example/react.js", "line": 1, "column": 1},
        {"file": str(stack / "secret.txt"), "line": 1},
        {"file": "../secret.txt", "line": 1}])
    assert status == 200 and body["positions"] == [None] * 5


def test_another_hostnames_page_cannot_locate_into_this_checkout(daemon, vite):
    served = [{"file": str(vite / "src" / "main.ts"), "line": 1}]
    status, body = locate(daemon, served, hostname="other.localhost", page_host="app.localhost")
    assert status == 400 and "pageURL must be a page of other.localhost" in body["error"]
    status, body = locate(daemon, served, hostname="other.localhost", page_host="other.localhost")
    assert status == 200 and body["positions"] == [None]  # other/ is its checkout: app's file is not in it
    status, body = locate(daemon, served, origin=f"http://other.localhost:{daemon.port}")
    assert status == 403 and "Origin" in body["error"]
    status, body = daemon.request("POST", f"/__devhost__/page/locate?{daemon.query()}", {"positions": served},
                                  host=daemon.control_origin[len("http://"):])
    assert status == 403 and "routed page" in body["error"]


@pytest.mark.parametrize("body, words", [({"positions": 3}, '{"positions"'),
                                         ({"positions": [{"url": "http://x/a.js", "line": 1}]}, "column"),
                                         ({"positions": [{"file": "a.js", "line": 1}] * 201}, "at most 200")])
def test_a_bad_locate_body_is_a_400_that_says_what_to_send(daemon, vite, body, words):
    status, answer = daemon.request("POST", f"/__devhost__/page/locate?{daemon.query()}", body)
    assert status == 400 and words in answer["error"]


def agent_token(chat_id: str) -> str:
    [env, *_] = wait_until(lambda: [e for e in map(_environ, processes_with_env(f"DEVHOSTD_CHAT={chat_id}")) if e],
                           timeout=30, what="the chat's CLI")
    return env["DEVHOSTD_TOKEN"]


def _environ(pid: int) -> dict:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            pairs = [entry.split(b"=", 1) for entry in handle.read().split(b"\0") if b"=" in entry]
    except OSError:
        return {}
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def devhostd_page(daemon, chat_id: str, token: str, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "DEVHOSTD_CHAT": chat_id, "DEVHOSTD_TOKEN": token,
           "DEVHOSTD_URL": daemon.control_origin}
    return subprocess.run([sys.executable, str(DEVHOSTD), "page", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_agents_devhostd_page_errors_reads_its_checkouts_open_page_mapped_and_no_other_chat_can(
        core, daemon, mock, stack, vite):
    mock.add(text_reply("hello"), text_reply("hi"))
    core.chats.create("mine", provider="claude", cwd=str(stack / "project"))
    core.chats.create("theirs", provider="claude", cwd=str(stack / "other"))
    core.chats.send("mine", "hi")
    core.chats.send("theirs", "hi")
    mine, theirs = agent_token("mine"), agent_token("theirs")

    run = devhostd_page(daemon, "mine", mine, "errors")
    assert run.returncode == 0 and "no page of this checkout is open" in run.stdout, run.stderr

    ws = page_socket(daemon)
    served = f"http://app.localhost:{daemon.port}/src/main.ts"
    ws.send(json.dumps({"type": "entries", "errors": [
        {"kind": "error", "message": "Error: Cart failed 1", "time": 1,
         "stack": [{"url": served, "line": 3, "column": 8, "fn": "fail"}]}], "requests": [
        {"kind": "request", "method": "POST", "url": "/api/orders", "status": 404, "error": None, "time": 2,
         "source": "page"}]}))
    run = wait_until(lambda: (r := devhostd_page(daemon, "mine", mine, "errors")) and "Cart failed" in r.stdout and r,
                     timeout=20, what="the page's error in the agent's answer")
    assert run.returncode == 0
    assert f"page http://app.localhost:{daemon.port}/: 1 error" in run.stdout
    assert "- uncaught error: Error: Cart failed 1" in run.stdout
    assert f"at fail src/main.ts:5:9 (served as {served}:3:8)" in run.stdout  # mapped by the daemon

    run = devhostd_page(daemon, "mine", mine, "requests")
    assert run.returncode == 0 and "- POST /api/orders -> 404" in run.stdout, run.stdout

    other = devhostd_page(daemon, "theirs", theirs, "errors")  # a chat of another checkout
    assert other.returncode == 0 and "Cart failed" not in other.stdout and "no page" in other.stdout
    stolen = devhostd_page(daemon, "mine", theirs, "errors")  # another chat's token, naming this chat
    assert stolen.returncode == 1 and "Cart failed" not in stolen.stdout + stolen.stderr
    assert "only for its own chat" in stolen.stderr

    ws.close()  # the page goes: forgotten after the reload grace
    gone = devhostd_page(daemon, "mine", mine, "errors")
    assert "closed just now" in gone.stdout


def chat_and_open_page(core, daemon, mock, stack) -> tuple[str, websocket.WebSocket]:
    """A chat of project/ whose CLI ran (its token), and a page of app.localhost open on its socket."""
    mock.add(text_reply("hello"))
    core.chats.create("mine", provider="claude", cwd=str(stack / "project"))
    core.chats.send("mine", "hi")
    return agent_token("mine"), page_socket(daemon)


def test_the_proxys_own_502_reaches_the_open_page_and_the_agents_requests(core, daemon, mock, stack, vite_port):
    # No Vite running: the proxy answers 502 itself.
    token, ws = chat_and_open_page(core, daemon, mock, stack)
    status, _ = daemon.request("GET", "/api/cart")
    assert status == 502
    told = json.loads(ws.recv())
    assert told["type"] == "proxy-requests"
    [entry] = told["requests"]
    assert (entry["method"], entry["url"], entry["status"], entry["source"]) == ("GET", "/api/cart", 502, "proxy")
    assert "Is the dev server running" in entry["error"]
    run = devhostd_page(daemon, "mine", token, "requests")
    assert run.returncode == 0 and "- GET /api/cart -> 502 (answered by the devhost proxy)" in run.stdout
    ws.close()


def test_page_element_asks_the_open_page_and_prints_what_it_says(core, daemon, mock, stack, vite_port):
    token, ws = chat_and_open_page(core, daemon, mock, stack)
    result = {}
    thread = threading.Thread(target=lambda: result.update(run=devhostd_page(daemon, "mine", token, "element",
                                                                             "button.checkout")))
    thread.start()
    asked = json.loads(ws.recv())
    assert asked["type"] == "element" and asked["selector"] == "button.checkout"
    ws.send(json.dumps({"type": "element", "requestId": asked["requestId"], "count": 2, "element": {
        "url": daemon.page(), "selector": "button.checkout", "tag": "button", "id": "checkout", "classes": ["checkout"],
        "role": "button", "name": "Check out", "text": "Check out", "html": "<button>Check out</button>",
        "box": {"x": 1, "y": 2, "width": 3, "height": 4}, "source": {"file": "src/Cart.jsx", "line": 42},
        "components": [{"name": "Cart", "file": "src/Cart.jsx", "line": 3}, {"name": "App"}]}}))
    thread.join(timeout=60)
    run = result["run"]
    assert run.returncode == 0, run.stderr
    assert "2 element(s) match" in run.stdout and "created at src/Cart.jsx:42" in run.stdout
    assert "in component Cart (src/Cart.jsx:3)" in run.stdout and "in component App" in run.stdout
    ws.close()


def test_the_page_socket_is_refused_before_the_upgrade_to_another_origin_or_another_hostnames_page(daemon, stack):
    def refused(**options) -> int:
        try:
            page_socket(daemon, **options).close()
        except websocket.WebSocketBadStatusException as refusal:
            return refusal.status_code
        return 101

    assert refused() == 101
    assert refused(origin=f"http://other.localhost:{daemon.port}") == 403
    assert refused(hostname="other.localhost", page_url=daemon.page("app.localhost")) == 400
    control = daemon.control_origin
    try:
        websocket.create_connection(f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/page?{daemon.query()}",
                                    host=control[len("http://"):], origin=control, timeout=30)
        status = 101
    except websocket.WebSocketBadStatusException as refusal:
        status = refusal.status_code
    assert status == 403

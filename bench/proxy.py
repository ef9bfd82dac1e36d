"""What the reverse proxy costs a page, measured in one run: kept-alive versus fresh connections,
and a dev page of 200 ES modules loaded through the proxy versus straight from its dev server.

    python3 bench/proxy.py [N] [--no-browser] [--rounds 100] [--no-vite]

N (default 500) is the number of requests per series in part 1. Everything listens on
127.0.0.1 only; every process started here (devhostd, the upstreams, Chromium) is ended before
the script exits, also on an error or Ctrl-C (and they die with it if it is killed).

Prints ratios measured in this run (absolute times are shown beside them, but depend on the
machine):

1. Kept-alive versus fresh connections. N requests on ONE kept-alive HTTP/1.1 connection,
   interleaved with N requests that each open a fresh connection (interleaved, so drift on the
   machine hits both alike), to
   (a) devhostd's own route ``GET /__devhost__/config.json`` (Host: the control origin),
   (b) a 1 KB JS module (m199.js of part 2) through the proxy (Host: ``app.localhost:PORT``,
       a routed service whose ``upstream`` is a small static-file server started here), and,
       for reference,
   (c) the same module straight from that static-file server.
   Per request: mean and p50 in ms, then kept-alive/fresh (below 1.0x: keeping the connection
   pays, as it should) and, for (b), proxied/direct. The client is http.client with
   TCP_NODELAY set on its socket, so its own Nagle is not measured; the static server sets it
   too, so any Nagle delay left is devhostd's. The connections the client opened are counted:
   a server that closed the "kept-alive" one would show as more than 1.
   Then (d): devhostd's CPU time (user + system, /proc) per kept-alive proxied request against
   the upstream's for the same requests, a ratio (the upstream is a bare gevent pywsgi app).

2. A Vite-style dev page in headless Chromium (/usr/bin/chromium, driven by Playwright for
   Python): index.html loads m0.js, the root of a 6-ary import tree of 200 ES modules
   (1 + 6 + 36 + 157 in four levels, ~1.1 KB each), as a dev server serves an app's source
   files unbundled; the browser discovers each level from the one before and fetches up to six
   at once per host. The upstream is Vite (pinned below, installed with npm into bench/.vite
   when missing) or, when Vite cannot be installed or started (or with --no-vite), the same
   static-file server as part 1 (HTTP/1.1, kept-alive); the output says which. The page is
   loaded --rounds times in each of three ways: straight from the upstream
   (``http://127.0.0.1:UPSTREAM/``, direct), through a bare TCP relay started here (a gevent
   process copying bytes both ways, nothing read: the least any process between the browser
   and the dev server costs on this machine) and through the proxy
   (``http://page.localhost:PORT/``, proxied), each kind first, second and last in turn, each
   load in a fresh browser context (empty cache, no connection kept from an earlier load),
   after one untimed warm-up load of each. Timed: navigation start to the moment the root
   module runs (every one of the 200 modules fetched and evaluated) and to the ``load`` event.
   Printed: p50 of each, the requests each load made, then proxied/direct, relay/direct and
   proxied/relay, each as the ratio of the p50s and as the p50 of the rounds' own ratios (a
   round's loads run back to back, so a drift of the machine hits them alike), with a 95%
   interval of the latter (a seeded bootstrap). One load varies by a third on a 2-core machine,
   so a ratio of 30 rounds is good to about +-6% and two such runs can differ by 0.1x: the
   default is 100 rounds (+-3%, about 7 minutes); judge by the interval. Then the CPU time (/proc)
   devhostd, the relay and the upstream spent per load, steadier than the times.
   The proxied page is the one a person sees, and that is what is timed: devhostd injects the
   chat panel's module script at the top of <head>, before the app's, so what it loads at the
   page's start (panel.js, the page's error ring and its socket: the rest of the panel only when
   it is first opened, or at once for a panel in use) is fetched beside the app's modules,
   sharing the six connections, and, module scripts running in document order, evaluated
   before m0.js: both times include it. The direct and relayed pages have no
   panel; the requests each load made are printed, with the panel's share, so the difference
   is visible.

Needs: Python >= 3.11 with devhostd's packages (gevent, pykka, bottle, …), Node.js + npm for
Vite, /usr/bin/chromium and Playwright for Python (installed with pip when missing, as
tests/run.sh does) for part 2. bench/.vite (the Vite install) is not part of the source.
"""
from __future__ import annotations

import argparse
import ctypes
import http.client
import json
import mimetypes
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEVHOSTD = REPO / "bin" / "devhostd"
CHROMIUM = "/usr/bin/chromium"
VITE_VERSION = "8.4.0"
VITE_PREFIX = REPO / "bench" / ".vite"
VITE_BIN = VITE_PREFIX / "node_modules" / "vite" / "bin" / "vite.js"
MODULES = 200
FAN_OUT = 6
WARMUP = 20  # requests per series not counted in part 1
# As the browser tests launch Chromium (tests/browser/conftest.py), minus tab capture.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
         "--disable-breakpad", "--metrics-recording-only",
         "--host-resolver-rules=MAP *.localhost 127.0.0.1"]


# ---- processes ------------------------------------------------------------------------------

def _die_with_parent():
    """In the child before exec: its own process group (ended as a whole), and SIGTERM when this
    script dies, however it dies."""
    os.setsid()
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Processes:
    def __init__(self):
        self.started: list[subprocess.Popen] = []

    def start(self, argv, **options) -> subprocess.Popen:
        proc = subprocess.Popen(argv, preexec_fn=_die_with_parent, **options)
        self.started.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in reversed(self.started):
            self._signal(proc, signal.SIGTERM)
        for proc in reversed(self.started):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait()
            self._signal(proc, signal.SIGKILL, group_only=True)  # anything it left in its group
        self.started.clear()

    @staticmethod
    def _signal(proc, sig, group_only=False):
        try:
            os.killpg(proc.pid, sig)  # the group it leads (setsid above): only what it started
        except (ProcessLookupError, PermissionError):
            if not group_only and proc.poll() is None:
                proc.send_signal(sig)


_interrupted = []


def _raise_on_signal(signum, _frame):
    _interrupted.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(port: int, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/")
            connection.getresponse().read()
            connection.close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {timeout:.0f} s")


# ---- the static-file upstream (run as `bench/proxy.py --serve DIR` in a process of its own) ---

def serve(root: str) -> None:
    """An HTTP/1.1 static-file server (gevent pywsgi: kept-alive connections, TCP_NODELAY on
    every accepted socket); prints its port, then serves until it is ended."""
    from gevent import pywsgi

    root = os.path.realpath(root)
    cache: dict[str, tuple[bytes, str]] = {}

    class Server(pywsgi.WSGIServer):
        def handle(self, sock, address):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().handle(sock, address)

    def app(environ, start_response):
        path = environ.get("PATH_INFO") or "/"
        if path.endswith("/"):
            path += "index.html"
        full = os.path.realpath(os.path.join(root, path.lstrip("/")))
        if full not in cache:
            if not full.startswith(root + os.sep) or not os.path.isfile(full):
                start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
                return [b"not found"]
            kind = mimetypes.guess_type(full)[0] or "application/octet-stream"
            if kind in ("text/javascript", "application/javascript", "text/html"):
                kind += "; charset=utf-8"
            cache[full] = (Path(full).read_bytes(), kind)
        body, kind = cache[full]
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))),
                                  ("Cache-Control", "no-cache")])
        return [body]

    server = Server(("127.0.0.1", 0), app, log=None)
    server.start()
    print(server.server_port, flush=True)
    server.serve_forever()


def start_here(processes: Processes, what: str, *options: str) -> tuple[int, int]:
    """This script run with ``options`` in a process of its own, which prints its port: (pid, port)."""
    proc = processes.start([sys.executable, str(Path(__file__).resolve()), *options],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode().strip()
    if not line.isdigit():
        raise RuntimeError(f"the {what} did not start (said {line!r})")
    return proc.pid, int(line)


def start_static(processes: Processes, root: Path) -> int:
    global STATIC_PID
    STATIC_PID, port = start_here(processes, "static-file server", "--serve", str(root))
    return port


# ---- the bare relay (run as `bench/proxy.py --relay PORT` in a process of its own) -----------

def relay(upstream_port: int) -> None:
    """A bare TCP relay to 127.0.0.1:upstream_port: each accepted connection gets one of its own
    to the upstream and the bytes are copied both ways as they come, nothing read or changed
    (gevent, TCP_NODELAY on both sockets). It is what any process between the browser and the
    dev server costs on this machine, at the least: the floor under devhostd's figure. Prints
    its port, then relays until it is ended."""
    from gevent import monkey
    monkey.patch_all()
    import gevent
    from gevent.server import StreamServer

    def copy(source, destination):
        try:
            while data := source.recv(65536):
                destination.sendall(data)
        except OSError:
            pass
        finally:
            try:
                destination.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def handle(client, _address):
        with client, socket.create_connection(("127.0.0.1", upstream_port)) as upstream:
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            back = gevent.spawn(copy, upstream, client)
            copy(client, upstream)
            back.join()

    server = StreamServer(("127.0.0.1", 0), handle)
    server.start()
    print(server.server_port, flush=True)
    server.serve_forever()


def start_relay(processes: Processes, upstream_port: int) -> int:
    global RELAY_PID
    RELAY_PID, port = start_here(processes, "relay", "--relay", str(upstream_port))
    return port


# ---- Vite -----------------------------------------------------------------------------------

def ensure_vite() -> str | None:
    """None when Vite VITE_VERSION is ready in bench/.vite, else why it is not."""
    installed = VITE_PREFIX / "node_modules" / "vite" / "package.json"
    try:
        if json.loads(installed.read_text())["version"] == VITE_VERSION:
            return None
    except (OSError, ValueError, KeyError):
        pass
    if not shutil.which("node") or not shutil.which("npm"):
        return "node/npm not found"
    print(f"installing vite@{VITE_VERSION} into {VITE_PREFIX.relative_to(REPO)} …", flush=True)
    try:
        done = subprocess.run(["npm", "install", "--prefix", str(VITE_PREFIX), "--no-save", "--no-package-lock",
                               "--no-audit", "--no-fund", "--loglevel=error", f"vite@{VITE_VERSION}"],
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return "npm install timed out"
    if done.returncode != 0:
        return f"npm install failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None if VITE_BIN.exists() else "npm install left no vite/bin/vite.js"


def start_vite(processes: Processes, root: Path, log: Path) -> int:
    port = free_port()
    with open(log, "ab") as stderr:
        proc = processes.start(["node", str(VITE_BIN), str(root), "--host", "127.0.0.1", "--port", str(port),
                                "--strictPort", "--clearScreen", "false", "--logLevel", "warn"],
                               cwd=root, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                               env={**os.environ, "BROWSER": "none", "NO_COLOR": "1"})
    global PAGE_UPSTREAM_PID
    PAGE_UPSTREAM_PID = proc.pid
    try:
        wait_http(port, proc, 30, "vite")
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}: {log.read_text(errors='replace')[-400:]}") from None
    return port


# ---- the module project -----------------------------------------------------------------------

def write_project(root: Path) -> None:
    """index.html and src/m0.js … m199.js: module i imports modules FAN_OUT*i+1 … FAN_OUT*i+FAN_OUT."""
    (root / "src").mkdir(parents=True)
    (root / "index.html").write_text(
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>200 modules</title>\n'
        '<link rel="icon" href="data:,">\n'
        '<script type="module" src="/src/m0.js"></script>\n</head>\n<body>\n<div id="app">loading</div>\n'
        '</body>\n</html>\n')
    for i in range(MODULES):
        children = [c for c in range(FAN_OUT * i + 1, FAN_OUT * i + FAN_OUT + 1) if c < MODULES]
        lines = [f'import {{ f{c} }} from "./m{c}.js";' for c in children]
        words = ", ".join(f'"label-{i}-{k}-lorem-ipsum-dolor"' for k in range(28))
        lines += [f"const labels{i} = [{words}];",
                  f"export function f{i}() {{",
                  f"  let n = {i};",
                  f"  for (const label of labels{i}) n += label.length % 7;",
                  *[f"  n += f{c}();" for c in children],
                  "  return n;",
                  "}"]
        if i == 0:  # the root runs last, once every module of the tree is fetched and evaluated
            lines += ["window.__benchDone = performance.now();",
                      'document.getElementById("app").textContent = `modules evaluated: ${f0()}`;']
        (root / "src" / f"m{i}.js").write_text("\n".join(lines) + "\n")


# ---- devhostd -------------------------------------------------------------------------------

def start_devhostd(processes: Processes, root: Path, static_url: str, page_url: str) -> int:
    (root / "app").mkdir()
    manifest = root / "devhost.toml"
    manifest.write_text('name = "bench"\n'
                        f'[services.app]\nhost = "app.localhost"\nroot = "app"\nupstream = "{static_url}"\n'
                        f'[services.page]\nhost = "page.localhost"\nroot = "app"\nupstream = "{page_url}"\n')
    log = root / "devhostd.log"
    with open(log, "wb") as stderr:
        proc = processes.start([sys.executable, str(DEVHOSTD), "--port", "0", "--config", str(manifest),
                                "--state-dir", str(root / "state")],
                               cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
    global DEVHOSTD_PID
    DEVHOSTD_PID = proc.pid
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("devhostd: control origin "):
        raise RuntimeError(f"devhostd did not start ({line!r}): {log.read_text(errors='replace')[-600:]}")
    return int(line.rsplit(":", 1)[1])


# ---- part 1: kept-alive versus fresh connections ----------------------------------------------

class CountingConnection(http.client.HTTPConnection):
    opened = 0

    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # http.client does too; be sure
        CountingConnection.opened += 1


def fetch(connection, path: str, host: str) -> int:
    connection.request("GET", path, headers={"Host": host, "Accept-Encoding": "identity"})
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path} (Host {host}) answered {response.status}: {body[:200]!r}")
    return len(body)


def kept_vs_fresh(port: int, path: str, host: str, count: int) -> dict:
    kept_connection = CountingConnection("127.0.0.1", port, timeout=30)
    kept, fresh = [], []
    CountingConnection.opened = 0
    try:
        for n in range(WARMUP + count):
            start = time.perf_counter()
            fetch(kept_connection, path, host)
            middle = time.perf_counter()
            connection = CountingConnection("127.0.0.1", port, timeout=30)
            try:
                fetch(connection, path, host)
            finally:
                connection.close()
            end = time.perf_counter()
            if n >= WARMUP:
                kept.append(middle - start)
                fresh.append(end - middle)
    finally:
        kept_connection.close()
    return {"kept": kept, "fresh": fresh, "kept_connections": CountingConnection.opened - (WARMUP + count)}


STATIC_PID = DEVHOSTD_PID = None  # set as they start: part 1 reads their CPU time
PAGE_UPSTREAM_PID = None  # Vite's, once started: part 2 reads its CPU time (else the static server's)
RELAY_PID = None  # the bare relay's (part 2)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_request(port: int, path: str, host: str, count: int) -> tuple[float, float]:
    """(devhostd's, the upstream's) CPU seconds per request, over ``count`` kept-alive GETs
    through the proxy: each proxied request is one request to the upstream as well, so the
    upstream (a bare gevent pywsgi app) is the baseline of the same run."""
    connection = CountingConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(WARMUP):
            fetch(connection, path, host)
        daemon, upstream = cpu_seconds(DEVHOSTD_PID), cpu_seconds(STATIC_PID)
        for _ in range(count):
            fetch(connection, path, host)
        return (cpu_seconds(DEVHOSTD_PID) - daemon) / count, (cpu_seconds(STATIC_PID) - upstream) / count
    finally:
        connection.close()


def ms(values) -> str:
    return f"mean {statistics.fmean(values) * 1000:6.2f} ms, p50 {statistics.median(values) * 1000:6.2f} ms"


def report_series(label: str, result: dict) -> None:
    kept, fresh = result["kept"], result["fresh"]
    print(f"  {label}")
    connections = result["kept_connections"]
    print(f"      kept-alive, {connections} connection{'s' if connections != 1 else ''}: {ms(kept)}")
    print(f"      fresh connection each:   {ms(fresh)}")
    print(f"      kept-alive / fresh:      {statistics.fmean(kept) / statistics.fmean(fresh):.2f}x mean, "
          f"{statistics.median(kept) / statistics.median(fresh):.2f}x p50")


def part_one(count: int, port: int, static_port: int) -> None:
    module = f"/src/m{MODULES - 1}.js"
    print(f"1. {count} requests on one kept-alive HTTP/1.1 connection vs {count} on a fresh connection each "
          f"(interleaved, after {WARMUP} of each untimed; client sets TCP_NODELAY)")
    own = kept_vs_fresh(port, "/__devhost__/config.json", f"127.0.0.1:{port}", count)
    report_series("(a) devhostd GET /__devhost__/config.json (Host: control origin)", own)
    proxied = kept_vs_fresh(port, module, f"app.localhost:{port}", count)
    report_series(f"(b) through the proxy: GET {module} (Host: app.localhost) -> static-file upstream", proxied)
    direct = kept_vs_fresh(static_port, module, f"127.0.0.1:{static_port}", count)
    report_series(f"(c) reference, straight from the static-file upstream: GET {module}", direct)
    print(f"  proxied / direct (b / c): kept-alive "
          f"{statistics.median(proxied['kept']) / statistics.median(direct['kept']):.2f}x p50, "
          f"fresh {statistics.median(proxied['fresh']) / statistics.median(direct['fresh']):.2f}x p50")
    if DEVHOSTD_PID and STATIC_PID and os.path.exists(f"/proc/{DEVHOSTD_PID}/stat"):
        requests = max(count, 2000) * 2  # CPU time is counted in clock ticks: enough requests to see it
        daemon, upstream = cpu_per_request(port, module, f"app.localhost:{port}", requests)
        print(f"  (d) CPU per proxied request, {requests} kept-alive GETs of {module}: "
              f"devhostd {daemon * 1000:.3f} ms, the upstream {upstream * 1000:.3f} ms; "
              f"devhostd / upstream {daemon / upstream:.2f}x")


# ---- part 2: 200 modules in Chromium -----------------------------------------------------------

def ensure_playwright() -> str | None:
    try:
        import playwright  # noqa: F401
        return None
    except ImportError:
        pass
    print("installing Playwright for Python with pip (it downloads no browser: /usr/bin/chromium is used) …",
          flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "playwright"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"pip install playwright failed: {done.stderr.strip()[-300:]}"
    return None


def load_once(browser, url: str, wait_panel: bool = False) -> dict:
    context = browser.new_context()  # empty cache, its own connections
    pids = {"devhostd": DEVHOSTD_PID, "relay": RELAY_PID, "upstream": PAGE_UPSTREAM_PID or STATIC_PID}
    cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items() if pid}
    try:
        page = context.new_page()
        # The requests are counted by the page itself (Resource Timing), not by an event per
        # request sent to this script: 200 of those cost the browser and its driver CPU, on the
        # cores the loads are timed on.
        page.add_init_script("performance.setResourceTimingBufferSize(100000)")
        page.goto(url, wait_until="load", timeout=60_000)
        page.wait_for_function("window.__benchDone !== undefined", timeout=60_000)
        timing = page.evaluate("""() => ({done: window.__benchDone,
            load: performance.getEntriesByType("navigation")[0].loadEventStart,
            requests: [location.href, ...performance.getEntriesByType("resource").map((entry) => entry.name)]})""")
        requests = timing["requests"]
        if wait_panel:
            # Warm-up only: the panel's first boot lists the CLIs (cached by devhostd afterwards).
            try:
                page.wait_for_function("window.__devhostChat && window.__devhostChat.booted", timeout=30_000)
            except Exception:  # noqa: BLE001 - a panel that cannot boot here does not stop the benchmark
                pass
        devhost = sum("/__devhost__/" in u for u in requests)
        cpu = {name: cpu_seconds(pids[name]) - before for name, before in cpu_before.items()}
        return {"done": timing["done"], "load": timing["load"], "requests": len(requests), "devhost": devhost,
                "cpu": cpu}
    finally:
        context.close()


KINDS = ("direct", "relay", "proxied")


def median_interval(values: list[float], resamples: int = 2000) -> tuple[float, float]:
    """A 95% interval of the median of ``values`` (a bootstrap, seeded: the same loads give the
    same interval). One load's time swings by a third here, so a ratio is only as good as this
    interval is narrow: about +-6% over 30 rounds, +-3% over 100."""
    draw = random.Random(0)
    medians = sorted(statistics.median(draw.choices(values, k=len(values))) for _ in range(resamples))
    return medians[int(resamples * 0.025)], medians[int(resamples * 0.975) - 1]


def part_two(urls: dict, upstream_label: str, rounds: int) -> None:
    """``urls``: the page straight from the upstream (direct), through the bare relay (relay) and
    through devhostd (proxied)."""
    from playwright.sync_api import sync_playwright

    print(f"2. {MODULES} ES modules ({FAN_OUT}-ary import tree) in headless Chromium, upstream: {upstream_label}; "
          f"{rounds} loads of each kind, in turn, fresh browser context per load")
    with sync_playwright() as running:
        browser = running.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            for which in KINDS:
                load_once(browser, urls[which], wait_panel=which == "proxied")
            results = {which: [] for which in KINDS}
            for n in range(rounds):
                for which in KINDS[n % 3:] + KINDS[:n % 3]:  # each kind first, second and last as often
                    results[which].append(load_once(browser, urls[which]))
        finally:
            browser.close()
    summary = {}
    for which in KINDS:
        loads = results[which]
        done = statistics.median(r["done"] for r in loads)
        load = statistics.median(r["load"] for r in loads)
        counts = sorted({r["requests"] for r in loads})
        devhost = sorted({r["devhost"] for r in loads})
        summary[which] = (done, load)
        extra = f", {'/'.join(map(str, devhost))} of them to /__devhost__/ (the panel)" if any(devhost) else ""
        print(f"  {which:8} {urls[which]:34} all modules evaluated p50 {done:7.1f} ms, load event p50 {load:7.1f} ms, "
              f"{'/'.join(map(str, counts))} requests per load{extra}")
    for top, bottom in (("proxied", "direct"), ("relay", "direct"), ("proxied", "relay")):
        # Each round's loads ran back to back, so a drift of the machine (another process, a
        # browser's housekeeping) hits them alike: the p50 of the rounds' own ratios is the
        # steadier figure of the two.
        paired = [a["done"] / b["done"] for a, b in zip(results[top], results[bottom])]
        spread = statistics.quantiles(paired, n=4) if len(paired) >= 4 else (min(paired), max(paired))
        low, high = median_interval(paired)
        print(f"  {top} / {bottom}: all modules evaluated {summary[top][0] / summary[bottom][0]:.2f}x, "
              f"load event {summary[top][1] / summary[bottom][1]:.2f}x (p50s); round by round "
              f"{statistics.median(paired):.2f}x (95% interval {low:.2f}x to {high:.2f}x; "
              f"quartiles {spread[0]:.2f}x to {spread[-1]:.2f}x)")
    # CPU time does not swing with the machine's drift as a load's wall time does: what a process
    # in between adds to a load is its own CPU (it shares the cores with the browser and the dev
    # server), and the stalls of its one thread when a core is taken from it.
    def mean_ms(which, name):
        return statistics.mean(r["cpu"].get(name, 0.0) for r in results[which]) * 1000

    print(f"  CPU per load (mean, /proc; 10 ms ticks): devhostd {mean_ms('proxied', 'devhostd'):.0f} ms, "
          f"the relay {mean_ms('relay', 'relay'):.0f} ms; the upstream {mean_ms('direct', 'upstream'):.0f} ms direct, "
          f"{mean_ms('relay', 'upstream'):.0f} ms relayed, {mean_ms('proxied', 'upstream'):.0f} ms proxied")


# ---- main -------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", nargs="?", type=int, default=500, help="requests per series in part 1 (500)")
    parser.add_argument("--no-browser", action="store_true", help="skip part 2 (Chromium)")
    parser.add_argument("--no-vite", action="store_true", help="part 2 on the static-file server, not Vite")
    parser.add_argument("--rounds", type=int, default=100, help="timed page loads of each kind in part 2 (100)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # internal: run the static-file upstream
    parser.add_argument("--relay", type=int, help=argparse.SUPPRESS)  # internal: run the bare relay
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.relay:
        relay(args.relay)
        return

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_on_signal)
    processes = Processes()
    root = Path(tempfile.mkdtemp(prefix="devhost-bench-proxy-"))
    try:
        project = root / "project"
        write_project(project)
        static_port = start_static(processes, project)
        browser = not args.no_browser
        if browser and not os.access(CHROMIUM, os.X_OK):
            print(f"(part 2 skipped: {CHROMIUM} is missing)")
            browser = False
        if browser and (why := ensure_playwright()):
            print(f"(part 2 skipped: {why})")
            browser = False
        page_port, upstream_label = static_port, "static-file server (gevent pywsgi, HTTP/1.1 kept-alive)"
        if browser and not args.no_vite:
            why = ensure_vite()
            if why is None:
                try:
                    page_port = start_vite(processes, project, root / "vite.log")
                    upstream_label = f"Vite {VITE_VERSION}"
                except RuntimeError as exc:
                    why = str(exc)
            if why:
                upstream_label += f" (Vite unavailable: {why})"
        elif args.no_vite:
            upstream_label += " (--no-vite)"
        port = start_devhostd(processes, root, f"http://127.0.0.1:{static_port}", f"http://127.0.0.1:{page_port}")
        print(f"devhostd on 127.0.0.1:{port}; static-file upstream on 127.0.0.1:{static_port}; "
              f"python {sys.version.split()[0]}")
        part_one(args.count, port, static_port)
        if browser:
            relay_port = start_relay(processes, page_port)
            part_two({"direct": f"http://127.0.0.1:{page_port}/", "relay": f"http://127.0.0.1:{relay_port}/",
                      "proxied": f"http://page.localhost:{port}/"}, upstream_label, args.rounds)
    except Exception:
        if not _interrupted:
            raise
        # Ctrl-C reaches the browser's driver too, which may fail first with its own error.
        print("interrupted", file=sys.stderr)
        sys.exit(128 + _interrupted[0])
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        processes.stop_all()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

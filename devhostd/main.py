"""devhostd's main: arguments, actors in a fixed order, the server (web/server.py), and a clean stop.

``bin/devhostd`` patches gevent before importing this module (pykka creates a lock when it is
imported). ``devhostd doctor``, ``devhostd visual`` and ``devhostd page`` are programs of their own beside it.
Actors start in a fixed order and stop in reverse; on SIGINT/SIGTERM every session
closes with 1001, every CLI and everything it started is ended, then leftovers are swept.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys


import gevent
import gevent.event
import gevent.monkey
import pykka

from devhostd.packages import refusal

if refusal():  # before web, actors and storage are imported: they may be another distribution's
    raise SystemExit(refusal())


from actors import proctree
from actors.agent_tokens import AgentTokens
from actors.chatlog import daemon_log
from actors.harness.mode_names import RUNTIME_MODES
from actors.harness_catalog import HarnessCatalog
from actors.registry import CoreClients, Registry
from actors.visual_store import VisualStore
from storage import core_token
from storage.chat_store import FolderInUse, lock_folder
from storage.state_folder import default_state_dir
from storage.manifest import ManifestError, ManifestSource
from actors.harness import agents_configured
from storage.panel import PanelPositions
from storage.panel_modes import PanelModes
from devhostd.port_probe import cannot_listen_message
from web import hub_monitor, security, server as web_server
from web.app import Context
from web.auth import CoreAuth
from web.routing import development_source_root

CODE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHUTDOWN_GRACE = 12.0
MANIFEST_POLL = 1.0  # seconds between looks at the manifest's mtime, so a live edit is read when made

# What `devhostd --help` lists besides the daemon's own options (dispatched in main()).
SUBCOMMANDS = """\
subcommands:
  devhostd doctor [--config devhost.toml] [--state-dir DIR]
                        check that chat can work here: the CLIs, their sign-in, the manifest's folders
  devhostd visual publish --title TITLE FILE
                        publish an HTML page in a chat (what an agent devhostd started runs)
  devhostd page errors | requests | element SELECTOR
                        what the open pages of the chat's checkout report (what an agent runs)

Each has its own --help."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="devhostd",
        description="Chat from the page you are developing with the coding-agent CLIs installed here "
                    "(Claude Code, Codex), working in that page's own checkout.",
        epilog=SUBCOMMANDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", metavar="devhost.toml",
                        help="the stack manifest: name, routed services (hostname -> checkout) and "
                             "[devtools.chat]. Default: ./devhost.toml if there is one; else the current "
                             "directory is the one routed project, served as http://localhost:PORT/")
    parser.add_argument("--host", default="127.0.0.1",
                        help="loopback address to listen on (default 127.0.0.1). Pages carry no token: the "
                             "origin is their boundary, so other addresses are refused")
    parser.add_argument("--port", type=int, default=7777,
                        help="port to listen on (default 7777; 0 picks a free one, printed on start)")
    parser.add_argument("--state-dir", metavar="DIR",
                        help="where devhostd keeps its state, e.g. chat panel positions "
                             "(default $XDG_STATE_HOME/devhostd or ~/.local/state/devhostd)")
    args = parser.parse_args(argv)
    if not security.is_loopback(args.host):
        parser.error(f"--host {args.host}: only loopback addresses (127.0.0.1, ::1) may be used")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    return args


def main(argv=None) -> int:
    if not gevent.monkey.is_module_patched("threading"):
        print("devhostd: gevent must patch the process before devhostd is imported (run bin/devhostd)",
              file=sys.stderr)
        return 2
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["doctor"]:
        from devhostd import doctor
        return doctor.main(argv[1:], default_state_dir())
    if argv[:1] == ["visual"]:
        from devhostd import visual_publish
        return visual_publish.main(argv[1:], default_state_dir())
    if argv[:1] == ["page"]:
        from devhostd import page_command
        return page_command.main(argv[1:], default_state_dir())
    args = parse_args(argv)
    # Whether devhostd runs from its own git checkout asks git: it answers while the rest starts.
    # The yield lets the greenlet start git now (it then waits on git's pipe), not at the next
    # yield far below, so git's ~8 ms run beside the manifest, the sweep and the actors' start.
    source_root = gevent.spawn(development_source_root, CODE_DIR)
    gevent.sleep(0)
    config = args.config
    if config is None and os.path.isfile(os.path.join(os.getcwd(), "devhost.toml")):
        config = os.path.join(os.getcwd(), "devhost.toml")  # the stack of the folder devhostd starts in
    try:
        manifests = ManifestSource(config, os.getcwd(), log=daemon_log, on_change=agents_configured)
    except ManifestError as exc:
        print(f"devhostd: {exc}", file=sys.stderr)
        return 2
    for warning in manifests.current().warnings:  # shown at once, and on the control page and in the panel
        print(f"devhostd: warning: {warning}", file=sys.stderr, flush=True)
    state_dir = os.path.realpath(args.state_dir or default_state_dir())
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    orphans = proctree.sweep_orphans_of_dead_daemons()
    if orphans:
        daemon_log(f"ended {len(orphans)} processes an earlier devhostd left behind when it was killed")
    hub_monitor.install()  # with GEVENT_MONITOR_THREAD_ENABLE: one log line per blocked hub

    # The port before the state folder: a second `devhostd` started the same way fails on both, and
    # "devhostd already runs on 127.0.0.1:7777" says more than which folder it holds.
    try:
        server = web_server.listen(args.host, args.port)
    except OSError as exc:
        print(f"devhostd: {cannot_listen_message(args.host, args.port, exc)}", file=sys.stderr)
        return 1
    try:
        core_lock = lock_folder(os.path.join(state_dir, "core"))  # one daemon writes a chats folder at a time
    except FolderInUse as exc:
        server.close()
        print(f"devhostd: {exc}", file=sys.stderr)
        return 1
    port = server.socket.getsockname()[1]
    # An agent's `devhostd visual publish` posts here (the CLIs inherit this environment).
    os.environ["DEVHOSTD_URL"] = f"http://{security.format_host(args.host, port)}"
    agent_tokens = AgentTokens()
    # The secret's first write fsyncs: on the threadpool, like all file work that can take long.
    token = gevent.get_hub().threadpool.apply(core_token.load_or_create, (state_dir,))
    core_auth = CoreAuth(token, core_token.token_path(state_dir), agent_tokens)

    # Fixed start order; stopped in reverse. A cheap ask of each surfaces a failing on_start now.
    started = []
    core_clients = CoreClients()
    try:
        catalog = _started(started, HarnessCatalog.start())
        visuals = _started(started, VisualStore.start(os.path.join(state_dir, "core")))
        registry = _started(started, Registry.start(
            os.path.join(state_dir, "core"), core_clients, commands=lambda: manifests.current().commands,
            # [core] as the manifest says at each use (it is re-read when it changes)
            resuming_on=lambda: manifests.current().resume_interrupted_turns,
            limit_resume=lambda: manifests.current().resume_at_reset,
            idle_cli_minutes=lambda: manifests.current().idle_cli_minutes,
            accounts=lambda: manifests.current().accounts,
            visual_store=visuals, chat_options={"agent_tokens": agent_tokens}))
        visuals.proxy().set_registry(registry).get(timeout=30)
    except (pykka.ActorDeadError, pykka.Timeout) as exc:
        print(f"devhostd: an actor failed to start: {exc!r}", file=sys.stderr)
        _stop(list(reversed(started)))
        server.close()
        return 1

    context = Context(manifests=manifests, registry=registry.proxy(), catalog=catalog.proxy(), visuals=visuals.proxy(),
                      panels=PanelPositions(state_dir), panel_modes=PanelModes(state_dir, RUNTIME_MODES),
                      address=args.host, port=port,
                      source_root=source_root.get(), core_clients=core_clients, core_auth=core_auth)
    web_server.serve(server, context, started)

    watcher = gevent.spawn(_watch_manifest, manifests)
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    print(f"devhostd: control origin {context.control_origin}", flush=True)
    manifest = manifests.current()
    daemon_log(f"manifest: {manifest.path}" if manifest.path else
               "no manifest (no --config, no ./devhost.toml): this folder is the one routed page")
    for service in manifest.services:
        daemon_log(f"{manifest.name}: {service.name} http://{service.host}:{port}/ -> {service.root}")
    if not web_server.same_user_enforced():
        daemon_log("warning: this platform does not tell who owns a connection: every account on this machine can "
                   "reach the pages (the chat core still needs its secret)")
    stopping.wait()

    daemon_log("stopping: closing every session")
    watcher.kill()
    server.stop(timeout=1)  # no new requests; open sockets are closed by their sessions below
    survivors = close_every_session(registry.proxy())
    _stop(list(reversed(started)))
    leftovers = proctree.sweep_tag_prefix(proctree.daemon_tag_prefix())
    if survivors or leftovers:
        daemon_log(f"bug: processes outlived their sessions and were killed: {survivors or ''} {leftovers or ''}")
    core_lock.close()
    daemon_log("stopped")
    return 0


def _watch_manifest(manifests: ManifestSource) -> None:
    """Reads the manifest when it changes, not at the next request: a broken edit is logged then
    (once) and shown on the control page and in the panel while the last good one serves."""
    while True:
        gevent.sleep(MANIFEST_POLL)
        manifests.current()


def _started(started: list, ref):
    """Keeps a just-started actor's ref, once a cheap ask showed its on_start went through."""
    started.append(ref)
    ref.proxy().ping().get(timeout=30)
    return ref


def close_every_session(registry) -> list[str]:
    events = []
    chats = registry.chats().get(timeout=10)
    for chat in chats:
        try:
            chat.freeze().get(timeout=5)  # a running turn stays running on disk, to be settled at the next start
        except (pykka.ActorDeadError, pykka.Timeout):
            pass
    for chat in chats:
        try:
            record = chat.close(1001).get(timeout=5)
            events.append((record["id"], chat.cli_gone().get(timeout=5)))
        except pykka.ActorDeadError:
            continue
        except pykka.Timeout:
            events.append(("?", None))
    try:
        events += [("killed chat", gone) for gone in registry.ending().get(timeout=5)]
    except (pykka.ActorDeadError, pykka.Timeout):
        pass
    deadline = gevent.get_hub().loop.now() + SHUTDOWN_GRACE
    survivors = []
    for session_id, gone in events:
        remaining = max(0.0, deadline - gevent.get_hub().loop.now())
        if gone is None or not gone.wait(timeout=remaining):
            survivors.append(session_id)
    web_server.wait_for_closing_writers(timeout=1.0)  # the 1001 close frames reach their pages
    return survivors


def _stop(refs) -> None:
    for ref in refs:
        try:
            ref.stop(timeout=10)
        except (pykka.Timeout, pykka.ActorDeadError):
            pass
    pykka.ActorRegistry.stop_all(timeout=10)

"""devhostd's HTTP server: the listening socket, the WSGI app over the extensions, its error log.

devhostd/main.py starts the actors, then ``listen`` and ``serve``; on stop it waits for the
sockets' close frames (``wait_for_closing_writers``).
"""
from __future__ import annotations

from gevent.pywsgi import WSGIServer

from actors.chatlog import daemon_log
from web import agents, header_parse, page_loop, pages, sinks
from web.app import Context, DevhostApp
from web.core.extension import CoreExtension
from web.websocket import SAME_USER, DevhostHandler

# Each extension has start(context) -> {name: ActorRef} and install(app: DevhostApp).
EXTENSIONS: list = [pages.EXTENSION, agents.EXTENSION, page_loop.EXTENSION]


def listen(host: str, port: int) -> WSGIServer:
    """A server bound to host:port that serves nothing yet; OSError when it cannot listen."""
    header_parse.install()  # every head read, the browsers' and the upstreams', skips the email parser
    # SERVER_NAME is the address itself: gevent would otherwise look up its name (a reverse DNS
    # query, and the resolver's start, before the first answer); every request carries a Host.
    server = WSGIServer((host, port), None, handler_class=DevhostHandler, log=None, error_log=_ErrorLog(),
                        environ={"SERVER_NAME": host})
    server.init_socket()
    return server


def serve(server: WSGIServer, context: Context, started: list) -> None:
    """Starts the extensions' actors (appended to ``started``: after the core's, so stopped before
    them) and serves the app."""
    extensions = [CoreExtension(), *EXTENSIONS]
    for extension in extensions:
        for name, ref in extension.start(context).items():
            started.append(ref)
            context.actors[name] = ref.proxy()
    server.application = DevhostApp(context, extensions)
    server.start()


def same_user_enforced() -> bool:
    """Whether this platform tells who owns a connection (web/peer_owner.py)."""
    return SAME_USER.enforced


def wait_for_closing_writers(timeout: float) -> None:
    """Until the sessions' close frames reached their pages (or ``timeout``)."""
    sinks.wait_for_closing_writers(timeout=timeout)


class _ErrorLog:
    def write(self, text):
        if text.strip():
            # pywsgi writes here only when a request raised: that is a 500, so a bug. The last
            # line (the exception itself) goes first, so a cut never loses it.
            lines = text.strip().splitlines()
            daemon_log(f"bug: server: {lines[-1]} | " + " / ".join(lines[:-1]))

    def flush(self):
        pass

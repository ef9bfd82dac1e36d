"""The agents list and the activity page and stream, as a daemon extension.

- ``GET /__devhost__/agents?pageURL=&chatTarget=`` follows the chat routes' rules (the control
  origin, or a routed hostname naming a page of its own); rows carry no transcript paths or
  native session ids. The chat sessions of this daemon (``isOwned``) take their state from
  their own record, which is exact.
- ``GET /__devhost__/agents/activity`` (a page, with its script) and the WebSocket
  ``/__devhost__/ws/agents/activity`` answer only on the control origin: transcripts must never
  reach an origin that application scripts share, so any routed hostname gets 403.

The AgentScanner actor is started at the first ask of it (its scanners are imported then, not
at the daemon's start) and stopped with the daemon's remaining actors; the routes ask it, with a
timeout, at the edge.
"""
from __future__ import annotations

import os

import bottle
import gevent.lock

from actors import proctree
from actors.clock import now_ms
from actors.chatlog import daemon_log
from web import edge
from web.app import Endpoint
from web.edge import Refusal, json_answer, on_control_origin, refusals_as_json
from web.sockets import NotAttached, SocketRoute

ASK_TIMEOUT = 20.0
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PAGE_FILES = {"activity": ("agents-activity.html", "text/html; charset=utf-8"),
              "activity.js": ("agents-activity.js", "text/javascript; charset=utf-8")}


class AgentsExtension:
    name = "agents"

    def __init__(self):
        self.context = None

    def start(self, context) -> dict:
        self.context = context
        context.actors[self.name] = StartedAtFirstUse(_start_scanner)
        return {}

    def install(self, app) -> None:
        context = app.context
        install_routes(app.bottle, context)
        app.websockets["/__devhost__/ws/agents/activity"] = Endpoint(
            check=lambda environ: _check_stream(context, environ),
            serve=lambda ws, environ, checked: serve_activity(ws, checked))


EXTENSION = AgentsExtension()


def _start_scanner():
    from actors.agent_scanner import AgentScanner
    ref = AgentScanner.start()
    ref.proxy().ping().get(timeout=10)  # a failing on_start surfaces at its first ask
    return ref.proxy()


class StartedAtFirstUse:
    """An actor's proxy that starts the actor (``start()`` -> its proxy) at its first use."""

    def __init__(self, start):
        self._start = start
        self._proxy = None
        self._starting = gevent.lock.Semaphore()  # two first asks start one actor

    def __getattr__(self, name):
        if self._proxy is None:
            with self._starting:
                if self._proxy is None:
                    self._proxy = self._start()
        return getattr(self._proxy, name)


# --------------------------------------------------------------------------- helpers

def _directory(context, environ, query) -> str:
    return edge.page_directory(context, environ, query.get("pageURL"), query.get("chatTarget"))


def _scanner(context):
    scanner = context.actors.get(AgentsExtension.name)
    if scanner is None:
        raise Refusal(404, "chat is off in this daemon, so agents are not listed")
    return scanner


def _ask(future):
    return edge.ask(future, ASK_TIMEOUT, busy="the agent scan is busy; try again in a moment",
                    gone="the agent scanner is stopping", gone_status=503)


def _only_control_origin(context, environ) -> None:
    if not on_control_origin(context, environ):
        raise Refusal(403, f"agent activity is only served on the control origin {context.control_origin}: "
                           "transcripts never reach an origin that application scripts share")


def _query(request) -> dict:
    return {name: request.query.get(name) for name in ("pageURL", "chatTarget")}


# --------------------------------------------------------------------------- routes

def install_routes(app: bottle.Bottle, context) -> None:
    request = bottle.request

    handler = refusals_as_json

    @app.get("/__devhost__/agents")
    @handler
    def agents():
        directory = _directory(context, request.environ, _query(request))
        found = _ask(_scanner(context).agents(directory))
        statuses, background = {}, {}
        if any(chat for _, chat in found["rows"]):
            try:
                # A CLI's tag names its chat (actors/proctree.make_tag), not the session.
                records = context.registry.sessions(directory).get(timeout=5)
                statuses = {proctree.tag_id(record["chatId"]): record["status"] for record in records}
                background = {proctree.tag_id(record["chatId"]): record.get("background", 0) for record in records}
            except Exception:  # noqa: BLE001 - the host is busy or stopping: the scan's own reading stands
                statuses, background = {}, {}
        from actors.agents import rows as agent_rows
        answer = {"agents": agent_rows.refine(found["rows"], statuses, background)}
        if found["error"]:
            answer["error"] = found["error"]
        return json_answer(answer)

    @app.get("/__devhost__/agents/<name:re:activity(\\.js)?>")
    @handler
    def activity_page(name):
        _only_control_origin(context, request.environ)
        if name == "activity":
            _directory(context, request.environ, _query(request))  # a bad query is said at once
            _scanner(context)
        filename, content_type = PAGE_FILES[name]
        with open(os.path.join(STATIC, filename), "rb") as handle:
            body = handle.read()
        return bottle.HTTPResponse(body, headers={
            "Content-Type": content_type,
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": (f"default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; "
                                        f"connect-src 'self' ws://{context.control_host}; base-uri 'none'; "
                                        "form-action 'none'; frame-ancestors 'none'"),
        })


# --------------------------------------------------------------------------- the stream

def _check_stream(context, environ):
    _only_control_origin(context, environ)
    directory = _directory(context, environ, edge.query(environ))
    # The stream follows "from the moment it opens": this moment, before the upgrade is
    # answered, so nothing the page's agents write once it reads "live" is taken as history.
    return _scanner(context), directory, now_ms()


def serve_activity(ws, checked) -> None:
    scanner, directory, opened_ms = checked

    def attach(sink):
        try:
            return scanner.watch(directory, sink, opened_ms).get(timeout=ASK_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the scanner is busy or stopping; the page reconnects
            daemon_log(f"agents: an activity stream could not start: {exc!r}")
            # A watch registered after all is dropped at the scanner's next poll (its sink is closed).
            raise NotAttached(None) from None

    # The page sends nothing: its frames are ignored until it closes. Closing the stream stops
    # its watching (a tell).
    SocketRoute("agents activity", attach, detach=scanner.unwatch).serve(ws)

"""What every route of devhostd's own does at the edge: refuse with a status and a message, ask
an actor with a timeout, answer JSON, and read what a request names (its body, its query, the
page's directory).

Every answer under ``/__devhost__/`` is JSON; every refusal is ``{"error": <what to change>}``
with a 4xx status (503 when the daemon is busy, 507 when the disk is full).
"""
from __future__ import annotations

import errno
import json
from urllib.parse import parse_qs

import bottle
import gevent.event
import pykka

from actors.errors import ChatError
from web.routing import RouteError, resolve_directory

ASK_TIMEOUT = 10.0
MAX_JSON_BODY = 64 * 1024
BUSY = "the daemon is busy; try again in a moment"
GONE = "that session is gone (it was replaced by its resume)"

# How the HTTP routes answer a refusal of the chat runtime (actors/errors.py).
HTTP_STATUS = {"bad-request": 400, "chat-not-found": 404, "not-found": 404, "request-not-found": 404,
               "subagent-not-found": 404, "task-not-found": 404, "item-not-found": 404,
               "bookmark-not-found": 404, "too-many-bookmarks": 409, "invalid-attachments": 400,
               "visual-invalid": 400, "visual-too-large": 413,
               "account-incompatible": 409,
               "conflict": 409, "chat-busy": 409, "chat-unreadable": 409, "chat-unsupported": 400, "forbidden": 403,
               "unavailable": 503, "storage-full": 507, "storage-failed": 503}


class Refusal(Exception):
    """A request refused: answered as ``{"error": message}`` with ``status`` (a socket's check
    answers it as plain HTTP before the upgrade)."""

    def __init__(self, status: int, message: str, details: dict | None = None):
        super().__init__(message)
        self.status = status
        self.details = details or {}  # a ChatError's (a conflict's paths), answered beside ``error``


def ask(future, timeout: float = ASK_TIMEOUT, *, busy: str = BUSY, gone: str = GONE, gone_status: int = 404):
    """An actor's answer, or a Refusal: ``busy`` (503) when it does not come in ``timeout``,
    ``gone`` when the actor stopped, a ChatError with the status of its code."""
    try:
        return future.get(timeout=timeout)
    except pykka.Timeout:
        raise Refusal(503, busy) from None
    except pykka.ActorDeadError:
        raise Refusal(gone_status, gone) from None
    except ChatError as exc:
        raise Refusal(HTTP_STATUS.get(exc.code, 400), str(exc), {"code": exc.code, **exc.details}
                      if exc.details else None) from None


def waited(result: gevent.event.AsyncResult, timeout: float, busy: str):
    """What an actor answered later (an AsyncResult), refused as an ask's answer would be."""
    result.wait(timeout)
    if not result.ready():
        raise Refusal(503, busy)
    return ask(result, timeout)


def json_answer(value, status: int = 200, headers: dict | None = None) -> bottle.HTTPResponse:
    return bottle.HTTPResponse(json.dumps(value), status=status,
                               headers={"Content-Type": "application/json", "Cache-Control": "no-store",
                                        **(headers or {})})


def refusals_as_json(function):
    """A route whose Refusal becomes its JSON answer: {"error": ...} with the refusal's status."""
    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Refusal as exc:
            return json_answer({**exc.details, "error": str(exc)}, exc.status)
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            # Out of file descriptors: the daemon is full, not broken.
            return json_answer({"error": "devhostd has no file descriptors left: close some sessions, or raise its "
                                         "limit (ulimit -n) and restart it"}, 503)
    wrapped.__name__ = function.__name__
    return wrapped


def json_body(request) -> dict:
    """A route's JSON object body (at most MAX_JSON_BODY bytes)."""
    data = request.body.read(MAX_JSON_BODY + 1)
    if len(data) > MAX_JSON_BODY:
        raise Refusal(413, f"the JSON body must be at most {MAX_JSON_BODY} bytes")
    try:
        value = json.loads(data or b"null")
    except (ValueError, RecursionError):
        raise Refusal(400, "the body must be JSON") from None
    if not isinstance(value, dict):
        raise Refusal(400, "the body must be a JSON object")
    return value


def query(environ) -> dict[str, str]:
    """A request's query, each name's first value."""
    return {key: values[0] for key, values in parse_qs(environ.get("QUERY_STRING", "")).items()}


def on_control_origin(context, environ) -> bool:
    return (environ.get("HTTP_HOST") or "").lower() == context.control_host.lower()


def request_hostname(context, environ) -> str | None:
    """The routed hostname a request came to, or None on the control origin."""
    if on_control_origin(context, environ):
        return None
    return (environ.get("HTTP_HOST") or "").lower().rsplit(":", 1)[0]


def page_directory(context, environ, page_url, target) -> str:
    """The directory of the page a request names (the Chat API's scoping: web/routing.py)."""
    try:
        return resolve_directory(context.manifests.current(), page_url, target,
                                 request_hostname=request_hostname(context, environ), source_root=context.source_root)
    except RouteError as exc:
        raise Refusal(exc.status, str(exc)) from None


def query_directory(context, request) -> str:
    """The directory of the page a request's query names (``pageURL`` and ``chatTarget``)."""
    return page_directory(context, request.environ, request.query.get("pageURL"), request.query.get("chatTarget"))


def page_session(context, session_id: str, directory: str):
    """(chat, record) of a session of ``directory``; any other is a 404, as if it did not exist."""
    chat, record = ask(context.registry.session(session_id))
    if chat is None or record["projectRootPath"] != directory:
        raise Refusal(404, f"no session {session_id} in this directory")
    return chat, record

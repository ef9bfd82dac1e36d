"""A scripted mock of the OpenAI Responses API, for driving the real ``codex`` CLI in tests.

    mock = MockOpenAI(script=[text_reply("Hello from the mock.")])
    with mock:
        env = codex_env(home, mock.url, project_dirs=[work])   # tests/peers.py
        ...run `codex app-server`...
        body = mock.wait_for_requests(1)[0]
        assert "hello" in message_text(body)

``.url`` is the provider ``base_url`` (``http://127.0.0.1:<port>/v1``); Codex posts to
``{base_url}/responses``.

Which requests consume the script
---------------------------------
Only *model-turn* requests do: ``POST /v1/responses`` (codex-cli 0.169.0 streams all of
them). Each one takes the next scripted reply, is appended to ``.requests`` (the parsed JSON
body) and answered as SSE. When the script is empty the answer is the text ``DEFAULT_TEXT``
("mock: nothing scripted"), so a test that scripted too little fails on a readable assertion
instead of hanging.

Everything else is a *side request* and never touches the script or ``.requests``:
``GET /v1/models`` gets a small model list, any ``HEAD`` a bare 200, anything else a 404 with
an OpenAI-style error body. (Codex 0.169.0 sends no side request at all in the recipe's
set-up: ``model/list`` answers from the catalog built into the binary.)

Every request, turn or side, is also appended to ``.log`` as a dict
``{"kind", "method", "path", "headers", "body"}`` (kind is ``"turn"`` or ``"side"``).

The SSE stream
--------------
Each event is ``event: <type>`` plus ``data: <json with the same "type">``. A text reply::

    response.created              {"response": {"id": "resp_…", "status": "in_progress", …}}
    response.output_item.added    {"output_index": 0, "item": {"type": "message", "id": "msg_…",
                                   "role": "assistant", "status": "in_progress", "content": []}}
    response.output_text.delta    {"item_id": "msg_…", "output_index": 0, "content_index": 0,
                                   "delta": <chunk>}                        (one per chunk)
    response.output_item.done     {"output_index": 0, "item": {… "content": [{"type":
                                   "output_text", "text": <all chunks>, "annotations": []}]}}
    response.completed            {"response": {"id": "resp_…", "status": "completed",
                                   "usage": {input_tokens, output_tokens, total_tokens, …}}}

A tool call is the same with a ``function_call`` (``exec_command``) or ``custom_tool_call``
(``apply_patch``) item and no deltas. What Codex 0.169.0 actually needs (by experiment):

* ``response.completed`` (its ``response`` needs only ``id``) ends the model request; a
  stream closed without it fails the turn ("stream closed before response.completed").
* ``response.output_item.done`` is what enters the history and completes the agentMessage
  item; without it the turn still "completes" with no agent message.
* ``response.output_item.added`` is needed for the deltas: without it Codex drops every
  ``output_text.delta`` and starts the item at ``output_item.done``.
* ``usage`` feeds ``thread/tokenUsage/updated`` (none is sent without it).
* ``response.created``, ``output_index`` and ``content_index`` are not needed; sent anyway.

Replies
-------
* ``text_reply(*chunks, delay=0)``: one assistant message, one ``output_text.delta`` per chunk,
  ``delay`` seconds between chunks (none before the first): ``text_reply(*["w "] * 40,
  delay=0.25)`` is a slow stream a test can steer or interrupt. A client that hangs up
  mid-stream (Codex does on steer and interrupt) ends it quietly.
* ``shell_reply(command, justification=None, *, escalated=None, id=None, **args)``: a
  ``function_call`` of ``exec_command`` with ``{"cmd": command}`` (model ``gpt-5.5``'s shell
  tool); ``escalated=True`` adds ``sandbox_permissions: "require_escalated"``, which is what
  makes ``approval_policy = "on-request"`` ask; a ``justification`` (the approval's
  ``reason``) implies it, as Codex refuses one without it. ``.id`` is the ``call_id``, which
  Codex uses as the ``commandExecution`` item id. Codex then runs the command (after an
  approval, if the policy asks: under "untrusted" anything not known-safe such as ``touch``;
  under "on-request" only escalated ones) and sends the output in a new request: script the
  reply to that one too.
* ``patch_reply(patch, id=None)``: a ``custom_tool_call`` of ``apply_patch`` whose input is
  the raw patch (``*** Begin Patch`` … ``*** End Patch``); ``add_file_patch(path, text)``
  builds a one-file "Add File" patch. ``.id`` is the ``fileChange`` item id.
* ``error_reply(status, message, times=1, type=None, code=None, headers=None)``: HTTP
  ``status`` with ``{"error": {"message", "type", "param": null, "code"}}``. It answers
  ``times`` consecutive turn requests (Codex retries unless the provider sets
  ``request_max_retries = 0``, as ``codex_env`` does), then the script moves on.
  ``times=None`` makes it sticky: it answers every later turn request.
* ``failed_reply(message)``: a 200 stream that ends in ``response.failed`` (Codex reports
  ``stream disconnected before completion: <message>``).

Concurrency: the server runs in gevent greenlets of the calling process (the test process is
monkey-patched), so the caller must block cooperatively (gevent subprocess pipes, gevent.sleep,
patched locks), which every patched call does. ``.add()``, ``.requests`` and
``wait_for_requests()`` may be used from any greenlet or patched thread. ``stop()`` closes the
listener, ends open streams at their next chunk and kills the remaining handlers.
"""
import json
import time
import uuid
from urllib.parse import urlsplit

from tests.scripted_server import ScriptedServer

DEFAULT_TEXT = "mock: nothing scripted"
MODEL_IDS = ("gpt-5.5",)
USAGE = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
         "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
         "total_tokens": 120}


def _new_id(prefix, n=24):
    return prefix + uuid.uuid4().hex[:n]


class Reply:
    """One scripted answer to a model-turn request. Build it with the functions below."""

    def __init__(self, items=(), delay=0.0, status=200, error=None, times=1, headers=None,
                 failure=None, fields=None):
        # items: [{"type": "text", "chunks": [...]} | {"type": "function_call", ...}
        #         | {"type": "custom_tool_call", ...}]
        self.items = list(items)
        self.delay = delay
        self.status = status
        self.error = error  # (type, code, message) for an HTTP error reply
        self.times = times
        self.headers = dict(headers or {})
        self.failure = failure  # message of a response.failed event
        self.fields = dict(fields or {})  # more fields of an error reply's ``error`` object

    @property
    def id(self):
        """The call_id of the reply's tool call (None when it has none)."""
        for item in self.items:
            if "call_id" in item:
                return item["call_id"]
        return None

    def __repr__(self):
        if self.error:
            return f"<error_reply {self.status} {self.error[2]!r} times={self.times}>"
        if self.failure:
            return f"<failed_reply {self.failure!r}>"
        return f"<reply {[i['type'] for i in self.items]}>"


def text_reply(*chunks, delay=0.0):
    """An assistant message streamed as one output_text.delta per chunk, ``delay`` s apart."""
    if not chunks:
        raise ValueError("text_reply needs at least one chunk")
    return Reply([{"type": "text", "chunks": [str(c) for c in chunks]}], delay=delay)


def shell_reply(command, justification=None, *, escalated=None, id=None, **args):
    """A function_call of ``exec_command`` running ``command`` (Codex wraps it in bash -lc).

    ``escalated`` adds ``sandbox_permissions: "require_escalated"`` (run outside the sandbox:
    the trigger for an approval under ``on-request``). ``justification`` becomes the approval
    request's ``reason``; Codex 0.169.0 refuses a justification without sandbox_permissions
    (the model gets an error instead of a command), so a justification implies
    ``escalated=True`` unless ``escalated=False`` is given. Any other keyword (``workdir``,
    ``yield_time_ms``, …) goes into the arguments as given.
    """
    if escalated is None:
        escalated = justification is not None
    arguments = {"cmd": command}
    if justification is not None:
        arguments["justification"] = justification
    if escalated:
        arguments["sandbox_permissions"] = "require_escalated"
    arguments.update(args)
    return Reply([{"type": "function_call", "name": "exec_command",
                   "call_id": id or _new_id("call_mock_"), "arguments": json.dumps(arguments)}])


def patch_reply(patch, id=None):
    """A custom_tool_call of ``apply_patch`` with the raw patch text as its input."""
    if not patch.endswith("\n"):
        patch += "\n"
    return Reply([{"type": "custom_tool_call", "name": "apply_patch",
                   "call_id": id or _new_id("call_mock_"), "input": patch}])


def add_file_patch(path, text):
    """An apply_patch patch adding the file ``path`` (relative to the cwd) with ``text``."""
    lines = "".join(f"+{line}\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def spawn_agent_reply(task_name, message, id=None):
    """A ``collaboration.spawn_agent`` call (Codex's multi-agent tools, ``features.multi_agent_v2``):
    a child agent ``/root/<task_name>`` starts on a thread of its own with ``message`` and no
    parent history. Its own model requests are answered by ``MockOpenAI.route``."""
    return Reply([{"type": "function_call", "name": "spawn_agent", "namespace": "collaboration",
                   "call_id": id or _new_id("call_mock_"),
                   "arguments": json.dumps({"task_name": task_name, "message": message, "fork_turns": "none"})}])


def wait_agent_reply(timeout_ms=20000):
    """A ``collaboration.wait_agent`` call: the parent waits for its agents' news."""
    return Reply([{"type": "function_call", "name": "wait_agent", "namespace": "collaboration",
                   "call_id": _new_id("call_mock_"), "arguments": json.dumps({"timeout_ms": timeout_ms})}])


def error_reply(status, message, times=1, type=None, code=None, headers=None, **fields):
    """An HTTP error with an OpenAI error body, for ``times`` requests (None: for good);
    ``fields`` go into the body's ``error`` object too."""
    if times is not None and times < 1:
        raise ValueError("times must be >= 1 or None")
    if type is None:
        type = {400: "invalid_request_error", 401: "invalid_request_error",
                403: "permission_error", 404: "invalid_request_error",
                429: "rate_limit_error"}.get(status, "server_error")
    return Reply(status=status, error=(type, code, message), times=times, headers=headers, fields=fields)


def usage_limit_reply(resets_at, plan_type="plus", times=1):
    """What ChatGPT's Codex service answers a plan that used up its window: 429 with
    ``type: usage_limit_reached``, the plan and the reset time (epoch seconds), and the window's
    usage headers."""
    return error_reply(429, "The usage limit has been reached", times=times, type="usage_limit_reached",
                       headers=usage_headers(100.0, 300, resets_at), plan_type=plan_type,
                       resets_at=int(resets_at), resets_in_seconds=max(0, int(resets_at - time.time())))


def usage_headers(used_percent, window_minutes, resets_at):
    """The rate-limit headers the Codex service sends with every answer (primary window)."""
    return {"x-codex-primary-used-percent": str(used_percent),
            "x-codex-primary-window-minutes": str(window_minutes),
            "x-codex-primary-reset-at": str(int(resets_at))}


def failed_reply(message="mock stream failure"):
    """A 200 stream that ends with ``response.failed`` instead of ``response.completed``."""
    return Reply(failure=message)


def message_text(body):
    """All the text of the user and assistant messages in a request's ``input``, plus the
    output of tool calls (``function_call_output``, ``custom_tool_call_output``), joined by
    newlines. Developer messages (instructions) are left out; Codex's own
    ``<environment_context>`` user message is included."""
    parts = []
    for item in (body or {}).get("input", []):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ("user", "assistant"):
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(c.get("text", "") for c in content
                             if isinstance(c, dict) and c.get("type") in
                             ("input_text", "output_text", "text"))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, str):
                parts.append(output)
            elif isinstance(output, list):
                parts.extend(c.get("text", "") for c in output if isinstance(c, dict))
    return "\n".join(parts)


def _sse(data):
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class MockOpenAI(ScriptedServer):
    """Scripted Responses API on 127.0.0.1:<ephemeral port>; see the module docstring."""

    url_suffix = "/v1"
    request_id_header = "x-request-id"

    def __init__(self, script=()):
        super().__init__(script)
        self._routes = []  # (marker, replies) of child agents

    def route(self, marker, *replies):
        """Replies for a child agent whose task holds ``marker``, in order, beside the main
        script. A child's requests carry its task (as an ``agent_message``) and, unlike the
        parent's, no ``spawn_agent`` call."""
        with self._lock:
            self._routes.append((marker, list(replies)))

    def _take(self, body):
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        if not any(i.get("name") == "spawn_agent" for i in items):
            text = json.dumps(items)
            with self._lock:
                for marker, replies in self._routes:
                    if marker in text and replies:
                        self.requests.append(body)
                        self._lock.notify_all()
                        return replies.pop(0)
        return super()._take(body)

    def _default_reply(self):
        return text_reply(DEFAULT_TEXT)

    # -- HTTP ---------------------------------------------------------------------------

    def _app(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = urlsplit(environ.get("PATH_INFO") or "/").path
        headers = {k[5:].replace("_", "-").lower(): v
                   for k, v in environ.items() if k.startswith("HTTP_")}
        body = self._read_body(environ)
        is_turn = method == "POST" and path == "/v1/responses"
        with self._lock:
            self.log.append({"kind": "turn" if is_turn else "side", "method": method,
                             "path": path, "headers": headers, "body": body})
        if is_turn:
            return self._answer(self._take(body), body, start_response)
        if method == "HEAD":
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        if method == "GET" and path == "/v1/models":
            return self._json(start_response, 200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 1735689600, "owned_by": "mock"}
                for m in MODEL_IDS]})
        return self._json(start_response, 404, {"error": {
            "message": f"mock: no route {method} {path}", "type": "invalid_request_error",
            "param": None, "code": "not_found"}})


    def _answer(self, reply, body, start_response):
        if reply.error:
            err_type, code, message = reply.error
            return self._json(start_response, reply.status,
                              {"error": {"message": message, "type": err_type, "param": None,
                                         "code": code, **reply.fields}},
                              list(reply.headers.items()))
        model = (body.get("model") if isinstance(body, dict) else None) or MODEL_IDS[0]
        start_response("200 OK", [("Content-Type", "text/event-stream; charset=utf-8"),
                                  ("Cache-Control", "no-cache"),
                                  ("x-request-id", self._request_id()), *reply.headers.items()])
        return self._events(reply, model)

    def _events(self, reply, model):
        """The SSE body; each yielded event is written and flushed on its own."""
        with self._lock:
            self._open_streams += 1
        try:
            yield from self._event_list(reply, model)
        finally:  # also runs when the client hangs up (pywsgi closes the generator)
            with self._lock:
                self._open_streams -= 1

    def _response(self, response_id, model, status, output=(), usage=None, error=None):
        return {"id": response_id, "object": "response", "created_at": int(time.time()),
                "status": status, "model": model, "output": list(output), "usage": usage,
                "error": error, "incomplete_details": None}

    def _event_list(self, reply, model):
        response_id = _new_id("resp_mock_")
        yield _sse({"type": "response.created",
                    "response": self._response(response_id, model, "in_progress")})
        if reply.failure:
            yield _sse({"type": "response.failed", "response": self._response(
                response_id, model, "failed",
                error={"code": "server_error", "message": reply.failure})})
            return
        done = []
        for index, item in enumerate(reply.items):
            if item["type"] == "text":
                item_id = _new_id("msg_mock_")
                yield _sse({"type": "response.output_item.added", "output_index": index,
                            "item": {"type": "message", "id": item_id, "role": "assistant",
                                     "status": "in_progress", "content": []}})
                for n, chunk in enumerate(item["chunks"]):
                    if n and reply.delay and self._stopping.wait(reply.delay):
                        return  # stop(): end the stream where it is
                    yield _sse({"type": "response.output_text.delta", "item_id": item_id,
                                "output_index": index, "content_index": 0, "delta": chunk})
                full = {"type": "message", "id": item_id, "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "".join(item["chunks"]),
                                     "annotations": []}]}
            else:
                item_id = _new_id("fc_mock_" if item["type"] == "function_call" else "ctc_mock_")
                full = {**{k: v for k, v in item.items()}, "id": item_id, "status": "completed"}
                empty = "arguments" if item["type"] == "function_call" else "input"
                yield _sse({"type": "response.output_item.added", "output_index": index,
                            "item": {**full, empty: "", "status": "in_progress"}})
            yield _sse({"type": "response.output_item.done", "output_index": index,
                        "item": full})
            done.append(full)
        yield _sse({"type": "response.completed", "response": self._response(
            response_id, model, "completed", output=done, usage=dict(USAGE))})

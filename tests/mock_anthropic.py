"""A scripted mock of the Anthropic Messages API, for driving the real ``claude`` CLI in tests.

    mock = MockAnthropic(script=[text_reply("Hello from the mock.")])
    with mock:
        env = claude_env(home, mock.url)          # tests/peers.py
        ...run claude...
        body = mock.wait_for_requests(1)[0]
        assert "hello" in message_text(body)

Which requests consume the script
---------------------------------
Only *model-turn* requests do: ``POST /v1/messages`` whose body carries a non-empty ``tools``
list (claude 2.1.328 streams all of them). Each one takes the next scripted reply, is appended
to ``.requests`` (the parsed JSON body) and answered as SSE when ``stream`` is true, as one
JSON message otherwise. When the script is empty the answer is the text
``DEFAULT_TEXT`` ("mock: nothing scripted"), so a test that scripted too little fails on a
readable assertion instead of hanging.

Everything else is a *side request* and never touches the script or ``.requests``:

* ``POST /v1/messages`` without tools (the ``set_model`` probe with ``max_tokens: 1``, and any
  title/summary-style call): a short text message ``SIDE_TEXT``, streamed or not as asked;
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": <rough estimate>}``;
* ``GET /v1/models``: a one-model list; any ``HEAD``: 200 with no body;
* anything else: 404 with an Anthropic-style ``not_found_error`` body.

``MockAnthropic(reject_models={"bogus-model"})`` answers any ``/v1/messages`` request for one of
those models with 404 ``not_found_error``, as the real API does for an unknown model: the
``set_model`` probe then fails with ``not_found``, and a turn with that model ends in an error
(such a turn request is still recorded, but takes nothing from the script).

Every request, turn or side, is also appended to ``.log`` as a dict
``{"kind", "method", "path", "headers", "body"}`` (kind is ``"turn"`` or ``"side"``).

Replies
-------
* ``text_reply(*chunks, delay=0)``: one text block, one ``text_delta`` per chunk, ``delay``
  seconds between chunks (none before the first): ``text_reply(*["w "] * 40, delay=0.25)``
  is a slow stream a test can interrupt. A client that hangs up mid-stream ends it quietly.
* ``tool_use_reply(name, input, text=None, id=None)``: optional leading text block, then a
  ``tool_use`` block, ``stop_reason: "tool_use"``. The id (``.id``) is generated unless given.
* ``error_reply(status, type, message, times=1, headers=None)``: HTTP ``status`` with
  ``{"type": "error", "error": {"type": type, "message": message}}``. It answers ``times``
  consecutive turn requests (the CLI retries 401/429/5xx: with ``CLAUDE_CODE_MAX_RETRIES=N`` one
  failed turn makes N+1 requests), then the script moves on. ``times=None`` makes it sticky: it
  answers every later turn request and the replies after it are never reached.

Concurrency: the server runs in gevent greenlets of the calling process (the test process is
monkey-patched), so the caller must block cooperatively (gevent subprocess pipes, gevent.sleep,
patched locks), which every patched call does. ``.add()``, ``.requests`` and
``wait_for_requests()`` may be used from any greenlet or patched thread. ``stop()`` closes the
listener, ends open streams at their next chunk and kills the remaining handlers.
"""
import json
import re
import uuid
from urllib.parse import urlsplit

from tests.scripted_server import ScriptedServer

DEFAULT_TEXT = "mock: nothing scripted"
SIDE_TEXT = "mock side reply"
MODEL_IDS = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-4-5")


def _new_id(prefix, n=24):
    return prefix + uuid.uuid4().hex[:n]


class Reply:
    """One scripted answer to a model-turn request. Build it with the functions below."""

    def __init__(self, blocks=(), stop_reason="end_turn", delay=0.0,
                 status=200, error=None, times=1, headers=None):
        self.blocks = list(blocks)  # [{"type": "text", "chunks": [...]} | tool_use block]
        self.stop_reason = stop_reason
        self.delay = delay
        self.status = status
        self.error = error  # (type, message) for an error reply
        self.times = times
        self.headers = dict(headers or {})

    @property
    def id(self):
        """The id of the reply's tool_use block (None when it has none)."""
        for block in self.blocks:
            if block["type"] == "tool_use":
                return block["id"]
        return None

    def __repr__(self):
        if self.error:
            return f"<error_reply {self.status} {self.error[0]} times={self.times}>"
        return f"<reply {[b['type'] for b in self.blocks]} {self.stop_reason}>"


def text_reply(*chunks, delay=0.0):
    """A text answer streamed as one text_delta per chunk, ``delay`` seconds apart."""
    if not chunks:
        raise ValueError("text_reply needs at least one chunk")
    return Reply([{"type": "text", "chunks": [str(c) for c in chunks]}], delay=delay)


def tool_use_reply(name, input, text=None, id=None):
    """Optional leading text, then a tool_use block; stop_reason is "tool_use"."""
    blocks = [{"type": "text", "chunks": [text]}] if text else []
    blocks.append({"type": "tool_use", "id": id or _new_id("toolu_mock_"), "name": name,
                   "input": dict(input)})
    return Reply(blocks, stop_reason="tool_use")


def unified_headers(status, resets_at, utilization, claim="five_hour"):
    """The ``anthropic-ratelimit-unified-*`` headers the API sends a subscription login (Claude
    Code reads them only with an OAuth token): the overall status and the five-hour window's."""
    return {"anthropic-ratelimit-unified-status": status,
            "anthropic-ratelimit-unified-reset": str(int(resets_at)),
            "anthropic-ratelimit-unified-representative-claim": claim,
            "anthropic-ratelimit-unified-5h-status": status,
            "anthropic-ratelimit-unified-5h-reset": str(int(resets_at)),
            "anthropic-ratelimit-unified-5h-utilization": str(utilization)}


def usage_limit_reply(resets_at, times=1):
    """A subscription that used up its five-hour window: 429 with the unified headers saying
    ``rejected`` and when the window resets (epoch seconds)."""
    return error_reply(429, "rate_limit_error", "This request would exceed your account's rate limit.",
                       times=times, headers=unified_headers("rejected", resets_at, 1.0))


def error_reply(status, type, message, times=1, headers=None):
    """An HTTP error with an Anthropic error body, for ``times`` requests (None: for good)."""
    if times is not None and times < 1:
        raise ValueError("times must be >= 1 or None")
    return Reply(status=status, error=(type, message), times=times, headers=headers)


def message_text(body):
    """All the text a request body carries in its messages (strings, text blocks, tool results)."""
    parts = []

    def walk(content):
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    if block.get("type") == "text":
                        parts.append(block.get("text", ""))
                    elif block.get("type") == "tool_result":
                        walk(block.get("content"))

    for msg in body.get("messages", []):
        walk(msg.get("content"))
    return "\n".join(parts)


def _sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


PLAN_FILE = "<the plan file>"  # a tool call's file_path: the plan file plan mode named in the request


def _with_plan_file(reply, body):
    """Plan mode tells the model "create your plan at <path>", a name the CLI makes up per
    session: a scripted tool call on PLAN_FILE gets that path from the request."""
    blocks = getattr(reply, "blocks", None) or []
    if not any(b.get("type") == "tool_use" and (b.get("input") or {}).get("file_path") == PLAN_FILE for b in blocks):
        return reply
    text = json.dumps(body.get("system")) + json.dumps(body.get("messages"))
    found = re.search(r"create your plan at (\S+?\.md)|plan file (?:exists )?at (\S+?\.md)", text)
    for block in blocks:
        if block.get("type") == "tool_use" and block["input"].get("file_path") == PLAN_FILE and found:
            block["input"] = {**block["input"], "file_path": found.group(1) or found.group(2)}
    return reply


class MockAnthropic(ScriptedServer):
    """Scripted Messages API on 127.0.0.1:<ephemeral port>; see the module docstring."""

    def __init__(self, script=(), reject_models=()):
        super().__init__(script)
        self.reject_models = set(reject_models)
        self._routes: list[tuple[str, list]] = []

    def route(self, marker: str, *replies) -> None:
        """Replies for a conversation whose first message holds ``marker`` (a subagent's, told
        apart by its prompt), in order; it runs beside the main script, not in it."""
        self._routes.append((marker, list(replies)))

    def _take(self, body):
        messages = body.get("messages") or [{}]
        first = json.dumps(messages[0].get("content") if isinstance(messages[0], dict) else messages[0])
        for marker, replies in self._routes:
            if marker in first and replies:
                with self._lock:
                    self.requests.append(body)
                    self._lock.notify_all()
                    return _with_plan_file(replies.pop(0), body)
        return _with_plan_file(super()._take(body), body)

    def _default_reply(self):
        return text_reply(DEFAULT_TEXT)

    # -- HTTP ---------------------------------------------------------------------------

    def _app(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = urlsplit(environ.get("PATH_INFO") or "/").path
        headers = {k[5:].replace("_", "-").lower(): v
                   for k, v in environ.items() if k.startswith("HTTP_")}
        body = self._read_body(environ)
        is_turn = (method == "POST" and path == "/v1/messages" and isinstance(body, dict)
                   and bool(body.get("tools")))
        with self._lock:
            self.log.append({"kind": "turn" if is_turn else "side", "method": method,
                             "path": path, "headers": headers, "body": body})
        if (method == "POST" and path == "/v1/messages" and isinstance(body, dict)
                and body.get("model") in self.reject_models):
            if is_turn:
                with self._lock:
                    self.requests.append(body)
                    self._lock.notify_all()
            return self._json(start_response, 404, {"type": "error", "error": {
                "type": "not_found_error", "message": f"model: {body['model']}"}})
        if is_turn:
            return self._answer(self._take(body), body, start_response)
        if method == "HEAD":
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        if method == "POST" and path == "/v1/messages":
            return self._answer(text_reply(SIDE_TEXT), body or {}, start_response)
        if method == "POST" and path == "/v1/messages/count_tokens":
            return self._json(start_response, 200,
                              {"input_tokens": max(1, len(json.dumps(body)) // 4)})
        if method == "GET" and path == "/v1/models":
            data = [{"type": "model", "id": m, "display_name": m,
                     "created_at": "2025-01-01T00:00:00Z"} for m in MODEL_IDS]
            return self._json(start_response, 200, {"data": data, "has_more": False,
                                                    "first_id": data[0]["id"],
                                                    "last_id": data[-1]["id"]})
        return self._json(start_response, 404, {
            "type": "error",
            "error": {"type": "not_found_error", "message": f"mock: no route {method} {path}"}})


    def _answer(self, reply, body, start_response):
        if reply.error:
            err_type, message = reply.error
            return self._json(start_response, reply.status,
                              {"type": "error", "error": {"type": err_type, "message": message}},
                              list(reply.headers.items()))
        model = body.get("model") or MODEL_IDS[0]
        if not body.get("stream"):
            return self._json(start_response, 200, self._message(reply, model))
        start_response("200 OK", [("Content-Type", "text/event-stream; charset=utf-8"),
                                  ("Cache-Control", "no-cache"),
                                  ("request-id", self._request_id()), *reply.headers.items()])
        return self._events(reply, model)

    @staticmethod
    def _usage(output_tokens):
        return {"input_tokens": 10, "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def _message(self, reply, model):
        content = []
        for block in reply.blocks:
            if block["type"] == "text":
                content.append({"type": "text", "text": "".join(block["chunks"])})
            else:
                content.append(block)
        return {"id": _new_id("msg_mock_"), "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": reply.stop_reason,
                "stop_sequence": None, "usage": self._usage(5)}

    def _events(self, reply, model):
        """The SSE body; each yielded event is written and flushed on its own."""
        with self._lock:
            self._open_streams += 1
        try:
            yield from self._event_list(reply, model)
        finally:  # also runs when the client hangs up (pywsgi closes the generator)
            with self._lock:
                self._open_streams -= 1

    def _event_list(self, reply, model):
        yield _sse("message_start", {"type": "message_start", "message": {
            "id": _new_id("msg_mock_"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": self._usage(1)}})
        yield _sse("ping", {"type": "ping"})
        output_tokens = 1
        for index, block in enumerate(reply.blocks):
            if block["type"] == "text":
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                for n, chunk in enumerate(block["chunks"]):
                    if n and reply.delay and self._stopping.wait(reply.delay):
                        return  # stop(): end the stream where it is
                    output_tokens += 1
                    yield _sse("content_block_delta", {"type": "content_block_delta",
                                                       "index": index,
                                                       "delta": {"type": "text_delta",
                                                                 "text": chunk}})
            else:
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}})
                js = json.dumps(block["input"])
                half = len(js) // 2
                for part in (js[:half], js[half:]):  # two deltas, as partial JSON arrives
                    output_tokens += 1
                    yield _sse("content_block_delta", {"type": "content_block_delta",
                                                       "index": index,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": part}})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": reply.stop_reason,
                                               "stop_sequence": None},
                                     "usage": {"output_tokens": output_tokens}})
        yield _sse("message_stop", {"type": "message_stop"})

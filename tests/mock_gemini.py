"""A scripted mock of the Gemini API (``generativelanguage.googleapis.com``), for driving the real
Gemini CLI (``gemini --acp``) in tests.

    mock = MockGemini(script=[text_reply("Hello from the mock.")])
    with mock:
        env = gemini_env(home, mock.url)   # tests/acp_peers.py: GOOGLE_GEMINI_BASE_URL=mock.url
        ...run `gemini --acp`...
        body = mock.wait_for_requests(1)[0]
        assert "hello" in message_text(body)

Which requests consume the script
---------------------------------
Only *model-turn* requests do: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``
(every turn of Gemini CLI 0.61.0 is streamed). Each one takes the next scripted reply, is
appended to ``.requests`` (the parsed JSON body) and answered as SSE. When the script is empty
the answer is the text ``DEFAULT_TEXT``, so a test that scripted too little fails on a readable
assertion instead of hanging.

Everything else is a *side request*: ``:generateContent`` (not streamed) is what the CLI asks
for beside a turn — its model router's classifier above all (``{"reasoning", "model_choice":
"flash"|"pro"}`` by a JSON schema), and the other small JSON questions it puts to a model — and is
answered with ``SIDE_ANSWER``, one JSON text holding every field those questions' schemas require;
``:countTokens`` a count; anything else a 404 with a Google-style error body. Every request is
also in ``.log`` (``{"kind", "method", "path", "headers", "body"}``, kind ``"turn"`` or ``"side"``).

The SSE stream
--------------
``data: <GenerateContentResponse>`` events, one per chunk::

    {"candidates": [{"content": {"role": "model", "parts": [{"text": <chunk>}]}, "index": 0}],
     "modelVersion": <model>, "responseId": ...}

a function call is one chunk whose part is ``{"functionCall": {"name", "args"}}``; the last chunk
carries ``finishReason: "STOP"`` and ``usageMetadata``.

Replies
-------
* ``text_reply(*chunks, delay=0)``: one model message, a chunk an event, ``delay`` s apart.
* ``call_reply(name, **args)``: one function call of Gemini's own tool ``name``;
  ``shell_reply(command)`` its shell tool (``run_shell_command``). Gemini runs it (after a
  permission, if asked) and sends its output in a new turn request: script the reply to that too.
* ``error_reply(status, message, times=1)``: HTTP ``status`` with ``{"error": {"code",
  "message", "status"}}``; ``times=None`` sticky.
"""
import json
import uuid
from urllib.parse import urlsplit

from tests.scripted_server import ScriptedServer

DEFAULT_TEXT = "mock: nothing scripted"
SHELL_TOOL = "run_shell_command"
USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
# One answer for every structured side question Gemini CLI 0.61.0 asks: the router's classifier
# (reasoning, model_choice), its numerical one (complexity_*), the next-speaker check. "flash"
# keeps the router on the flash model; a low score does the same for the numerical one.
SIDE_ANSWER = {"reasoning": "mock", "model_choice": "flash", "complexity_reasoning": "mock",
               "complexity_score": 10, "next_speaker": "user"}
STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class Reply:
    """One scripted answer to a model-turn request. Build it with the functions below."""

    def __init__(self, parts=(), delay=0.0, status=200, error=None, times=1):
        self.parts = list(parts)  # [{"text": chunk} | {"functionCall": {...}}], one an event
        self.delay = delay
        self.status = status
        self.error = error  # message of an HTTP error reply
        self.times = times

    def __repr__(self):
        if self.error:
            return f"<error_reply {self.status} {self.error!r} times={self.times}>"
        return f"<reply {[next(iter(p)) for p in self.parts]}>"


def text_reply(*chunks, delay=0.0):
    """A model message streamed as one event per chunk, ``delay`` s apart."""
    if not chunks:
        raise ValueError("text_reply needs at least one chunk")
    return Reply([{"text": chunk} for chunk in chunks], delay=delay)


def call_reply(name, **args):
    """A call of one of Gemini CLI's own tools (run_shell_command, write_file, ...)."""
    return Reply([{"functionCall": {"name": name, "args": args}}])


def shell_reply(command, description=None):
    args = {"command": command, **({"description": description} if description else {})}
    return call_reply(SHELL_TOOL, **args)


def error_reply(status, message, times=1):
    if times is not None and times < 1:
        raise ValueError("times must be >= 1 or None")
    return Reply(status=status, error=message, times=times)


def message_text(body):
    """All the text of a request's ``contents`` (the user's and the model's turns), with the
    output of function calls (``functionResponse``) as JSON, joined by newlines. The system
    instruction is left out."""
    parts = []
    for content in (body or {}).get("contents") or []:
        for part in (content.get("parts") or []) if isinstance(content, dict) else []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif "functionResponse" in part:
                parts.append(json.dumps(part["functionResponse"]))
    return "\n".join(parts)


def _chunk(model, parts, last=False):
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk = {"candidates": [candidate], "modelVersion": model, "responseId": uuid.uuid4().hex[:16]}
    if last:
        candidate["finishReason"] = "STOP"
        chunk["usageMetadata"] = dict(USAGE)
    return f"data: {json.dumps(chunk)}\r\n\r\n".encode()


class MockGemini(ScriptedServer):
    """Scripted Gemini API on 127.0.0.1:<ephemeral port>; see the module docstring. ``.url`` is
    the base URL (GOOGLE_GEMINI_BASE_URL): the CLI adds ``/v1beta/models/...`` itself."""

    request_id_header = "x-goog-request-id"

    def _default_reply(self):
        return text_reply(DEFAULT_TEXT)

    def _app(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = urlsplit(environ.get("PATH_INFO") or "/").path
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        body = self._read_body(environ)
        model, _, action = path.rpartition("/")[2].partition(":")
        is_turn = method == "POST" and action == "streamGenerateContent"
        with self._lock:
            self.log.append({"kind": "turn" if is_turn else "side", "method": method, "path": path,
                             "headers": headers, "body": body})
        if is_turn:
            return self._answer(self._take(body), model, start_response)
        if method == "POST" and action == "generateContent":
            return self._json(start_response, 200, {
                "candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(SIDE_ANSWER)}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": dict(USAGE), "modelVersion": model})
        if method == "POST" and action == "countTokens":
            return self._json(start_response, 200, {"totalTokens": len(json.dumps(body or {})) // 4})
        return self._error(start_response, 404, f"mock: no route {method} {path}")

    def _error(self, start_response, status, message):
        return self._json(start_response, status, {"error": {
            "code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}})

    def _answer(self, reply, model, start_response):
        if reply.error:
            return self._error(start_response, reply.status, reply.error)
        start_response("200 OK", [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                  (self.request_id_header, self._request_id())])
        return self._events(reply, model)

    def _events(self, reply, model):
        """The SSE body; each yielded event is written and flushed on its own."""
        with self._lock:
            self._open_streams += 1
        try:
            for n, part in enumerate(reply.parts):
                if n and reply.delay and self._stopping.wait(reply.delay):
                    return  # stop(): end the stream where it is
                yield _chunk(model, [part], last=n == len(reply.parts) - 1)
        finally:  # also runs when the client hangs up (pywsgi closes the generator)
            with self._lock:
                self._open_streams -= 1

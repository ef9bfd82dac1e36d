"""What both mock model servers share: a scripted queue of replies behind a gevent WSGI server.

A subclass names its reply class, its default reply and the path suffix of its base URL, and
answers requests in ``_app`` (taking each model-turn request's reply with ``_take``).
"""
import copy
import gzip
import http
import itertools
import json
import threading
import uuid
from collections import deque

from gevent import pool, pywsgi


def status_line(status):
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = {529: "Overloaded"}.get(status, "Error")
    return f"{status} {phrase}"


class ScriptedServer:
    url_suffix = ""
    request_id_header = "request-id"  # the header each API names its request ids in

    def __init__(self, script=()):
        self._lock = threading.Condition()
        self._script = deque(script)
        self._stopping = threading.Event()
        self._server = None
        self._counter = itertools.count(1)
        self._open_streams = 0
        self.requests = []  # parsed bodies of model-turn requests, in arrival order
        self.log = []  # every request: {"kind", "method", "path", "headers", "body"}
        self.url = None

    # -- life cycle ---------------------------------------------------------------------

    def start(self):
        if self._server is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._stopping.clear()
        self._server = pywsgi.WSGIServer(("127.0.0.1", 0), self._app, spawn=pool.Pool(256), log=None)
        self._server.start()
        self.url = f"http://127.0.0.1:{self._server.server_port}{self.url_suffix}"
        return self

    def stop(self):
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # slow streams end at their next chunk
        server.stop(timeout=0.5)  # then idle keep-alive handlers are killed

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- script and records -------------------------------------------------------------

    def add(self, *replies):
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    @property
    def remaining(self):
        """How many scripted replies are still waiting (a sticky error counts as one)."""
        with self._lock:
            return len(self._script)

    @property
    def open_streams(self):
        """How many streamed answers are being written right now (a cut stream counts until the
        mock's next write to it fails)."""
        with self._lock:
            return self._open_streams

    def wait_for_requests(self, n, timeout=10.0):
        """Block until at least ``n`` model-turn requests arrived; return a copy of them."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= n, timeout):
                seen = [(e["kind"], e["method"], e["path"]) for e in self.log]
                raise TimeoutError(f"mock got {len(self.requests)} model-turn requests, "
                                   f"wanted {n} within {timeout}s; all requests: {seen}")
            return list(self.requests)

    def _default_reply(self):
        raise NotImplementedError

    def _one_shot(self, reply):
        """A copy of a repeated error reply, handed out so the queued one's repr stays truthful."""
        clone = copy.copy(reply)
        clone.times = 1
        return clone

    def _take(self, body):
        """Record a model-turn request and pick its reply."""
        with self._lock:
            self.requests.append(body)
            self._lock.notify_all()
            if not self._script:
                return self._default_reply()
            reply = self._script[0]
            if reply.error and reply.times is None:
                return reply  # sticky
            if reply.error and reply.times > 1:
                reply.times -= 1
                return self._one_shot(reply)
            return self._script.popleft()

    def _app(self, environ, start_response):
        raise NotImplementedError

    # -- HTTP helpers -------------------------------------------------------------------

    @staticmethod
    def _read_body(environ):
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        raw = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
        if not raw:
            return None
        encoding = environ.get("HTTP_CONTENT_ENCODING", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "zstd":  # Codex compresses only for the OpenAI backend; just in case
            return {"_undecoded": "zstd", "size": len(raw)}
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _request_id(self):
        return f"req_mock_{next(self._counter):04d}{uuid.uuid4().hex[:12]}"

    def _json(self, start_response, status, obj, extra_headers=()):
        data = json.dumps(obj).encode()
        start_response(status_line(status), [
            ("Content-Type", "application/json"), ("Content-Length", str(len(data))),
            (self.request_id_header, self._request_id()), *extra_headers])
        return [data]

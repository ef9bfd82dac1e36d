"""The real claude CLI against tests/mock_anthropic.py: proves the mock and tests/peers.py.

Every wait has a timeout and every claude process is ended in a finally. No test asserts a
timing; the delays in the script only make streams slow enough to observe.
"""
import json
import subprocess
import uuid

import gevent
import gevent.queue
import pytest

from tests.mock_anthropic import (DEFAULT_TEXT, MockAnthropic, error_reply, message_text,
                                  text_reply, tool_use_reply)
from tests.peers import CLAUDE, claude_env, require_peers

pytestmark = pytest.mark.peers

CLAUDE_ARGS = ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
               "--verbose", "--include-partial-messages", "--replay-user-messages",
               "--permission-prompt-tool", "stdio"]
TIMEOUT = 30


class Claude:
    """One claude process in stream-json mode; frames are read by a greenlet into a queue."""

    def __init__(self, env, cwd, args=()):
        self.proc = subprocess.Popen([str(CLAUDE), *CLAUDE_ARGS, *args], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.frames = []
        self._queue = gevent.queue.Queue()
        self._reader = gevent.spawn(self._read)
        self._stderr = gevent.spawn(self.proc.stderr.read)

    def _read(self):
        for line in self.proc.stdout:
            try:
                frame = json.loads(line)
            except ValueError:
                frame = {"type": "_not_json", "line": line.decode("utf-8", "replace")}
            self._queue.put(frame)
        self._queue.put(None)

    def send(self, frame):
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())
        self.proc.stdin.flush()

    def user(self, text):
        self.send({"type": "user", "message": {"role": "user", "content": text},
                   "uuid": str(uuid.uuid4())})

    def wait_for(self, pred, timeout=TIMEOUT):
        """Read frames until one satisfies ``pred``; return it. Fails on timeout or EOF."""
        try:
            with gevent.Timeout(timeout):
                while True:
                    frame = self._queue.get()
                    if frame is None:
                        self._queue.put(None)  # keep EOF visible for later waits
                        self._fail("claude closed stdout")
                    self.frames.append(frame)
                    if pred(frame):
                        return frame
        except gevent.Timeout:
            self._fail(f"no matching frame within {timeout}s")

    def _fail(self, why):
        tail = "\n".join(json.dumps(f)[:300] for f in self.frames[-15:])
        pytest.fail(f"{why}; last frames:\n{tail}\nstderr: {self.stderr_text()}")

    def stderr_text(self):
        return (self._stderr.value or b"").decode("utf-8", "replace")[-2000:] \
            if self._stderr.ready() else "(still open)"

    def close(self, timeout=15):
        """Close stdin, let claude exit, kill it if it does not; return the exit code."""
        try:
            if not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self._reader.join(timeout=5)
            self._stderr.join(timeout=5)


def is_type(kind, subtype=None):
    return lambda f: f.get("type") == kind and (subtype is None or
                                                (f.get("request") or f).get("subtype") == subtype)


def text_delta(f):
    return (f.get("type") == "stream_event"
            and f["event"].get("type") == "content_block_delta"
            and f["event"]["delta"].get("type") == "text_delta")


@pytest.fixture
def mock():
    with MockAnthropic() as m:
        yield m


@pytest.fixture
def claude(tmp_path, mock):
    """Factory: start claude against the mock; every process is closed or killed at the end."""
    require_peers()
    started = []

    def start(*args):
        cwd = tmp_path / "cwd"
        cwd.mkdir(exist_ok=True)
        proc = Claude(claude_env(tmp_path / "home", mock.url), cwd, args)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.close()


def test_plain_text_turn(mock, claude):
    mock.add(text_reply("Hello ", "from ", "the mock."))
    cc = claude()
    cc.user("hello there, mock")
    result = cc.wait_for(is_type("result"))
    assert result["is_error"] is False
    assert result["result"] == "Hello from the mock."
    assert cc.close() == 0

    (body,) = mock.wait_for_requests(1)
    assert "hello there, mock" in message_text(body)
    assert body["stream"] is True and body["tools"]
    assert mock.remaining == 0


def test_slow_stream_delivers_several_deltas(mock, claude):
    mock.add(text_reply(*[f"w{i} " for i in range(8)], delay=0.05))
    cc = claude()
    cc.user("stream slowly")
    result = cc.wait_for(is_type("result"))
    deltas = [f["event"]["delta"]["text"] for f in cc.frames if text_delta(f)]
    assert len(deltas) == 8
    assert "".join(deltas) == result["result"] == "".join(f"w{i} " for i in range(8))


def test_interrupt_mid_stream(mock, claude):
    # 40 chunks 0.25 s apart: far longer than the test, so the interrupt lands mid-stream.
    mock.add(text_reply(*["word "] * 40, delay=0.25), text_reply("after the interrupt"))
    cc = claude()
    cc.user("talk for a while")
    cc.wait_for(text_delta)
    cc.wait_for(text_delta)
    cc.send({"type": "control_request", "request_id": "int_1",
             "request": {"subtype": "interrupt"}})
    result = cc.wait_for(is_type("result"))
    assert result["is_error"] is True
    assert result["terminal_reason"] == "aborted_streaming"

    cc.user("next question")
    result = cc.wait_for(is_type("result"))
    assert result["result"] == "after the interrupt"
    assert "next question" in message_text(mock.wait_for_requests(2)[1])


def test_tool_use_asks_permission_and_runs(mock, claude, tmp_path):
    # A read-only command such as a bare `echo` runs without asking; `touch` must ask.
    command = "touch made_by_tool.txt && echo tool-ran-ok"
    tool = tool_use_reply("Bash", {"command": command, "description": "Make a file"},
                          text="Let me run it.")
    mock.add(tool, text_reply("The tool said tool-ran-ok."))
    cc = claude()
    cc.user("run the echo")

    req = cc.wait_for(is_type("control_request", "can_use_tool"))
    assert req["request"]["tool_name"] == "Bash"
    assert req["request"]["tool_use_id"] == tool.id
    assert req["request"]["input"]["command"] == command
    cc.send({"type": "control_response", "response": {
        "subtype": "success", "request_id": req["request_id"],
        "response": {"behavior": "allow", "updatedInput": req["request"]["input"]}}})

    def tool_result(f):
        content = f.get("message", {}).get("content") if f.get("type") == "user" else None
        return isinstance(content, list) and any(
            b.get("type") == "tool_result" and b.get("tool_use_id") == tool.id for b in content)

    frame = cc.wait_for(tool_result)
    block = next(b for b in frame["message"]["content"] if b.get("type") == "tool_result")
    assert block["is_error"] is False
    assert "tool-ran-ok" in json.dumps(block["content"])
    assert (tmp_path / "cwd" / "made_by_tool.txt").exists()

    result = cc.wait_for(is_type("result"))
    assert result["is_error"] is False
    assert result["result"] == "The tool said tool-ran-ok."

    first, second = mock.wait_for_requests(2)
    assert "run the echo" in message_text(first)
    assert "tool-ran-ok" in message_text(second)  # the tool_result went back to the model


def test_401_ends_in_error_result(mock, claude):
    # CLAUDE_CODE_MAX_RETRIES=1 (claude_env): one request and one retry.
    mock.add(error_reply(401, "authentication_error", "invalid x-api-key", times=2),
             text_reply("works again"))
    cc = claude()
    cc.user("hello")
    result = cc.wait_for(is_type("result"))
    assert result["is_error"] is True
    assert result["api_error_status"] == 401
    assert len(mock.wait_for_requests(2)) == 2
    assert mock.remaining == 1  # the error used up its two answers, nothing more

    cc.user("try again")
    result = cc.wait_for(is_type("result"))
    assert (result["is_error"], result["result"]) == (False, "works again")


def test_sticky_error_and_server_error(mock, claude):
    mock.add(error_reply(500, "api_error", "Internal server error", times=None))
    cc = claude()
    cc.user("hello")
    result = cc.wait_for(is_type("result"))
    assert result["is_error"] is True
    assert result["api_error_status"] == 500
    assert mock.remaining == 1  # sticky: still there


def test_empty_script_answers_default_text(mock, claude):
    cc = claude()
    cc.user("nobody scripted this")
    result = cc.wait_for(is_type("result"))
    assert result["result"] == DEFAULT_TEXT


def test_side_requests_do_not_consume_the_script(mock, claude):
    mock.add(text_reply("scripted answer"))
    cc = claude()
    # set_model with an id the CLI does not know probes the API (non-streaming, no tools).
    cc.send({"type": "control_request", "request_id": "m1",
             "request": {"subtype": "set_model", "model": "claude-mock-probe-1"}})
    answer = cc.wait_for(lambda f: f.get("type") == "control_response"
                         and f["response"].get("request_id") == "m1")
    assert answer["response"]["subtype"] == "success"
    # get_context_usage fans out into count_tokens calls.
    cc.send({"type": "control_request", "request_id": "c1",
             "request": {"subtype": "get_context_usage"}})
    cc.wait_for(lambda f: f.get("type") == "control_response"
                and f["response"].get("request_id") == "c1")
    assert mock.remaining == 1 and mock.requests == []
    paths = {(e["method"], e["path"]) for e in mock.log}
    assert ("POST", "/v1/messages") in paths
    assert ("POST", "/v1/messages/count_tokens") in paths

    cc.user("now a real turn")
    result = cc.wait_for(is_type("result"))
    assert result["result"] == "scripted answer"
    (body,) = mock.wait_for_requests(1)
    assert body["model"] == "claude-mock-probe-1"


def test_resume_sends_earlier_conversation(mock, claude):
    mock.add(text_reply("first answer"), text_reply("second answer"))
    cc = claude()
    cc.user("remember the word pelican")
    first = cc.wait_for(is_type("result"))
    assert cc.close() == 0

    cc = claude("--resume", first["session_id"])
    cc.user("what was the word?")
    result = cc.wait_for(is_type("result"))
    assert result["result"] == "second answer"
    assert result["session_id"] == first["session_id"]
    text = message_text(mock.wait_for_requests(2)[1])
    assert "remember the word pelican" in text and "first answer" in text


def test_mock_alone_side_routes(mock):
    """No claude here: the routes a test may hit by hand."""
    import urllib.request

    def call(method, path, body=None):
        req = urllib.request.Request(mock.url + path, method=method,
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    assert call("HEAD", "/")[0] == 200
    status, data = call("GET", "/v1/models")
    assert status == 200 and json.loads(data)["data"]
    status, data = call("POST", "/v1/messages/count_tokens?beta=true", {"messages": []})
    assert status == 200 and json.loads(data)["input_tokens"] >= 1
    status, data = call("POST", "/v1/messages", {"max_tokens": 1, "messages": []})
    assert status == 200 and json.loads(data)["content"][0]["type"] == "text"
    status, data = call("GET", "/nope")
    assert status == 404 and json.loads(data)["error"]["type"] == "not_found_error"
    assert mock.requests == [] and len(mock.log) == 5


def test_unknown_model_is_rejected_by_the_probe(mock, claude):
    mock.reject_models.add("claude-mock-missing")
    cc = claude()
    cc.send({"type": "control_request", "request_id": "m1",
             "request": {"subtype": "set_model", "model": "claude-mock-missing"}})
    answer = cc.wait_for(lambda f: f.get("type") == "control_response"
                         and f["response"].get("request_id") == "m1")
    assert answer["response"]["subtype"] == "error"
    assert answer["response"]["error_code"] == "not_found"


def wait_until(cond, timeout=10):
    with gevent.Timeout(timeout, AssertionError(f"condition not met within {timeout}s")):
        while not cond():
            gevent.sleep(0.02)


def open_stream(url):
    """Start a streamed model-turn request by hand; return the socket after the first event."""
    import socket
    from urllib.parse import urlsplit

    body = json.dumps({"model": "m", "stream": True, "max_tokens": 10,
                       "tools": [{"name": "t", "input_schema": {"type": "object"}}],
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    u = urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port), timeout=10)
    sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
    data = b""
    while b"event: message_start" not in data:
        chunk = sock.recv(4096)
        assert chunk, "stream closed before message_start"
        data += chunk
    return sock


def test_client_hanging_up_mid_stream_is_quiet(mock, capfd):
    mock.add(text_reply(*["x"] * 100, delay=0.05))
    sock = open_stream(mock.url)
    assert mock.open_streams == 1
    sock.close()
    wait_until(lambda: mock.open_streams == 0)
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "Error" not in err, err


def test_stop_ends_open_streams():
    mock = MockAnthropic([text_reply(*["x"] * 100, delay=0.5)]).start()
    sock = open_stream(mock.url)
    try:
        mock.stop()
        sock.settimeout(10)
        while sock.recv(4096):  # the stream ends (EOF) instead of running for 50 s
            pass
        assert mock.open_streams == 0
    finally:
        sock.close()

"""The real `codex app-server` against tests/mock_openai.py: proves the mock and codex_env.

Every wait has a timeout and every codex process is ended in a finally (it exits on stdin
EOF). No test asserts a timing; the delays in the script only make streams slow enough to
observe.
"""
import json
import subprocess

import gevent
import gevent.event
import pytest

from tests.integration.daemon import processes_with_env
from tests.mock_openai import (DEFAULT_TEXT, MockOpenAI, add_file_patch, error_reply,
                               failed_reply, message_text, patch_reply, shell_reply,
                               text_reply)
from tests.peers import CODEX, codex_env, require_peers

pytestmark = pytest.mark.peers

TIMEOUT = 30
SLOW = dict(delay=0.25)  # 40 chunks 0.25 s apart: far longer than any test needs


class Codex:
    """One `codex app-server` process; a greenlet reads its JSON lines into ``frames``.

    ``request()`` waits for the reply with its id anywhere in ``frames``; ``wait_for()``
    scans forward from a cursor, so successive waits see frames in the order codex sent them.
    """

    def __init__(self, env, cwd):
        self.proc = subprocess.Popen([str(CODEX), "app-server"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.frames = []
        self._cursor = 0
        self._ids = iter(range(1, 1_000_000))
        self._new_frame = gevent.event.Event()
        self._eof = False
        self._reader = gevent.spawn(self._read)
        self._stderr = gevent.spawn(self.proc.stderr.read)

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.frames.append(json.loads(line))
            except ValueError:
                self.frames.append({"_not_json": line.decode("utf-8", "replace")})
            self._new_frame.set()
        self._eof = True
        self._new_frame.set()

    def _wait(self, find, timeout, what):
        """Call ``find()`` after every new frame until it returns something; return that."""
        try:
            with gevent.Timeout(timeout):
                while True:
                    self._new_frame.clear()
                    found = find()
                    if found is not None:
                        return found
                    if self._eof:
                        self._fail(f"codex closed stdout while waiting for {what}")
                    self._new_frame.wait()
        except gevent.Timeout:
            self._fail(f"no {what} within {timeout}s")

    def send(self, frame):
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())
        self.proc.stdin.flush()

    def request_frame(self, method, params, timeout=TIMEOUT):
        """Send a request; return the whole reply frame (``result`` or ``error``)."""
        rid = next(self._ids)
        frame = {"id": rid, "method": method, "params": params}
        if params is None:
            del frame["params"]  # only to show codex refuses it: always send params
        self.send(frame)
        return self._wait(lambda: next((f for f in self.frames
                                        if f.get("id") == rid and "method" not in f), None),
                          timeout, f"reply to {method} (id {rid})")

    def request(self, method, params, timeout=TIMEOUT):
        """Send a request; return its ``result`` (an error reply fails the test)."""
        frame = self.request_frame(method, params, timeout)
        if "error" in frame:
            self._fail(f"{method} failed: {frame['error']}")
        return frame["result"]

    def error(self, method, params, timeout=TIMEOUT):
        """Send a request that must fail; return the error's message."""
        frame = self.request_frame(method, params, timeout)
        assert "error" in frame, f"{method} should have failed: {frame}"
        return frame["error"]["message"]

    def respond(self, request_id, result):
        self.send({"id": request_id, "result": result})

    def wait_for(self, pred, timeout=TIMEOUT, what="matching frame"):
        """The next frame after the cursor that satisfies ``pred``; the cursor moves past it."""
        def find():
            while self._cursor < len(self.frames):
                frame = self.frames[self._cursor]
                self._cursor += 1
                if pred(frame):
                    return frame
            return None
        return self._wait(find, timeout, what)

    def notification(self, method, timeout=TIMEOUT, **params):
        """The next notification ``method`` whose params include ``params``."""
        return self.wait_for(lambda f: f.get("method") == method and "id" not in f
                             and all(f["params"].get(k) == v for k, v in params.items()),
                             timeout, f"{method} {params or ''}")

    def server_request(self, method, timeout=TIMEOUT):
        """The next server→client request ``method`` (it carries an id)."""
        return self.wait_for(lambda f: f.get("method") == method and "id" in f,
                             timeout, f"server request {method}")

    # -- the usual exchanges ------------------------------------------------------------

    def initialize(self):
        result = self.request("initialize", {
            "clientInfo": {"name": "devhost-test", "title": "Devhost test", "version": "0.0.1"},
            "capabilities": {"experimentalApi": False}})
        self.send({"method": "initialized"})
        return result

    def start_thread(self, cwd, **params):
        return self.request("thread/start", {"cwd": str(cwd), **params})["thread"]["id"]

    def start_turn(self, thread_id, text, client_id=None, **params):
        if client_id is not None:
            params["clientUserMessageId"] = client_id
        return self.request("turn/start", {
            "threadId": thread_id, "input": [{"type": "text", "text": text, "text_elements": []}],
            **params})["turn"]["id"]

    def turn_completed(self, turn_id, timeout=TIMEOUT):
        return self.wait_for(lambda f: f.get("method") == "turn/completed"
                             and f["params"]["turn"]["id"] == turn_id,
                             timeout, f"turn/completed of {turn_id}")["params"]["turn"]

    def items(self, method, item_type):
        """Items of ``item_type`` in every ``method`` (item/started|completed) so far."""
        return [f["params"]["item"] for f in self.frames
                if f.get("method") == method and f["params"]["item"]["type"] == item_type]

    # -- diagnostics and shutdown -------------------------------------------------------

    def _fail(self, why):
        tail = "\n".join(json.dumps(f)[:300] for f in self.frames[-15:])
        pytest.fail(f"{why}; last frames:\n{tail}\nstderr: {self.stderr_text()}")

    def stderr_text(self):
        return (self._stderr.value or b"").decode("utf-8", "replace")[-2000:] \
            if self._stderr.ready() else "(still open)"

    def close(self, timeout=15):
        """Close stdin, let codex exit, kill it if it does not; return the exit code."""
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


def deltas(cx, turn_id):
    return "".join(f["params"]["delta"] for f in cx.frames
                   if f.get("method") == "item/agentMessage/delta"
                   and f["params"]["turnId"] == turn_id)


@pytest.fixture
def mock():
    with MockOpenAI() as m:
        yield m


@pytest.fixture
def work(tmp_path):
    """The project folder codex works in: a git checkout, trusted in config.toml."""
    path = tmp_path / "work"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


@pytest.fixture
def codex(tmp_path, mock, work):
    """Factory: start `codex app-server` (initialized) against the mock; every process is
    closed at the end, and none may outlive the test."""
    require_peers("codex")
    home = tmp_path / "home"
    started = []

    def start(approval_policy="untrusted"):
        env = codex_env(home, mock.url, approval_policy=approval_policy, project_dirs=[work])
        cx = Codex(env, work)
        started.append(cx)
        cx.initialize()
        return cx

    try:
        yield start
    finally:
        codes = [cx.close() for cx in started]
    assert codes == [0] * len(codes), f"exit codes {codes}"
    leftovers = processes_with_env(f"HOME={home}")
    assert not leftovers, f"processes outlived codex: {leftovers}"
    # Nothing but the mock was contacted, and only the mock's own routes were asked for.
    assert all(e["path"].startswith("/v1/") for e in mock.log), mock.log


def test_initialize_and_model_list_ask_nothing_of_the_provider(mock, codex):
    cx = codex()
    models = cx.request("model/list", {})
    ids = [m["id"] for m in models["data"]]
    assert "gpt-5.5" in ids and all(m["displayName"] for m in models["data"])
    assert cx.request("model/list", {"modelProvider": "mock"})["data"]
    # A request without params is refused: every request must carry them.
    frame = cx.request_frame("thread/loaded/list", None)
    assert "missing field `params`" in frame["error"]["message"]
    assert cx.request("thread/loaded/list", {})["data"] == []
    assert mock.log == []


def test_config_defaults_reach_the_thread(mock, codex, work):
    cx = codex(approval_policy="never")
    started = cx.request("thread/start", {"cwd": str(work)})
    assert (started["model"], started["modelProvider"]) == ("gpt-5.5", "mock")
    assert started["approvalPolicy"] == "never"
    assert started["sandbox"]["type"] == "workspaceWrite"
    cx.close()
    # codex refuses "untrusted" in config.toml: codex_env leaves it out, a thread asks for it.
    cx = codex(approval_policy="untrusted")
    assert cx.request("thread/start", {"cwd": str(work)})["approvalPolicy"] == "on-request"
    assert cx.request("thread/start", {"cwd": str(work), "approvalPolicy": "untrusted"}
                      )["approvalPolicy"] == "untrusted"
    assert mock.log == []


def test_text_turn_streams_deltas_and_completes(mock, codex, work):
    mock.add(text_reply("Hello ", "from ", "the mock."))
    cx = codex()
    thread = cx.start_thread(work, approvalPolicy="on-request")
    turn = cx.start_turn(thread, "Say hello", client_id="c-1")

    completed = cx.turn_completed(turn)
    assert completed["status"] == "completed" and completed["error"] is None
    assert [i["text"] for i in completed["items"]] == ["Hello from the mock."]
    assert deltas(cx, turn) == "Hello from the mock."
    (user,) = cx.items("item/completed", "userMessage")
    assert user["clientId"] == "c-1"
    assert user["content"][0]["text"] == "Say hello"
    (agent,) = cx.items("item/completed", "agentMessage")
    assert agent["text"] == "Hello from the mock."
    usage = next(f for f in cx.frames if f.get("method") == "thread/tokenUsage/updated")
    assert usage["params"]["tokenUsage"]["last"]["totalTokens"] == 120

    (body,) = mock.wait_for_requests(1)
    assert body["model"] == "gpt-5.5" and body["stream"] is True
    assert "exec_command" in [t.get("name") for t in body["tools"]]
    assert "Say hello" in message_text(body)
    (entry,) = mock.log
    assert entry["headers"]["authorization"] == "Bearer sk-mock-dummy"
    assert entry["headers"]["originator"] == "devhost-test"

    # The thread stays usable; an empty script answers the default text.
    turn = cx.start_turn(thread, "again")
    assert [i["text"] for i in cx.turn_completed(turn)["items"]] == [DEFAULT_TEXT]
    assert "Hello from the mock." in message_text(mock.wait_for_requests(2)[1])


def test_steer_a_slow_stream(mock, codex, work):
    mock.add(text_reply(*["word "] * 40, **SLOW), text_reply("Steered answer."))
    cx = codex()
    thread = cx.start_thread(work)
    turn = cx.start_turn(thread, "talk for a while", client_id="c-1")
    cx.notification("item/agentMessage/delta", turnId=turn)

    assert "expected active turn id" in cx.error("turn/steer", {
        "threadId": thread, "expectedTurnId": "not-the-turn",
        "input": [{"type": "text", "text": "x", "text_elements": []}]})
    steered = cx.request("turn/steer", {
        "threadId": thread, "expectedTurnId": turn, "clientUserMessageId": "c-2",
        "input": [{"type": "text", "text": "keep it short", "text_elements": []}]})
    assert steered == {"turnId": turn}

    completed = cx.turn_completed(turn)
    assert completed["status"] == "completed"
    assert [i["text"] for i in completed["items"]] == ["Steered answer."]
    users = cx.items("item/completed", "userMessage")
    assert [u["clientId"] for u in users] == ["c-1", "c-2"]
    first, second = mock.wait_for_requests(2)
    assert "keep it short" not in message_text(first)
    assert "talk for a while" in message_text(second) and "keep it short" in message_text(second)
    assert "no active turn to steer" in cx.error("turn/steer", {
        "threadId": thread, "expectedTurnId": turn,
        "input": [{"type": "text", "text": "late", "text_elements": []}]})


def test_interrupt_a_slow_stream(mock, codex, work):
    mock.add(text_reply(*["word "] * 40, **SLOW), text_reply("After the interrupt."))
    cx = codex()
    thread = cx.start_thread(work)
    turn = cx.start_turn(thread, "talk for a while")
    cx.notification("item/agentMessage/delta", turnId=turn)

    assert cx.request("turn/interrupt", {"threadId": thread, "turnId": turn}) == {}
    completed = cx.turn_completed(turn)
    assert completed["status"] == "interrupted" and completed["items"] == []
    assert cx.items("item/completed", "agentMessage") == []  # the partial one never completes

    turn = cx.start_turn(thread, "next question")
    assert [i["text"] for i in cx.turn_completed(turn)["items"]] == ["After the interrupt."]
    text = message_text(mock.wait_for_requests(2)[1])
    assert "<turn_aborted>" in text and "next question" in text
    assert "no active turn to interrupt" in cx.error("turn/interrupt",
                                                    {"threadId": thread, "turnId": turn})


def test_shell_command_approval_accepted(mock, codex, work):
    shell = shell_reply("touch a.txt && echo made-it", justification="mock needs it")
    mock.add(shell, text_reply("Finished."))
    cx = codex()
    thread = cx.start_thread(work, approvalPolicy="untrusted")
    turn = cx.start_turn(thread, "please touch a.txt")

    req = cx.server_request("item/commandExecution/requestApproval")
    assert isinstance(req["id"], int)
    params = req["params"]
    assert (params["threadId"], params["turnId"], params["itemId"]) == (thread, turn, shell.id)
    assert params["reason"] == "mock needs it"
    assert "touch a.txt" in params["command"]
    cx.respond(req["id"], {"decision": "accept"})

    cx.notification("serverRequest/resolved", requestId=req["id"])
    completed = cx.turn_completed(turn)
    assert completed["status"] == "completed"
    assert [i["text"] for i in completed["items"]] == ["Finished."]
    (command,) = cx.items("item/completed", "commandExecution")
    assert (command["id"], command["status"], command["exitCode"]) == (shell.id, "completed", 0)
    assert (work / "a.txt").exists()

    first, second = mock.wait_for_requests(2)
    outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [shell.id]
    assert "made-it" in message_text(second)


def test_shell_command_approval_declined(mock, codex, work):
    shell = shell_reply("touch b.txt")
    mock.add(shell, text_reply("Understood, not touching it."))
    cx = codex()
    thread = cx.start_thread(work, approvalPolicy="untrusted")
    turn = cx.start_turn(thread, "please touch b.txt")

    req = cx.server_request("item/commandExecution/requestApproval")
    assert req["params"]["itemId"] == shell.id
    cx.respond(req["id"], {"decision": "decline"})

    completed = cx.turn_completed(turn)
    assert completed["status"] == "completed"
    (command,) = cx.items("item/completed", "commandExecution")
    assert command["status"] == "declined"
    assert not (work / "b.txt").exists()
    assert "rejected by user" in message_text(mock.wait_for_requests(2)[1])


def test_apply_patch_approval(mock, codex, work):
    patch = patch_reply(add_file_patch("hello.txt", "hello from a patch"))
    mock.add(patch, text_reply("Patched."))
    cx = codex()
    thread = cx.start_thread(work, approvalPolicy="untrusted")
    turn = cx.start_turn(thread, "add hello.txt")

    req = cx.server_request("item/fileChange/requestApproval")
    assert isinstance(req["id"], int) and req["params"]["itemId"] == patch.id
    (started,) = cx.items("item/started", "fileChange")
    assert started["changes"][0]["path"] == str(work / "hello.txt")
    cx.respond(req["id"], {"decision": "accept"})

    assert cx.turn_completed(turn)["status"] == "completed"
    (change,) = cx.items("item/completed", "fileChange")
    assert change["status"] == "completed"
    assert (work / "hello.txt").read_text() == "hello from a patch\n"
    second = mock.wait_for_requests(2)[1]
    assert [i["call_id"] for i in second["input"]
            if i.get("type") == "custom_tool_call_output"] == [patch.id]


@pytest.mark.parametrize("reply, expect", [
    (error_reply(401, "mock says the key is wrong"),
     lambda e: "401" in e["message"] and "mock says the key is wrong" in e["message"]),
    (error_reply(500, "mock internal failure"),
     lambda e: e["message"] and e["codexErrorInfo"] == "internalServerError"),
    (failed_reply("mock stream failure"),
     lambda e: "mock stream failure" in e["message"]),
], ids=["401", "500", "response.failed"])
def test_provider_errors_fail_the_turn(mock, codex, work, reply, expect):
    mock.add(reply, text_reply("Recovered."))
    cx = codex()
    thread = cx.start_thread(work)
    turn = cx.start_turn(thread, "trigger an error")

    error = cx.notification("error", turnId=turn)["params"]
    assert error["willRetry"] is False
    assert expect(error["error"]), error
    completed = cx.turn_completed(turn)
    assert completed["status"] == "failed"
    assert completed["error"] == error["error"]
    assert len(mock.requests) == 1  # request_max_retries = stream_max_retries = 0

    turn = cx.start_turn(thread, "try again")  # the thread stays usable
    assert [i["text"] for i in cx.turn_completed(turn)["items"]] == ["Recovered."]


def test_sticky_error_answers_every_turn(mock, codex, work):
    mock.add(error_reply(401, "still wrong", times=None))
    cx = codex()
    thread = cx.start_thread(work)
    for text in ("one", "two"):
        turn = cx.start_turn(thread, text)
        assert cx.turn_completed(turn)["status"] == "failed"
    assert len(mock.requests) == 2 and mock.remaining == 1


def test_resume_in_a_new_process_sends_the_earlier_conversation(mock, codex, work):
    mock.add(text_reply("The word is pelican."), text_reply("Second answer."))
    cx = codex()
    thread = cx.start_thread(work)
    turn = cx.start_turn(thread, "remember the word pelican", client_id="c-first")
    assert cx.turn_completed(turn)["status"] == "completed"
    assert cx.close() == 0

    cx = codex()
    assert f"thread not found: {thread}" in cx.error("turn/start", {
        "threadId": thread, "input": [{"type": "text", "text": "x", "text_elements": []}]})
    resumed = cx.request("thread/resume", {"threadId": thread})
    assert resumed["thread"]["id"] == thread
    items = [i for t in resumed["thread"]["turns"] for i in t["items"]]
    assert [i.get("clientId") for i in items if i["type"] == "userMessage"] == ["c-first"]
    turn = cx.start_turn(thread, "what was the word?")
    assert [i["text"] for i in cx.turn_completed(turn)["items"]] == ["Second answer."]

    text = message_text(mock.wait_for_requests(2)[1])
    assert "remember the word pelican" in text
    assert "The word is pelican." in text
    assert "what was the word?" in text


# -- the mock alone ---------------------------------------------------------------------

def call(url, method, path, body=None):
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url.removesuffix("/v1") + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def sse_events(data):
    return [json.loads(line[6:]) for line in data.decode().splitlines()
            if line.startswith("data: ")]


def test_mock_alone_routes_and_event_sequence(mock):
    """No codex here: side routes never consume the script; the SSE sequence of each reply."""
    assert call(mock.url, "HEAD", "/")[0] == 200
    status, data = call(mock.url, "GET", "/v1/models")
    assert status == 200 and json.loads(data)["data"]
    status, data = call(mock.url, "GET", "/nope")
    assert status == 404 and json.loads(data)["error"]["code"] == "not_found"
    assert mock.requests == [] and len(mock.log) == 3

    shell = shell_reply("ls", justification="why", escalated=True)
    mock.add(text_reply("a", "b"), shell, error_reply(429, "slow down", times=2))
    body = {"model": "gpt-5.5", "stream": True, "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text",
                                                                 "text": "instructions"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    assert message_text(body) == "hi"

    status, data = call(mock.url, "POST", "/v1/responses", body)
    events = sse_events(data)
    assert [e["type"] for e in events] == [
        "response.created", "response.output_item.added", "response.output_text.delta",
        "response.output_text.delta", "response.output_item.done", "response.completed"]
    assert events[-2]["item"]["content"][0]["text"] == "ab"

    status, data = call(mock.url, "POST", "/v1/responses", body)
    item = sse_events(data)[-2]["item"]
    assert (item["type"], item["name"], item["call_id"]) == ("function_call", "exec_command",
                                                             shell.id)
    assert json.loads(item["arguments"]) == {"cmd": "ls", "justification": "why",
                                             "sandbox_permissions": "require_escalated"}

    for _ in range(2):
        status, data = call(mock.url, "POST", "/v1/responses", body)
        assert status == 429 and json.loads(data)["error"]["message"] == "slow down"
    status, data = call(mock.url, "POST", "/v1/responses", body)
    assert sse_events(data)[-2]["item"]["content"][0]["text"] == DEFAULT_TEXT
    assert len(mock.requests) == 5 and mock.remaining == 0


def wait_until(cond, timeout=10):
    with gevent.Timeout(timeout, AssertionError(f"condition not met within {timeout}s")):
        while not cond():
            gevent.sleep(0.02)


def open_stream(url):
    """Start a model-turn request by hand; return the socket after the first event."""
    import socket
    from urllib.parse import urlsplit

    body = json.dumps({"model": "gpt-5.5", "stream": True, "input": []}).encode()
    u = urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port), timeout=10)
    sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
    data = b""
    while b"event: response.created" not in data:
        chunk = sock.recv(4096)
        assert chunk, "stream closed before response.created"
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
    mock = MockOpenAI([text_reply(*["x"] * 100, delay=0.5)]).start()
    sock = open_stream(mock.url)
    try:
        mock.stop()
        sock.settimeout(10)
        while sock.recv(4096):  # the stream ends (EOF) instead of running for 50 s
            pass
        assert mock.open_streams == 0
    finally:
        sock.close()

"""The chat core in-process: the Registry and its Chat actors on the real Claude Code CLI.

The CLI runs against tests/mock_anthropic.py, in an environment of its own (see test_chat.py).
Clients are recording sinks: one attached to the chat (chat.event frames), one registered with
the host's clients (chat.status frames, which go to every client). Every test ends every CLI
the way the daemon does at shutdown (freeze, close, wait for the process to be gone), and no
test may leave a "bug:" line in the daemon's log.
"""
from __future__ import annotations

import json
import os

import pytest

from actors.errors import ChatError
from actors.core.thread import NOT_RESUMED, Thread
from actors.registry import CoreClients, Registry
from tests.actors.shutdown import shut_down
from tests.sinks import Sink
from web.core.wire import encode
from storage.chat_store import ChatStore, encode_id, read_log
from tests.mock_anthropic import MockAnthropic, text_reply, tool_use_reply
from tests.peers import CLAUDE, claude_env, require_peers
from tests.tiers import needs

ASK = 30  # seconds an ask may take (a first CLI start included); never asserted


def events(sink) -> list[dict]:
    return [f["payload"]["event"] for f in sink.frames if f.get("event") == "chat.event"]


def statuses(sink, chat_id: str) -> list[str]:
    return [f["payload"]["info"]["status"] for f in sink.frames
            if f.get("event") == "chat.status" and f["payload"]["chatId"] == chat_id]


def turn_ended(sink, turn_id: str) -> dict:
    frame = sink.wait_for(lambda f: f.get("event") == "chat.event" and _item(f).get("id") == turn_id
                          and _item(f).get("state") != "running", f"the end of {turn_id}", show=_short)
    return _item(frame)


def _item(frame: dict) -> dict:
    return frame["payload"]["event"].get("item") or {} if frame.get("event") == "chat.event" else {}


def _short(frame: dict) -> str:
    if frame.get("event") == "chat.status":
        return f"status:{frame['payload']['info']['status']}"
    if "event" not in frame.get("payload", {}):
        return frame.get("event", "?")  # chat.bookmarks, chat.visuals
    event = frame["payload"]["event"]
    return f"{event['type']}:{(event.get('item') or {}).get('kind', '')}"


@pytest.fixture
@needs("peers")
def mock(tmp_path, monkeypatch):
    require_peers("claude")
    server = MockAnthropic()
    server.start()
    for key, value in claude_env(tmp_path / "home", server.url).items():
        monkeypatch.setenv(key, value)  # the chat's CLI inherits the daemon's environment
    yield server
    server.stop()


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return str(folder)


@pytest.fixture
def core(tmp_path, mock, capsys):
    """Starts registries over one data folder; ends them all (and their CLIs) after the test."""
    started = []
    data = str(tmp_path / "data")

    def start(resuming_on: bool = False):
        clients, status_sink = CoreClients(), Sink(encode)
        clients.add(status_sink)
        ref = Registry.start(data, clients, commands=lambda: {"claude-code": (str(CLAUDE),)},
                             resuming_on=resuming_on, environment=dict(os.environ))
        started.append(ref)
        return Host(ref, data, status_sink)

    yield start
    for ref in started:
        if ref.is_alive():
            shut_down(ref.proxy())
            ref.stop(timeout=ASK)
    assert "bug:" not in capsys.readouterr().err


class Host:
    """A started Registry: asks go to its proxy; its data folder and its status client beside it."""

    def __init__(self, ref, data: str, status_sink: Sink):
        self.ref, self.data, self.status_sink = ref, data, status_sink

    def __getattr__(self, name):
        return getattr(self.ref.proxy(), name)


def create(host, chat_id: str, cwd: str, **fields) -> dict:
    return host.create_chat({"chatId": chat_id, "cwd": cwd, **fields}).get(timeout=ASK)


def attach(host, chat_id: str) -> tuple:
    chat, sink = host.chat(chat_id).get(timeout=ASK), Sink(encode)
    answer = chat.core_attach(sink).get(timeout=ASK)
    return chat, sink, answer


def record_of(host, chat_id: str) -> dict:
    with open(os.path.join(host.data, "chats", encode_id(chat_id) + ".json")) as handle:
        return json.load(handle)


# ---- create and load --------------------------------------------------------------------------

def test_create_is_idempotent_per_id(core, project, tmp_path):
    host = core()
    first = create(host, "c1", project, provider="claude")
    other = tmp_path / "elsewhere"
    other.mkdir()
    again = create(host, "c1", str(other), provider="codex")
    assert again == first and again["cwd"] == os.path.realpath(project) and again["provider"] == "claude"
    assert [info["chatId"] for info in host.list_chats().get(timeout=ASK)] == ["c1"]
    assert len(host.chats().get(timeout=ASK)) == 1


def test_a_new_chat_starts_no_process_and_is_written_at_once(core, project):
    host = core()
    info = create(host, "c1", project, runtimeMode="supervised", selection={"model": "sonnet"})
    assert (info["status"], info["running"], info["activeTurnId"], info["queue"]) == ("idle", False, None, [])
    assert info["runtimeMode"] == "supervised" and info["selection"]["model"] == "sonnet"
    assert record_of(host, "c1")["info"]["chatId"] == "c1"
    assert host.chat("c1").get(timeout=ASK).cli_gone().get(timeout=ASK).is_set()


def test_a_chat_on_disk_keeps_its_provider_folder_and_model_when_created_again(core, project, tmp_path):
    host = core()
    create(host, "c1", project, selection={"model": "sonnet"}, runtimeMode="auto")
    shut_down(host)
    host.ref.stop(timeout=ASK)
    other = tmp_path / "elsewhere"
    other.mkdir()
    again = create(core(), "c1", str(other), provider="codex", selection={"model": "opus"})
    assert (again["provider"], again["cwd"], again["selection"]["model"], again["runtimeMode"]) == (
        "claude", os.path.realpath(project), "sonnet", "auto")


def test_an_unreadable_chat_is_refused_and_left_byte_identical(core, project):
    host = core()
    store = ChatStore(host.data)
    store.append("broken", 1, {"type": "info", "info": {}})
    record_path = os.path.join(store.folder, encode_id("broken") + ".json")
    with open(record_path, "wb") as handle:
        handle.write(b'{"info": {"chatId": "broken"}, "items": [')
    before = {name: open(os.path.join(store.folder, name), "rb").read() for name in os.listdir(store.folder)}
    with pytest.raises(ChatError) as refused:
        create(host, "broken", project)
    assert refused.value.code == "chat-unreadable"
    assert {name: open(os.path.join(store.folder, name), "rb").read() for name in os.listdir(store.folder)} == before
    assert host.list_chats().get(timeout=ASK) == []


def test_an_id_too_long_to_be_stored_is_a_bad_request(core, project):
    with pytest.raises(ChatError) as refused:
        create(core(), "/" * 200, project)
    assert refused.value.code == "bad-request"


# ---- a turn -------------------------------------------------------------------------------------

def test_a_turn_reaches_the_attached_client_as_events_in_sequence(core, project, mock):
    mock.add(text_reply("Hello ", "from ", "the core."))
    host = core()
    create(host, "c1", project)
    chat, sink, answer = attach(host, "c1")
    assert answer["items"] == [] and answer["seq"] == 0
    sent = chat.core_send("hello").get(timeout=ASK)
    assert sent["queued"] is False
    assert turn_ended(sink, sent["turnId"])["state"] == "done"
    # The chat goes on after the turn's end (its changes are read): the history, asked after
    # that, is what every event the client had by then rebuilds.
    history = chat.history(None, 100).get(timeout=ASK)["items"]
    seqs = [f["payload"]["seq"] for f in sink.frames]
    assert seqs == list(range(1, len(seqs) + 1))
    rebuilt = Thread(answer["info"], answer["items"])
    for event in events(sink):
        rebuilt.apply(event)
    kinds = [(i["kind"], i.get("text")) for i in rebuilt.snapshot()["items"] if i["kind"] in ("user", "assistant")]
    assert kinds == [("user", "hello"), ("assistant", "Hello from the core.")]
    assert rebuilt.snapshot()["items"] == history


def test_what_the_client_saw_is_what_the_log_holds(core, project, mock):
    mock.add(text_reply("logged"))
    host = core()
    create(host, "c1", project)
    chat, sink, _ = attach(host, "c1")
    turn_ended(sink, chat.core_send("hello").get(timeout=ASK)["turnId"])
    logged = read_log(ChatStore(host.data).log_path("c1"))
    sent = {f["payload"]["seq"]: f["payload"]["event"] for f in sink.frames}
    assert {line["seq"]: line["event"] for line in logged} == sent


def test_chat_status_goes_out_only_when_its_signature_changes(core, project, mock):
    mock.add(text_reply("quick"))
    host = core()
    create(host, "c1", project)
    chat, sink, _ = attach(host, "c1")
    turn_ended(sink, chat.core_send("hello").get(timeout=ASK)["turnId"])
    host.status_sink.wait_for(lambda f: f.get("event") == "chat.status" and f["payload"]["info"]["status"] == "idle",
                              "status idle")
    infos = [e for e in events(sink) if e["type"] == "info"]
    assert statuses(host.status_sink, "c1") == ["running", "idle"]
    assert len(infos) > 2  # running, the session id, the usage...: only two of them changed the signature
    assert not [f for f in sink.frames if f.get("event") == "chat.status"]  # chat.status is not a chat event


def test_an_approval_shows_in_the_status_and_an_answer_settles_it(core, project, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch made.txt", "description": "make"}), text_reply("made"))
    host = core()
    create(host, "c1", project, runtimeMode="supervised")
    chat, sink, _ = attach(host, "c1")
    turn = chat.core_send("make it").get(timeout=ASK)["turnId"]
    pending = _item(sink.wait_for(lambda f: _item(f).get("kind") == "approval"
                                  and _item(f).get("decision") == "pending", "an approval"))
    assert pending["turnId"] == turn and pending["toolName"] == "Bash"
    chat.approve(pending["requestId"], "allow").get(timeout=ASK)
    assert turn_ended(sink, turn)["state"] == "done"
    assert os.path.exists(os.path.join(project, "made.txt"))
    assert statuses(host.status_sink, "c1") == ["running", "needs-you", "running", "idle"]
    with pytest.raises(ChatError) as settled:
        chat.approve(pending["requestId"], "deny").get(timeout=ASK)
    assert settled.value.code == "request-not-found"


# ---- restarts -----------------------------------------------------------------------------------

def test_freeze_leaves_the_running_turn_running_on_disk(core, project, mock):
    mock.add(text_reply(*["slow "] * 200, delay=0.1))
    host = core()
    create(host, "r1", project)
    chat, sink, _ = attach(host, "r1")
    turn = chat.core_send("a long one").get(timeout=ASK)["turnId"]
    assert chat.core_send("and this after").get(timeout=ASK)["queued"] is True
    sink.wait_for(lambda f: f.get("event") == "chat.event" and f["payload"]["event"]["type"] == "delta", "streaming")
    shut_down(host)
    record = record_of(host, "r1")
    assert record["info"]["activeTurnId"] == turn
    assert next(i for i in record["items"] if i["id"] == turn)["state"] == "running"
    assert [m["text"] for m in record["info"]["queue"]] == ["and this after"]
    assert not os.path.exists(ChatStore(host.data).log_path("r1"))  # folded into the record


def test_a_new_host_settles_a_frozen_turn_at_start_with_the_note(core, project, mock):
    mock.add(text_reply(*["slow "] * 200, delay=0.1))
    host = core()
    create(host, "r1", project)
    chat, sink, _ = attach(host, "r1")
    turn = chat.core_send("a long one").get(timeout=ASK)["turnId"]
    chat.core_send("and this after").get(timeout=ASK)
    sink.wait_for(lambda f: f.get("event") == "chat.event" and f["payload"]["event"]["type"] == "delta", "streaming")
    shut_down(host)
    host.ref.stop(timeout=ASK)

    again = core()
    [info] = again.list_chats().get(timeout=ASK)  # loaded at start: no client asked for it
    assert info["chatId"] == "r1" and info["activeTurnId"] is None and info["status"] == "idle"
    assert info["queuePaused"] is True and [m["text"] for m in info["queue"]] == ["and this after"]
    items = again.chat("r1").get(timeout=ASK).history(None, 100).get(timeout=ASK)["items"]
    assert next(i for i in items if i["id"] == turn)["state"] == "aborted"
    notes = [(i["level"], i["text"], i["turnId"]) for i in items if i["kind"] == "note"]
    assert notes == [("warning", NOT_RESUMED + "this machine does not resume turns", turn)]
    assert any(i["kind"] == "user" and i["text"] == "a long one" for i in items)
    assert not [i for i in items if i.get("streaming")]
    on_disk = record_of(again, "r1")  # settled on disk too, before any client came
    assert next(i for i in on_disk["items"] if i["id"] == turn)["state"] == "aborted"
    assert len(mock.requests) == 1  # nothing was sent to the model again


def test_a_chat_saved_before_modes_were_enforced_loads_supervised_and_a_later_one_keeps_its_mode(core, project):
    host = core()
    create(host, "old", project, runtimeMode="full-access")
    create(host, "new", project, runtimeMode="full-access")
    shut_down(host)
    host.ref.stop(timeout=ASK)
    path = os.path.join(host.data, "chats", encode_id("old") + ".json")
    record = record_of(host, "old")
    del record["info"]["effectiveRuntimeMode"]  # as a record of before modes were enforced was
    with open(path, "w") as handle:
        json.dump(record, handle)

    again = core()
    modes = {info["chatId"]: info["runtimeMode"] for info in again.list_chats().get(timeout=ASK)}
    assert modes == {"old": "supervised", "new": "full-access"}
    info = again.chat("old").get(timeout=ASK).core_attach(Sink(encode)).get(timeout=ASK)["info"]
    assert (info["runtimeMode"], info["effectiveRuntimeMode"]) == ("supervised", "supervised")


def test_a_history_cursor_from_before_a_clear_stays_expired_after_a_restart(core, project, mock):
    mock.add(text_reply("one"), text_reply("two"))
    host = core()
    create(host, "h1", project)
    chat, sink, _ = attach(host, "h1")
    turn_ended(sink, chat.core_send("first").get(timeout=ASK)["turnId"])
    cursor = chat.history(None, 1).get(timeout=ASK)["history"]["cursor"]
    chat.clear().get(timeout=ASK)
    turn_ended(sink, chat.core_send("second").get(timeout=ASK)["turnId"])
    with pytest.raises(ChatError) as expired:
        chat.history(cursor, 1).get(timeout=ASK)
    assert expired.value.code == "history-expired"
    fresh_cursor = chat.history(None, 1).get(timeout=ASK)["history"]["cursor"]
    shut_down(host)
    host.ref.stop(timeout=ASK)

    again = core()
    create(again, "h1", project)  # a chat with no turn to settle loads when a client asks for it
    chat = again.chat("h1").get(timeout=ASK)
    with pytest.raises(ChatError) as still:
        chat.history(cursor, 1).get(timeout=ASK)
    assert still.value.code == "history-expired"
    assert chat.history(fresh_cursor, 1).get(timeout=ASK)["items"]  # one from after the clear still reads

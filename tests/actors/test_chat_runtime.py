"""The chat runtime in-process and fast: the Registry and its Chat actors on tests/fake_claude.py
and tests/fake_codex.py.

The fake CLIs replay frames the real CLIs were recorded writing, keyed on what they read,
so the runtime's own logic runs in milliseconds without npm: one origin's sends in order, each
after the previous acknowledgement; results to the sending socket only; an acknowledgement
that never comes; a CLI that dies mid-turn; a retired CLI (an older process serial) ignored; a steer the CLI
never confirms; a frozen turn settled by the next registry; an answer given on one surface
settled on the other. The real CLIs stay the acceptance layer (tests/integration/).
"""
from __future__ import annotations

import sys
import uuid
from pathlib import Path

import gevent
import pytest

from actors.messages import Send
from actors.registry import CoreClients, Registry
from tests.actors.shutdown import shut_down
from web import chat_socket
from web.core import wire
from tests.sinks import Sink

FAKE = (sys.executable, str(Path(__file__).resolve().parents[1] / "fake_claude.py"))
FAKE_CODEX = (sys.executable, str(Path(__file__).resolve().parents[1] / "fake_codex.py"))
ASK = 10


def results(sink) -> list[dict]:
    return [f for f in sink.frames if f["type"] == "command_result"]


def page_sink() -> Sink:
    return Sink(chat_socket.encode)


def core_sink() -> Sink:
    return Sink(wire.encode)


@pytest.fixture
def runtime(tmp_path):
    """Starts registries over one data folder; ends every chat (and CLI) after the test."""
    started = []

    def start(chat_options: dict | None = None, **options):
        clients = CoreClients()
        ref = Registry.start(str(tmp_path / "chats"), clients,
                             commands=lambda: {"claude-code": FAKE, "codex": FAKE_CODEX},
                             chat_options={"ack_timeout": 0.5, **(chat_options or {})}, **options)
        started.append(ref)
        return ref.proxy()

    yield start
    for ref in started:
        if ref.is_alive():
            stop(ref.proxy())


def stop(registry) -> None:
    shut_down(registry, ASK)
    registry.actor_ref.stop(timeout=ASK)


def session(registry, tmp_path, harness: str = "claude-code", flags: tuple[str, ...] = ()):
    folder = tmp_path / "project"
    folder.mkdir(exist_ok=True)
    command = (*(FAKE if harness == "claude-code" else FAKE_CODEX), *flags)
    record = registry.create_session(harness, str(folder), command, None, None).get(timeout=ASK)
    chat, _ = registry.session(record["id"]).get(timeout=ASK)
    return record, chat


def attach(chat) -> tuple[int, Sink]:
    sink = page_sink()
    subscriber = chat.attach(sink).get(timeout=ASK)[0]
    return subscriber, sink


def send(chat, subscriber: int, text: str) -> str:
    command_id = str(uuid.uuid4())
    chat.send(subscriber, Send(command_id, text, None), "").get(timeout=ASK)
    return command_id


def items(chat, kind: str) -> list[dict]:
    return [item for item in chat.history(None, 100).get(timeout=ASK)["items"] if item["kind"] == kind]


def hanging_chat(registry, folder) -> tuple:
    """Chat c1 in ``folder``, watched by a core sink, with a turn that runs until it is stopped."""
    registry.create_chat({"chatId": "c1", "cwd": str(folder)}).get(timeout=ASK)
    chat = registry.chat("c1").get(timeout=ASK)
    watcher = core_sink()
    chat.core_attach(watcher).get(timeout=ASK)
    chat.core_send("hang on").get(timeout=ASK)
    return chat, watcher


def result_event(sink: Sink, text: str) -> dict:
    return sink.wait_for(lambda f: f["type"] == "event" and f["payload"].get("type") == "result"
                         and f["payload"].get("result") == text, f"the result {text!r}")


def test_one_sockets_sends_go_out_in_order_each_after_the_previous_acknowledgement(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path)
    subscriber, sink = attach(chat)
    first, second = send(chat, subscriber, "one"), send(chat, subscriber, "two")
    result_event(sink, "echo: two")
    assert [r["commandId"] for r in results(sink)] == [first, second]
    assert all(r["delivery"] in ("queued", "started") for r in results(sink))
    assert [i["text"] for i in items(chat, "user")] == ["one", "two"]
    assert [i["text"] for i in items(chat, "assistant")] == ["echo: one", "echo: two"]


def test_a_result_goes_to_the_socket_that_sent_and_events_to_every_socket(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path)
    sender, sent_from = attach(chat)
    _, other = attach(chat)
    command_id = send(chat, sender, "hello")
    result_event(other, "echo: hello")
    sent_from.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id, "the result")
    assert results(other) == []
    events = [f["sequence"] for f in other.frames if f["type"] == "event"]
    assert events == [f["sequence"] for f in sent_from.frames if f["type"] == "event"] \
        == list(range(1, len(events) + 1))


def test_an_acknowledgement_that_never_comes_reads_unconfirmed(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path)
    subscriber, sink = attach(chat)
    command_id = send(chat, subscriber, "silent please")
    result = sink.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id, "the result")
    assert result["delivery"] == "unconfirmed"
    # The next send is not held behind it.
    send(chat, subscriber, "after")
    result_event(sink, "echo: after")


def test_a_cli_that_dies_mid_turn_ends_the_turn_with_an_error_and_the_next_message_starts_another(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path)
    subscriber, sink = attach(chat)
    send(chat, subscriber, "die now")
    state = sink.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "error", "the error state")
    assert "exited with code 1" in state["session"]["error"] and "asked to die" in state["session"]["error"]
    send(chat, subscriber, "again")
    result_event(sink, "echo: again")
    turns = items(chat, "turn")
    assert [t["state"] for t in turns] == ["error", "done"]
    assert any("asked to die" in (n.get("text") or "") for n in items(chat, "note"))


def test_a_cleared_chat_ignores_what_its_retired_cli_still_writes(runtime, tmp_path):
    registry = runtime()
    chat, watcher = hanging_chat(registry, tmp_path)
    watcher.wait_for(lambda f: f["payload"].get("event", {}).get("type") == "info"
                     and f["payload"]["event"]["info"]["running"], "a running process")
    chat.clear(True).get(timeout=ASK)
    info = chat.info().get(timeout=ASK)
    assert (info["running"], info["activeTurnId"], info["status"]) == (False, None, "idle")
    assert items(chat, "turn") == []
    sent = chat.core_send("fresh start").get(timeout=ASK)
    watcher.wait_for(lambda f: f["payload"].get("event", {}).get("item", {}).get("id") == sent["turnId"]
                     and f["payload"]["event"]["item"]["state"] == "done", "the new turn done")
    assert [i["text"] for i in items(chat, "assistant")] == ["echo: fresh start"]


def test_a_steer_the_cli_never_confirms_stays_queued_unmarked_and_pauses_the_queue(runtime, tmp_path):
    registry = runtime()
    registry.create_chat({"chatId": "c1", "cwd": str(tmp_path)}).get(timeout=ASK)
    chat = registry.chat("c1").get(timeout=ASK)
    chat.core_send("hang on").get(timeout=ASK)
    steered = chat.core_send("silent steer", "steer").get(timeout=ASK)
    assert steered["queued"] is True
    assert [m.get("steering") for m in chat.info().get(timeout=ASK)["queue"]] == [True]
    with gevent.Timeout(5):
        while chat.info().get(timeout=ASK)["queue"][0].get("steering"):
            gevent.sleep(0.02)
    info = chat.info().get(timeout=ASK)
    assert [m["text"] for m in info["queue"]] == ["silent steer"] and info["queuePaused"] is True


def test_a_turn_running_at_a_stop_is_settled_by_the_next_registry_with_a_note(runtime, tmp_path):
    first = runtime()
    first.create_chat({"chatId": "c1", "cwd": str(tmp_path)}).get(timeout=ASK)
    chat = first.chat("c1").get(timeout=ASK)
    sent = chat.core_send("hang on").get(timeout=ASK)
    stop(first)
    again = runtime()
    [info] = again.list_chats().get(timeout=ASK)  # loaded at start: nobody asked for it
    assert (info["activeTurnId"], info["queuePaused"], info["running"]) == (None, True, False)
    chat = again.chat("c1").get(timeout=ASK)
    [turn] = items(chat, "turn")
    assert (turn["id"], turn["state"]) == (sent["turnId"], "aborted")
    assert any("could not be resumed" in n["text"] for n in items(chat, "note"))


def test_a_page_session_is_a_chat_whose_approval_the_core_answers(runtime, tmp_path):
    registry = runtime()
    record, chat = session(registry, tmp_path)
    subscriber, page = attach(chat)
    send(chat, subscriber, "approve the tool")
    state = page.wait_for(lambda f: f["type"] == "state" and f["pendingRequestIds"], "the approval")
    request_id = state["pendingRequestIds"][0]
    assert [c["chatId"] for c in registry.list_chats().get(timeout=ASK)] == [record["chatId"]]
    chat.approve(request_id, "allow").get(timeout=ASK)
    result_event(page, "done")
    page.wait_for(lambda f: f["type"] == "state" and not f["pendingRequestIds"]
                  and f["session"]["status"] == "idle", "idle with nothing pending")
    [approval] = items(chat, "approval")
    assert approval["decision"] == "allow"
    chat.respond(subscriber, request_id, {"behavior": "allow"}).get(timeout=ASK)
    assert "is not pending" in page.wait_for(lambda f: f["type"] == "error", "the refusal")["message"]


def test_a_closed_session_refuses_a_send_and_a_core_message_opens_it_again(runtime, tmp_path):
    registry = runtime()
    record, chat = session(registry, tmp_path)
    subscriber, page = attach(chat)
    assert chat.close(1000).get(timeout=ASK)["status"] == "closed" and page.closed_with == 1000
    subscriber, page = attach(chat)
    command_id = send(chat, subscriber, "hello?")
    refused = page.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id, "a refusal")
    assert "closed" in refused["error"]
    chat.core_send("from the app").get(timeout=ASK)
    result_event(page, "echo: from the app")
    assert chat.record().get(timeout=ASK)["status"] == "idle"


def codex_turn_done(page: Sink, nth: int = 1) -> None:
    page.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "idle"
                  and len([e for e in page.frames if e["type"] == "event"
                           and e["payload"].get("method") == "turn/completed"]) >= nth, "the turn completed")


def test_a_codex_session_acknowledges_with_the_turns_start_and_builds_the_thread(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path, "codex")
    subscriber, page = attach(chat)
    command_id = send(chat, subscriber, "hello codex")
    codex_turn_done(page)
    [result] = results(page)
    assert (result["commandId"], result["delivery"]) == (command_id, "queued")  # Codex's answer to turn/start
    assert [i["text"] for i in items(chat, "user")] == ["hello codex"]
    assert [i["text"] for i in items(chat, "assistant")] == ["echo: hello codex"]
    assert [t["state"] for t in items(chat, "turn")] == ["done"]


def test_a_codex_approval_answered_in_the_page_is_settled_in_the_thread(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path, "codex")
    subscriber, page = attach(chat)
    send(chat, subscriber, "approve the command")
    state = page.wait_for(lambda f: f["type"] == "state" and f["pendingRequestIds"], "the approval")
    native = state["pendingRequestIds"][0]
    chat.respond(subscriber, native, {"decision": "accept"}).get(timeout=ASK)
    codex_turn_done(page)
    [approval] = items(chat, "approval")
    assert approval["decision"] == "allow"
    assert [i["text"] for i in items(chat, "assistant")] == ["finished"]
    with pytest.raises(Exception) as refused:
        chat.approve(approval["requestId"], "deny").get(timeout=ASK)
    assert getattr(refused.value, "code", None) == "request-not-found"


def test_a_clear_answers_every_send_it_cut_off_and_the_page_goes_on_sending(runtime, tmp_path):
    registry = runtime()
    _, chat = session(registry, tmp_path)
    subscriber, page = attach(chat)
    lost, queued = send(chat, subscriber, "silent a"), send(chat, subscriber, "b")  # b waits behind a
    chat.clear(True).get(timeout=ASK)
    answered = {r["commandId"]: r for r in results(page)}
    assert set(answered) == {lost, queued} and all(r.get("error") for r in answered.values())
    send(chat, subscriber, "c")
    result_event(page, "echo: c")


def test_a_pages_interrupt_leaves_what_the_core_queued_to_go_out(runtime, tmp_path):
    registry = runtime()
    record, chat = session(registry, tmp_path)
    subscriber, page = attach(chat)
    chat.core_send("silent x").get(timeout=ASK)  # never acknowledged: what follows waits behind it
    chat.core_send("more", "steer").get(timeout=ASK)
    chat.interrupt(subscriber).get(timeout=ASK)
    result_event(page, "echo: more")  # once x reads unconfirmed, the steer goes out after all
    with gevent.Timeout(5):
        while any(m["text"] == "more" for m in chat.info().get(timeout=ASK)["queue"]):
            gevent.sleep(0.02)
    assert "more" in [i["text"] for i in items(chat, "user")]


def test_every_daemon_line_about_a_cli_names_its_session(runtime, tmp_path, capsys):
    # A CLI that first writes a line that is no JSON and leaves a process of its own behind.
    noisy = ("/bin/sh", "-c", 'echo "not json"; sleep 600 </dev/null >/dev/null 2>&1 & exec "$@"', "sh", *FAKE)
    registry = runtime()
    folder = tmp_path / "project"
    folder.mkdir()
    record = registry.create_session("claude-code", str(folder), noisy, None, None).get(timeout=ASK)
    chat, _ = registry.session(record["id"]).get(timeout=ASK)
    subscriber, sink = attach(chat)
    send(chat, subscriber, "die now")  # it exits; the sleep it started is ended after it
    sink.wait_for(lambda f: f["type"] == "state" and f["session"]["status"] == "error", "the error state")
    send(chat, subscriber, "again")  # a second CLI, ended with the chat below
    result_event(sink, "echo: again")
    stop(registry)
    said_so_far = []

    ours = f"(session {record['id']})"

    def logged_the_end():  # (the line of an ended CLI comes once its tree is gone)
        said_so_far.extend(capsys.readouterr().err.splitlines())
        return any("ended: " in line and ours in line for line in said_so_far)
    with gevent.Timeout(5, AssertionError(f"no line of the ended CLI in {said_so_far}")):
        while not logged_the_end():
            gevent.sleep(0.01)
    about_a_cli = [line for line in said_so_far if "Claude Code pid" in line]
    assert all(" (session " in line for line in about_a_cli)  # (an earlier test's CLIs may end meanwhile)
    said = {what: [line for line in about_a_cli if what in line and ours in line]
            for what in ("wrote a non-JSON line", "left processes behind", "ended: ")}
    assert len(said["wrote a non-JSON line"]) == 2 and said["left processes behind"] and said["ended: "]


def test_a_queued_message_keeps_its_references_and_goes_with_them_as_the_clis_own(runtime, tmp_path):
    project = tmp_path / "project"
    (project / ".claude" / "skills" / "greet").mkdir(parents=True)
    (project / ".claude" / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\ndescription: Hi.\n---\n")
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("a")
    registry = runtime()
    chat, watcher = hanging_chat(registry, project)
    references = {"mentions": ["docs/a.md"], "skills": ["greet"], "chats": ["c0"], "context": "[Context]"}
    queued = chat.core_send("look", "steer", None, references).get(timeout=ASK)
    assert queued["queued"] is True  # a message with references is a turn of its own, never steered
    [waiting] = chat.info().get(timeout=ASK)["queue"]
    assert waiting["references"] == references and not waiting.get("steering")
    chat.send_now(waiting["id"]).get(timeout=ASK)
    watcher.wait_for(lambda f: f["payload"].get("event", {}).get("item", {}).get("id") == queued["turnId"]
                     and f["payload"]["event"]["item"]["state"] == "done", "the queued turn done")
    user = next(i for i in items(chat, "user") if i["turnId"] == queued["turnId"])
    assert (user["text"], user["mentions"], user["skills"], user["chats"]) == ("look", ["docs/a.md"], ["greet"], ["c0"])
    assert "context" not in user
    assert items(chat, "assistant")[-1]["text"] == "echo: /greet [Context]\n\nlook\n\n@docs/a.md"
    with pytest.raises(Exception, match="resolves outside"):
        chat.core_send("x", None, None, {"mentions": ["../elsewhere"]}).get(timeout=ASK)

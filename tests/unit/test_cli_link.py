"""actors.cli_link: a conversation's hold on its CLI, driven through its public methods.

The link runs a real process (a shell that copies what it is written to a file, so a test reads
what the CLI was sent) under Claude Code's real driver, and is fed frames Claude Code wrote
(tests/fixtures/claude-frames). What the link tells its chat is recorded by a stand-in owner;
what its process and its timers tell the chat's actor lands in a stand-in mailbox, whose timer
calls the test runs as the actor would.
"""
from __future__ import annotations

import json
from pathlib import Path

import gevent
import pytest
from pykka.messages import ProxyCall

from actors.cli_link import CliLink, model_change
from actors.cli_link_sends import message_id_for
from actors.harness import claude
from actors.messages import Send, is_lowercase_uuid
from actors.tell import Call

FRAMES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-frames"
FIRST = "11111111-1111-4111-8111-111111111111"  # the two messages of queued.jsonl
SECOND = "22222222-2222-4222-8222-222222222222"


def recorded(name: str) -> list[dict]:
    """What the CLI wrote in a recording, in order."""
    lines = (FRAMES / name).read_text().splitlines()
    return [record["frame"] for record in map(json.loads, lines) if record["dir"] == "cli->host"]


def ready_frame() -> dict:
    """Claude Code's answer to the handshake, as recorded, addressed to the driver's own request."""
    answer = next(f for f in recorded("initialize.jsonl") if f.get("type") == "control_response")
    return {**answer, "response": {**answer["response"], "request_id": "devhost-1"}}


class Mailbox:
    """Stands in for the chat actor's mailbox: what the link's process and timers tell it."""

    def __init__(self):
        self.messages: list = []

    def tell(self, message) -> None:
        self.messages.append(message)

    def wait_for(self, predicate, what: str):
        with gevent.Timeout(15, AssertionError(f"no {what} in {self.messages}")):
            while True:
                found = next((m for m in self.messages if predicate(m)), None)
                if found is not None:
                    self.messages.remove(found)
                    return found
                gevent.sleep(0.01)

    def timer_call(self) -> Call:
        return self.wait_for(lambda m: isinstance(m, Call), "timer call")

    def exit_of(self) -> tuple:
        exit_call = self.wait_for(lambda m: isinstance(m, ProxyCall) and m.attr_path == ("on_cli_exit",), "exit")
        return exit_call.args  # (process serial, code, stderr tail)


class Owner:
    """Stands in for the chat (LinkOwner): records what the link tells it, in order."""

    def __init__(self):
        self.told: list[tuple] = []

    def __getattr__(self, name: str):
        if not name.startswith("link_"):
            raise AttributeError(name)
        return lambda *args: self.told.append((name, *args))

    def results(self) -> list[tuple]:
        return [told[1:] for told in self.told if told[0] == "link_result"]

    def named(self, name: str) -> list[tuple]:
        return [told[1:] for told in self.told if told[0] == name]


@pytest.fixture
def made(tmp_path):
    """(make, stdin): ``make(**options)`` makes a link whose CLI copies its stdin to ``stdin``."""
    stdin = tmp_path / "stdin.jsonl"
    links = []

    def make(**options):
        mailbox, owner = Mailbox(), Owner()
        # The driver's flags come after the command: "$0" is the file, the rest is ignored.
        command = ("/bin/sh", "-c", 'exec cat >> "$0"', str(stdin))
        link = CliLink(chat_id="link-test", harness=claude, root=str(tmp_path), command=command, model=None,
                       native_id=None, actor_ref=mailbox, owner=owner, **options)
        links.append(link)
        return link, mailbox, owner

    def written() -> list[dict]:
        return [json.loads(line) for line in stdin.read_text().splitlines()] if stdin.exists() else []

    yield make, written
    for link in links:
        link.terminate()
        link.shut()
        assert link.gone.wait(timeout=15), "a CLI of the test outlived it"


def written_within(written, predicate, what: str) -> dict:
    with gevent.Timeout(15, AssertionError(f"the CLI was never written {what}: {written()}")):
        while True:
            found = next((frame for frame in written() if predicate(frame)), None)
            if found is not None:
                return found
            gevent.sleep(0.01)


def feed(link: CliLink, frames: list[dict]) -> None:
    """What the chat does with a batch of the current CLI's frames: each decoded, each effect applied."""
    link.heard()
    for frame in frames:
        for effect in link.driver.decode(frame)[1]:
            link.apply(effect)


def up_to(frames: list[dict], predicate) -> list[dict]:
    """The frames up to and with the first one ``predicate`` takes."""
    end = next(i for i, frame in enumerate(frames) if predicate(frame))
    return frames[:end + 1]


def asking(link: CliLink) -> tuple[list[dict], str]:
    """A message sent and its turn fed up to Claude Code's permission request: (the recording's
    frames, the request's id)."""
    link.send("page", Send(FIRST, "run it", None), "")
    frames = recorded("perm_pending_interrupt.jsonl")
    asked = up_to(frames, lambda f: f.get("type") == "control_request")
    feed(link, [ready_frame(), *asked])
    return frames, asked[-1]["request_id"]


def test_a_start_writes_the_handshake_and_the_link_reads_starting_until_the_cli_is_ready(made):
    make, written = made
    link, _, owner = make()
    link.start()
    assert link.running and link.starting and link.is_current(1)
    assert owner.named("link_started") == [()]
    written_within(written, lambda f: f.get("request", {}).get("subtype") == "initialize", "the handshake")
    feed(link, [ready_frame()])
    assert link.running and not link.starting


def test_a_cli_not_ready_by_its_deadline_is_reported_and_one_that_got_ready_is_not(made):
    make, _ = made
    late, late_mailbox, late_owner = make(start_deadline=0.05)
    late.start()
    timer = late_mailbox.timer_call()
    timer.function(*timer.args)  # as the actor runs it
    [(message,)] = late_owner.named("link_start_failed")
    assert "did not get ready within 0.05 s" in message
    assert not late.starting and late_owner.named("link_changed") == [()]

    ready, ready_mailbox, ready_owner = make(start_deadline=0.05)
    ready.start()
    feed(ready, [ready_frame()])
    timer = ready_mailbox.timer_call()
    timer.function(*timer.args)
    assert ready_owner.named("link_start_failed") == []


def test_what_a_retired_process_says_no_longer_counts(made):
    make, _ = made
    link, mailbox, owner = make(start_deadline=0.05)
    link.start()
    link.retire("not delivered: the chat's CLI was ended")
    assert not link.running and not link.is_current(1)
    timer = mailbox.timer_call()  # the retired process's start deadline
    timer.function(*timer.args)
    assert owner.named("link_start_failed") == []
    serial, *_ = mailbox.exit_of()
    assert not link.exited(serial)  # its exit is counted, and nothing of the chat reacts
    assert link.gone.is_set()  # no process of the chat runs any more


def test_the_current_processs_exit_forgets_its_requests_and_its_turn(made):
    make, _ = made
    link, mailbox, _ = make()
    asking(link)
    assert link.turn_active and link.pending_ids()
    link.end_for_fault("it broke its protocol")
    assert not link.turn_active and link.pending_ids(), "its requests stay listed until it exits"
    serial, *_ = mailbox.exit_of()
    assert link.exited(serial)
    assert not link.running and link.pending_ids() == [] and not link.turn_active


def test_one_origins_sends_go_out_one_at_a_time_each_after_the_previous_acknowledgement(made):
    make, written = made
    link, _, owner = make()
    link.send("page", Send(FIRST, "first message", None), "")
    link.send("page", Send(SECOND, "second message", None), "")
    written_within(written, lambda f: f.get("uuid") == FIRST, "the first message")
    assert not [f for f in written() if f.get("uuid") == SECOND], "the second went before the first's ack"
    assert link.turn_active
    frames = recorded("queued.jsonl")
    first_queued = up_to(frames, lambda f: f.get("command_uuid") == FIRST and f.get("state") == "queued")
    feed(link, [ready_frame(), *first_queued])
    assert owner.results() == [("page", FIRST, "queued", None)]
    written_within(written, lambda f: f.get("uuid") == SECOND, "the second message")
    feed(link, frames[len(first_queued):])
    assert owner.results() == [("page", FIRST, "queued", None), ("page", SECOND, "queued", None)]
    assert not link.turn_active  # both turns ended: nothing the link waits on runs


def test_an_acknowledgement_that_never_comes_reads_unconfirmed(made):
    make, _ = made
    link, mailbox, owner = make(ack_timeout=0.05)
    link.send("page", Send(FIRST, "hello", None), "")
    timer = mailbox.timer_call()
    timer.function(*timer.args)
    assert owner.results() == [("page", FIRST, "unconfirmed", None)]
    assert owner.named("link_evidence") == [(FIRST, "unconfirmed")]


def test_a_command_id_sent_before_is_refused_and_never_written_twice(made):
    make, written = made
    link, _, owner = make()
    link.send("page", Send(FIRST, "hello", None), "")
    feed(link, [ready_frame(), *up_to(recorded("queued.jsonl"), lambda f: f.get("state") == "queued")])
    link.send("page", Send(FIRST, "hello again", None), "")
    assert "already sent in this session" in owner.results()[-1][3]
    gevent.sleep(0.2)  # (what a write would have put in the file by now)
    assert len([f for f in written() if f.get("uuid") == FIRST]) == 1


def test_a_request_is_pending_until_it_is_answered_and_the_answer_goes_to_the_cli(made):
    make, written = made
    link, _, _ = make()
    _, request_id = asking(link)
    assert link.waits_on(request_id) and link.pending_ids() == [request_id]
    link.respond(request_id, {"behavior": "allow", "updatedInput": {}})
    assert not link.waits_on(request_id)
    answer = written_within(written, lambda f: f.get("type") == "control_response", "the answer")
    assert answer["response"]["request_id"] == request_id


def test_a_request_the_cli_cancels_is_no_longer_pending(made):
    make, _ = made
    link, _, _ = make()
    frames, _ = asking(link)
    assert link.pending_ids()
    feed(link, [next(f for f in frames if f.get("type") == "control_cancel_request")])
    assert link.pending_ids() == []


def test_abandoning_answers_every_send_and_forgets_the_requests_and_the_turn(made):
    make, _ = made
    link, _, owner = make()
    link.send("page", Send(SECOND, "and then this", None), "")
    asking(link)  # its own message waits behind that one
    link.abandon("the session was closed")
    assert sorted(result[1] for result in owner.results()) == [FIRST, SECOND]
    assert all(result[3] and "the session was closed" in result[3] for result in owner.results())
    assert link.pending_ids() == [] and not link.turn_active


def test_a_message_keeps_its_command_id_when_the_cli_can_take_it_as_its_own():
    assert message_id_for(FIRST) == FIRST
    made = message_id_for("page-7")
    assert made != "page-7" and is_lowercase_uuid(made)


def test_a_message_changes_the_model_only_when_it_names_another_one():
    assert model_change(None, "opus") is None
    assert model_change("opus", "opus") is None
    assert model_change("sonnet", "opus") == "sonnet"
    assert model_change("", None) is None  # the CLI's default is what runs already
    assert model_change("", "opus") == ""  # back to the CLI's default


def _homes_written(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_the_cli_runs_under_its_accounts_config_home_and_a_new_account_needs_a_new_process(tmp_path):
    """The account's variable is in the CLI's environment (a shell that notes its
    CLAUDE_CONFIG_DIR, then copies its stdin away); another account is not what a running
    process read, so the next message goes to a new one."""
    homes, noted = {"work": "/homes/work", "personal": "/homes/personal"}, tmp_path / "homes.txt"
    command = ("/bin/sh", "-c", 'printf "%s\\n" "${CLAUDE_CONFIG_DIR:-none}" >> "$0"; exec cat > /dev/null',
               str(noted))
    link = CliLink(chat_id="link-test", harness=claude, root=str(tmp_path), command=command, model=None,
                   native_id=None, actor_ref=Mailbox(), owner=Owner(), account="work",
                   account_env=lambda name: {"CLAUDE_CONFIG_DIR": homes[name]} if name else {})
    try:
        link.start()
        with gevent.Timeout(15, AssertionError("the CLI never started")):
            while not _homes_written(noted):
                gevent.sleep(0.01)
        assert _homes_written(noted) == ["/homes/work"]
        feed(link, [ready_frame()])
        link.set_account("personal")
        assert link.account == "personal" and link.swap_pending
        link.set_mode("supervised")  # a mode the running CLI takes: the account's new process is still owed
        assert link.swap_pending
        link.restart_for_settings()  # what the chat's settings swap does once nothing runs
        with gevent.Timeout(15, AssertionError("no new CLI started")):
            while len(_homes_written(noted)) < 2:
                gevent.sleep(0.01)
        assert _homes_written(noted) == ["/homes/work", "/homes/personal"] and link.process_serial > 1
    finally:
        link.terminate()
        link.shut()
        assert link.gone.wait(timeout=15)


def test_an_account_set_while_no_cli_runs_holds_from_the_next_start_without_a_restart(tmp_path):
    link = CliLink(chat_id="link-test", harness=claude, root=str(tmp_path), command=("true",), model=None,
                   native_id=None, actor_ref=Mailbox(), owner=Owner(),
                   account_env=lambda name: {"CLAUDE_CONFIG_DIR": f"/homes/{name}"} if name else {})
    link.set_account("work")
    assert not link.mode_needs_launch
    assert link._agent_env()["CLAUDE_CONFIG_DIR"] == "/homes/work"
    link.set_account(None)
    assert "CLAUDE_CONFIG_DIR" not in link._agent_env()

"""Rules of the Chat API's socket that hold between the lines, on a real devhostd and the real
Claude Code: the page's checkout is checked again before every command; a command's
acknowledgement goes only to the socket that sent it; a send the CLI never acknowledges reads
``unconfirmed`` after 15 s; a model chosen during a turn waits for the next turn."""
from __future__ import annotations

import os
import signal
import time

from tests.integration.daemon import tagged_processes
from tests.mock_anthropic import MODEL_IDS, text_reply


def test_every_command_is_checked_against_the_pages_checkout_as_it_is_now(daemon, mock, stack):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text().replace('root = "project"', 'root = "other"', 1))
    try:
        command_id = sock.send_message("are you still there?")
        assert "checkout changed" in sock.result_for(command_id)["error"]
        sock.send({"type": "interrupt"})  # no command id: refused as an error frame
        assert sock.wait_for(lambda f: f["type"] == "error" and "checkout changed" in f["message"],
                             what="the interrupt refused")
        assert mock.requests == []
    finally:
        sock.close()


def test_an_acknowledgement_reaches_only_the_socket_that_sent_the_command(daemon, mock):
    mock.add(text_reply("for both to see"))
    record = daemon.create_session()
    sender, watcher = daemon.connect(record["id"]), daemon.connect(record["id"])
    command_id = sender.send_message("hello")
    assert sender.result_for(command_id)["delivery"] == "queued"
    watcher.wait_event(lambda p: p["type"] == "result", what="the turn's result on the other socket")
    sender.wait_event(lambda p: p["type"] == "result", what="the turn's result")
    assert not [f for f in watcher.frames if f["type"] == "command_result"]  # events for all, acks for one
    sender.close()
    watcher.close()


def test_a_send_the_cli_never_acknowledges_reads_unconfirmed_after_fifteen_seconds(daemon, mock):
    mock.add(text_reply("first"), text_reply("late, but there"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("wake up")
    sock.wait_status("idle")
    stopped = tagged_processes(record["id"])
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)  # the CLI reads nothing more until it is continued
    try:
        sent = time.monotonic()
        command_id = sock.send_message("anyone?")
        result = sock.result_for(command_id, timeout=30)
        assert result["delivery"] == "unconfirmed" and time.monotonic() - sent >= 14.5
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    # The message was not lost: once the CLI reads again, it answers it.
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "late, but there")
    sock.close()


def test_a_model_chosen_during_a_turn_applies_from_the_next_turn(daemon, mock):
    chosen = MODEL_IDS[2]
    mock.add(text_reply(*["slow "] * 30, delay=0.1), text_reply("second"), text_reply("third"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("first")
    sock.wait_event(lambda p: p["type"] == "stream_event", what="the first turn streaming")
    sock.send_message("second", model=chosen)
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "second", what="the second answer")
    first_model = mock.requests[0]["model"]
    assert first_model != chosen  # the running turn kept its model
    sock.send_message("third")
    sock.wait_event(lambda p: p["type"] == "result" and p.get("result") == "third", what="the third answer")
    assert mock.requests[-1]["model"] == chosen
    sock.close()

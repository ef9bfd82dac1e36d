"""A long reply streamed to several pages at once, on the real Claude Code CLI.

The CLI's lines reach the chat in batches (one per read of its stdout), are stored with one
history write per batch, and leave each socket in batches (one write per wake of its writer).
None of that may show: every socket sees every event once, in sequence order, and the same
events; the acknowledgement and the idle state come after the events that led to them.
"""
from __future__ import annotations

import gevent

from tests.mock_anthropic import text_reply
from web.sinks import SINK_LIMIT_BYTES

CHUNKS = 1200


def test_every_page_gets_every_event_of_a_long_reply_in_order_and_a_late_page_the_same_snapshot(daemon, mock):
    words = [f"w{n:04d} " for n in range(CHUNKS)]
    mock.add(text_reply(*words))
    session = daemon.create_session()
    pages = [daemon.connect(session["id"]) for _ in range(3)]
    sender = pages[0]
    command_id = sender.send_message("write a lot")
    for page in pages:
        page.wait_for(lambda f: f["type"] == "event" and f["payload"].get("type") == "result", timeout=120,
                      what="the result")
    streams = []
    for page in pages:
        sequences = [f["sequence"] for f in page.frames if f["type"] == "event"]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences))), "a gap or a repeat"
        streams.append([(f["sequence"], f["payload"]) for f in page.frames if f["type"] == "event"])
    assert streams[0] == streams[1] == streams[2]
    deltas = "".join(p["event"]["delta"]["text"] for _, p in streams[0]
                     if p.get("type") == "stream_event" and p["event"].get("type") == "content_block_delta"
                     and p["event"]["delta"].get("type") == "text_delta")
    assert deltas == "".join(words)
    # The sender's acknowledgement follows the CLI's first evidence, never precedes the events
    # stored before it; every page reads idle only after the result.
    frames = sender.frames
    ack = next(i for i, f in enumerate(frames) if f["type"] == "command_result" and f["commandId"] == command_id)
    assert frames[ack].get("delivery") in ("started", "joined", "queued"), frames[ack]
    for page in pages:
        result_at = next(i for i, f in enumerate(page.frames)
                         if f["type"] == "event" and f["payload"].get("type") == "result")
        assert any(f["type"] == "state" and f["session"]["status"] == "idle" for f in page.frames[result_at:]) \
            or page.wait_status("idle")
    # A page that arrives afterwards reads the same events from the history on disk.
    late = daemon.connect(session["id"])
    snapshot = [(e["sequence"], e["payload"]) for e in late.snapshot["events"]]
    assert snapshot[:len(streams[0])] == streams[0]  # and any the CLI wrote after the result
    for page in [*pages, late]:
        page.close()


def test_a_reply_past_half_the_socket_bound_reaches_every_page_whole(daemon, mock):
    # Claude Code writes the text three times back to back (its one delta, the assistant
    # message, the result): 17 MiB of reply is over 32 MiB for each socket at once.
    text = "ab" * ((SINK_LIMIT_BYTES // 2 + (1 << 20)) // 2)
    mock.add(text_reply(text))
    session = daemon.create_session()
    pages = [daemon.connect(session["id"]) for _ in range(2)]
    panel = daemon.connect_thread(session["id"])
    pages[0].send_message("write a lot")
    readers = [gevent.spawn(page.wait_event, lambda p: p.get("type") == "result", 240, "the result") for page in pages]
    readers.append(gevent.spawn(panel.wait_for, lambda f: f["type"] == "state" and f["session"]["status"] == "idle",
                                240, "idle"))
    gevent.joinall(readers, raise_error=True)  # a socket cut (1013) raises ConnectionClosed here
    for page in pages:
        assert next(p for p in page.events() if p.get("type") == "result")["result"] == text
        assistant = next(p for p in page.events() if p.get("type") == "assistant")
        assert assistant["message"]["content"][0]["text"] == text
    assert [i["text"] for i in panel.items().values() if i["kind"] == "assistant"] == [text]
    assert "behind: closing it with 1013" not in daemon.log()
    for socket in [*pages, panel]:
        socket.close()

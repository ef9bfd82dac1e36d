#!/usr/bin/env python3
"""A stand-in for Claude Code's stream-json mode, fast and predictable enough to benchmark with.

    FAKE_CLAUDE_FRAMES=100000 FAKE_CLAUDE_RATE=0 bench/fake_claude.py -p --input-format stream-json ...

devhostd runs it through the manifest (``[devtools.chat.claude-code] command = [python3,
"bench/fake_claude.py"]``) and passes its own environment down, so the benchmarks configure it
with environment variables:

- ``FAKE_CLAUDE_FRAMES`` (default 100): text-delta ``stream_event`` frames per turn;
- ``FAKE_CLAUDE_RATE`` (default 0): delta frames per second; 0 writes them as fast as it can.

It speaks as much of the protocol as devhostd needs (shapes copied from
tests/fixtures/claude-frames/): it answers the ``initialize`` control request (which makes the
session ready) and the other control requests devhostd sends, and answers each user message
with ``command_lifecycle`` queued (devhostd's send acknowledgement) at once, then a whole
turn: ``command_lifecycle`` started, ``system/init``, the user echo, the stream events, the ``assistant`` message,
``result`` and ``command_lifecycle`` completed. Every text delta ends with
``"fake_sent_ns":<time.time_ns()>`` taken as it is made (when paced: just before it is
written and flushed): CLOCK_REALTIME, so a client in another process can subtract it from its
own receive time. Turns run one after another in a thread of their own, so control requests
are answered at once; an interrupt does not cut a turn short. Arguments are ignored; the
process exits at once on end_session or when its stdout is gone, and after its last turn at
stdin's end.
"""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import uuid

SESSION_ID = str(uuid.uuid4())
MODEL = "claude-fake-1"
CAPABILITIES = ["interrupt_receipt_v1", "interrupt_cancel_queued_v1", "msg_lifecycle_v1"]
FRAMES_BEFORE_DELTAS = 6  # lifecycle queued + started, system/init, user echo, message_start, block start
FRAMES_AFTER_DELTAS = 6  # block stop, assistant, message_delta, message_stop, result, lifecycle completed

# One text delta: bench/history.py's SAMPLE (~300 bytes) plus the stamp, ~365 bytes. A counter
# stands in for the random part of the uuid (uuid4() per frame would make this the bottleneck).
DELTA = (b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":'
         b'"text_delta","text":"one two three four five six seven eight nine ten "}},"session_id":'
         b'"%s","parent_tool_use_id":null,"uuid":"89ed44f2-6066-45a6-a04c-%%012x","api_message_id":'
         b'"msg_fake_f2083ef562dd49a4","fake_sent_ns":%%d}\n' % SESSION_ID.encode())


def frames_per_turn(deltas: int) -> int:
    """How many stdout frames one turn writes (devhostd keeps every one as an event)."""
    return FRAMES_BEFORE_DELTAS + deltas + FRAMES_AFTER_DELTAS


def main() -> int:
    deltas = int(os.environ.get("FAKE_CLAUDE_FRAMES", "100"))
    rate = float(os.environ.get("FAKE_CLAUDE_RATE", "0"))
    out = sys.stdout.buffer  # thread-safe: one write() is one whole line, never interleaved
    turns: queue.Queue = queue.Queue()
    # Turns run in a thread of their own so that control requests (end_session above all) are
    # answered at once, as the real CLI answers them, even in the middle of a long turn.
    worker = threading.Thread(target=run_turns, args=(out, turns, deltas, rate), daemon=True)
    worker.start()
    try:
        for line in sys.stdin.buffer:
            try:
                frame = json.loads(line)
            except ValueError:
                continue
            if not isinstance(frame, dict):
                continue
            if frame.get("type") == "control_request":
                if not answer_control(out, frame):
                    os._exit(0)  # end_session: a turn still being written ends here, as the real CLI's
            elif frame.get("type") == "user":
                write(out, lifecycle(frame.get("uuid") or str(uuid.uuid4()), "queued"))
                out.flush()
                turns.put(frame)
        turns.put(None)  # stdin's end: the turns already asked for still run, then the process exits
        worker.join()
    except BrokenPipeError:
        pass  # devhostd went away: nothing left to say
    return 0


def run_turns(out, turns: queue.Queue, deltas: int, rate: float) -> None:
    try:
        for user in iter(turns.get, None):
            run_turn(out, user, deltas, rate)
    except BrokenPipeError:
        os._exit(0)


def write(out, value: dict) -> None:
    out.write(json.dumps(value, separators=(",", ":")).encode() + b"\n")


def answer_control(out, frame: dict) -> bool:
    """Answers one control request; False once the session should end."""
    request_id = frame.get("request_id")
    subtype = (frame.get("request") or {}).get("subtype")
    replies = {
        "initialize": {"commands": [], "models": [{"value": "default", "displayName": "Default (fake)",
                                                    "description": "bench/fake_claude.py"}],
                       "capabilities": CAPABILITIES, "pid": os.getpid(), "claude_code_version": "fake"},
        "interrupt": {"still_queued": []},
        "set_model": {"model": MODEL},
        "end_session": None,
    }
    if subtype in replies:
        response = {"subtype": "success", "request_id": request_id}
        if replies[subtype] is not None:
            response["response"] = replies[subtype]
    else:
        response = {"subtype": "error", "request_id": request_id,
                    "error": f"Unsupported control request subtype: {subtype}", "error_code": "unsupported_request"}
    write(out, {"type": "control_response", "response": response})
    out.flush()
    return subtype != "end_session"


def lifecycle(message_id: str, state: str) -> dict:
    return {"type": "command_lifecycle", "command_uuid": message_id, "state": state, "uuid": str(uuid.uuid4()),
            "session_id": SESSION_ID}


def stream_event(event: dict) -> dict:
    return {"type": "stream_event", "event": event, "session_id": SESSION_ID, "parent_tool_use_id": None,
            "uuid": str(uuid.uuid4()), "api_message_id": "msg_fake_f2083ef562dd49a4"}


def run_turn(out, user: dict, deltas: int, rate: float) -> None:
    message_id = user.get("uuid") or str(uuid.uuid4())
    for value in (lifecycle(message_id, "started"),
                  {"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION_ID,
                   "model": MODEL, "permissionMode": "default", "capabilities": CAPABILITIES,
                   "uuid": str(uuid.uuid4())},
                  {**user, "session_id": SESSION_ID, "parent_tool_use_id": None, "uuid": message_id, "isReplay": True},
                  stream_event({"type": "message_start", "message": {"id": "msg_fake_f2083ef562dd49a4",
                                "type": "message", "role": "assistant", "model": MODEL, "content": []}}),
                  stream_event({"type": "content_block_start", "index": 0,
                                "content_block": {"type": "text", "text": ""}})):
        write(out, value)
    out.flush()  # the acknowledgement goes out at once, as the real CLI's does
    started = time.monotonic()
    write_deltas(out, deltas, rate)
    for value in (stream_event({"type": "content_block_stop", "index": 0}),
                  {"type": "assistant", "message": {"id": "msg_fake_f2083ef562dd49a4", "type": "message",
                   "role": "assistant", "model": MODEL, "content": [{"type": "text", "text": "(fake reply)"}]},
                   "parent_tool_use_id": None, "session_id": SESSION_ID, "uuid": str(uuid.uuid4())},
                  stream_event({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                "usage": {"output_tokens": deltas}}),
                  stream_event({"type": "message_stop"}),
                  {"type": "result", "subtype": "success", "is_error": False, "result": "(fake reply)",
                   "stop_reason": "end_turn", "terminal_reason": "completed", "session_id": SESSION_ID,
                   "duration_ms": int((time.monotonic() - started) * 1000), "num_turns": 1,
                   "usage": {"input_tokens": 10, "output_tokens": deltas}, "total_cost_usd": 0,
                   "uuid": str(uuid.uuid4()), "user_message_uuid": message_id},
                  lifecycle(message_id, "completed")):
        write(out, value)
    out.flush()


def write_deltas(out, count: int, rate: float) -> None:
    if rate <= 0:
        # As fast as possible: the buffered writer hands the pipe large chunks.
        for n in range(count):
            out.write(DELTA % (n, time.time_ns()))
        out.flush()
        return
    # Paced on an absolute schedule so sleep overshoot does not add up over a long turn.
    start = time.monotonic()
    for n in range(count):
        delay = start + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        out.write(DELTA % (n, time.time_ns()))
        out.flush()


if __name__ == "__main__":
    sys.exit(main())

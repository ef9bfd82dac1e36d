"""How the event history performs against the simplest alternatives, measured in one run.

    python3 bench/history.py [events]

Prints ratios, not absolute times (those depend on the machine):
- append: EventHistory.append versus a bare os.write of the same bytes (the cost of msgpack
  framing and the offset index);
- snapshot: streaming a snapshot from disk as pre-encoded event frames versus decoding every
  payload and re-encoding the whole snapshot as one JSON document (what keeping parsed
  events in memory would cost at attach time);
- memory: bytes of index per event versus keeping the raw payloads in memory.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from storage.history import EventHistory

SAMPLE = (b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":'
          b'"text_delta","text":"one two three four five six seven eight nine ten"}},"session_id":'
          b'"0a564029-9209-48df-a3b3-b1216130fd54","parent_tool_use_id":null,"uuid":'
          b'"89ed44f2-6066-45a6-a04c-89dc3317c6dc","api_message_id":"msg_mock_f2083ef562dd49a4"}')


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main(count: int) -> None:
    history = EventHistory()
    plain_fd, plain_path = tempfile.mkstemp()
    os.unlink(plain_path)
    try:
        append = timed(lambda: [history.append(SAMPLE) for _ in range(count)])
        bare = timed(lambda: [os.write(plain_fd, SAMPLE) for _ in range(count)])

        def stream():
            for sequence, raw in history.read():
                b'{"type":"event","sequence":%d,"payload":%s}' % (sequence, raw)

        def reencode():
            events = [{"type": "event", "sequence": n, "payload": json.loads(raw)} for n, raw in history.read()]
            json.dumps({"type": "snapshot", "events": events})

        streamed = timed(stream)
        rebuilt = timed(reencode)
        index_bytes = history._offsets.itemsize
        print(f"events: {count}")
        print(f"append / bare os.write: {append / bare:.2f}x")
        print(f"snapshot streamed from disk / decode+re-encode: {streamed / rebuilt:.2f}x")
        print(f"memory per event: index {index_bytes} B / raw payload {len(SAMPLE)} B = "
              f"{index_bytes / len(SAMPLE):.3f}x")
    finally:
        history.close()
        os.close(plain_fd)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

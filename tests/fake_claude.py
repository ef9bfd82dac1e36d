#!/usr/bin/env python3
"""A scripted Claude Code for fast actor tests: it replays frames the real CLI was recorded
writing (tests/fixtures/claude-frames/), keyed on what it reads.

Run as Claude Code would be (devhostd adds the same flags; ``--resume=<id>`` keeps that session
id). What it reads, and what it answers, in the recorded frames' own shapes and order:

- ``control_request`` initialize -> the recorded initialize answer; interrupt -> the recorded
  interrupt answer, and a running turn ends as it did then (``error_during_execution``, its
  message ``cancelled``); end_session -> exit 0; anything else -> the recorded error answer;
- a ``user`` message -> ``command_lifecycle`` queued at once; started when no turn runs (a
  message during a turn waits for it, as the CLI queues it), then a turn chosen by its text:
  - ``approve ...``: a Bash tool_use asks ``can_use_tool`` and waits for the answer (allow:
    the tool result and "done"; deny: "Understood.");
  - ``hang ...``: starts and never ends, until an interrupt;
  - ``silent ...``: no lifecycle frame and no turn at all (an acknowledgement that never comes);
  - ``die ...``: says something on stderr and exits 1;
  - ``deaf ...``: starts a turn, then closes its stdin and stays alive (it reads nothing more);
  - ``flood ...``: writes ``FLOOD_BYTES`` to stdout without a line break, then waits;
  - anything else: the recorded streamed reply, its text replaced by "echo: <text>";
- a ``control_response``: the answer to the pending ``can_use_tool``.

With ``--never-ready`` it reads everything and answers nothing (``initialize`` included).

Every frame carries this process's session id and fresh uuids; ``command_uuid`` is the message's.
"""
from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-frames"
FLOOD_BYTES = 65 * 1024 * 1024  # past the longest line devhostd reads (actors/cli_process.py)


def recorded(name: str) -> list[dict]:
    """The frames the CLI wrote in a recording (what devhostd read), in order."""
    frames = []
    for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["dir"] == "cli->host":
            frames.append(record["frame"])
    return frames


def recorded_answer(name: str, subtype: str) -> dict:
    """The recorded control_response to the control_request of ``subtype``."""
    lines = [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]
    for index, record in enumerate(lines):
        frame = record["frame"]
        if record["dir"] == "host->cli" and frame.get("type") == "control_request" \
                and frame["request"]["subtype"] == subtype:
            return next(r["frame"] for r in lines[index:] if r["dir"] == "cli->host"
                        and r["frame"].get("type") == "control_response"
                        and r["frame"]["response"]["request_id"] == frame["request_id"])
    raise LookupError(subtype)


PLAIN = recorded("queued")  # two turns; the first one is replayed
APPROVAL = recorded("perm_allow")
INTERRUPTED = recorded("perm_pending_interrupt")


class FakeClaude:
    def __init__(self, session_id: str):
        self.session_id = session_id
        self.waiting: list[tuple[str, str]] = []  # (message uuid, text) queued behind the turn
        self.turn: tuple[str, str] | None = None
        self.asking: dict | None = None  # the can_use_tool request waiting for its answer

    def write(self, frame: dict) -> None:
        sys.stdout.write(json.dumps(frame, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def mine(self, frame: dict, message_id: str | None = None) -> dict:
        """A recorded frame made this process's: its session, fresh uuids, the message's id."""
        frame = json.loads(json.dumps(frame))
        if "session_id" in frame:
            frame["session_id"] = self.session_id
        if "uuid" in frame:
            frame["uuid"] = str(uuid.uuid4())
        if "command_uuid" in frame and message_id is not None:
            frame["command_uuid"] = message_id
        return frame

    def lifecycle(self, message_id: str, state: str) -> None:
        template = next(f for f in PLAIN if f.get("type") == "command_lifecycle")
        self.write({**self.mine(template, message_id), "state": state})

    # ---- what it reads -------------------------------------------------------------------------

    def read(self, frame: dict) -> bool:
        """Handles one frame; False when the process should end."""
        kind = frame.get("type")
        if kind == "control_request":
            return self.control(frame)
        if kind == "control_response" and self.asking is not None:
            self.answered(frame["response"].get("response") or {})
        elif kind == "user":
            self.message(frame)
        return True

    def control(self, frame: dict) -> bool:
        subtype = frame["request"]["subtype"]
        if subtype == "end_session":
            return False
        if subtype == "initialize":
            answer = recorded_answer("initialize", "initialize")
        elif subtype == "interrupt":
            answer = recorded_answer("perm_pending_interrupt", "interrupt")
        elif subtype == "set_model":
            answer = {"type": "control_response", "response": {"subtype": "success", "response": {}}}
        else:
            answer = recorded_answer("initialize", "no_such_subtype")
        answer = json.loads(json.dumps(answer))
        answer["response"]["request_id"] = frame["request_id"]
        self.write(answer)
        if subtype == "interrupt" and self.turn is not None:
            self.cancel_turn()
        return True

    def message(self, frame: dict) -> None:
        message_id = frame.get("uuid") or str(uuid.uuid4())
        content = frame["message"]["content"]
        text = content if isinstance(content, str) else " ".join(
            block.get("text", "") for block in content if isinstance(block, dict))
        if text.startswith("silent"):
            return
        if text.startswith("die"):
            sys.stderr.write("fake claude: asked to die\n")
            sys.stderr.flush()
            os._exit(1)
        if text.startswith("deaf"):
            os.close(0)  # before it says anything: whatever devhost writes after that fails
            self.lifecycle(message_id, "queued")
            self.lifecycle(message_id, "started")
            wait_to_be_ended()
        if text.startswith("flood"):
            sys.stdout.buffer.write(b"x" * FLOOD_BYTES)
            sys.stdout.flush()
            wait_to_be_ended()
        self.lifecycle(message_id, "queued")
        self.waiting.append((message_id, text))
        if self.turn is None:
            self.next_turn()

    # ---- turns ---------------------------------------------------------------------------------

    def next_turn(self) -> None:
        if not self.waiting:
            return
        self.turn = self.waiting.pop(0)
        message_id, text = self.turn
        self.lifecycle(message_id, "started")
        self.write(self.mine(next(f for f in PLAIN if f.get("subtype") == "init")))
        if text.startswith("hang"):
            return
        if text.startswith("approve"):
            self.write(self.mine(APPROVAL[1]))  # the assistant's tool_use
            request = self.mine(APPROVAL[2])
            request["request_id"] = str(uuid.uuid4())
            self.asking = request
            self.write(request)
            return
        self.reply(f"echo: {text}")

    def reply(self, text: str) -> None:
        """The first recorded turn's stream, its text replaced; then its result and completion."""
        first_result = next(i for i, f in enumerate(PLAIN) if f.get("type") == "result")
        recorded_id = next(f for f in PLAIN if f.get("type") == "assistant")["message"]["id"]
        message_id = f"msg_fake_{uuid.uuid4().hex[:16]}"  # each reply a message of its own
        for frame in PLAIN[:first_result + 1]:
            frame = json.loads(json.dumps(frame).replace(recorded_id, message_id))
            kind = frame.get("type")
            if kind in ("command_lifecycle",) or frame.get("subtype") in ("init", "status") or kind == "user":
                continue
            frame = self.mine(frame)
            event = frame.get("event") or {}
            if event.get("type") == "content_block_delta":
                if event["delta"].get("text") is None or self._sent_text:
                    continue
                event["delta"]["text"] = text
                self._sent_text = True
            if kind == "assistant":
                frame["message"]["content"] = [{"type": "text", "text": text}]
            if kind == "result":
                frame["result"] = text
            self.write(frame)
        self._sent_text = False
        self.finish("completed")

    _sent_text = False

    def answered(self, answer: dict) -> None:
        self.asking = None
        if answer.get("behavior") == "allow":
            self.write(self.mine(APPROVAL[3]))  # the tool's result
            self.reply("done")
        else:
            self.reply("Understood.")

    def cancel_turn(self) -> None:
        if self.asking is not None:
            self.write({"type": "control_cancel_request", "request_id": self.asking["request_id"]})
            self.asking = None
        result = self.mine(next(f for f in INTERRUPTED if f.get("type") == "result"))
        self.write(result)
        self.finish("cancelled")

    def finish(self, state: str) -> None:
        message_id, _ = self.turn
        self.lifecycle(message_id, state)
        self.turn = None
        self.next_turn()


def wait_to_be_ended() -> None:
    while True:
        time.sleep(3600)


def main(argv: list[str]) -> int:
    resume = next((arg.split("=", 1)[1] for arg in argv if arg.startswith("--resume=")), None)
    fake = FakeClaude(resume or str(uuid.uuid4()))
    for line in sys.stdin:
        line = line.strip()
        if "--never-ready" in argv:
            continue
        if line and not fake.read(json.loads(line)):
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

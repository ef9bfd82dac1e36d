#!/usr/bin/env python3
"""A scripted ``codex app-server`` for fast actor tests: it replays frames the real Codex was
recorded writing (tests/fixtures/codex-frames/), keyed on the JSON-RPC requests it reads.

- ``initialize`` -> the recorded answer; ``thread/start`` / ``thread/resume`` -> the recorded
  thread (its id this process's, or the one resumed), then ``thread/started``;
- ``turn/start`` -> the recorded answer with a fresh turn id, ``turn/started``, the user
  message item (its ``clientId`` the request's ``clientUserMessageId``), then by its text:
  - ``approve ...``: a command item asks ``item/commandExecution/requestApproval`` and waits
    for the answer (accept: the command completes and "finished"; otherwise "declined");
  - ``hang ...``: nothing more, until ``turn/interrupt``;
  - anything else: the recorded agent message, its text "echo: <text>", and ``turn/completed``;
- ``turn/steer`` -> the recorded answer, and the steered text joins the running turn;
- ``turn/interrupt`` -> ``{}`` and the turn completes ``interrupted``;
- any other request -> the JSON-RPC error the real server gives an unknown method.

With ``--never-ready`` it reads everything and answers nothing (``initialize`` included).
"""
from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "codex-frames"


def recorded(name: str) -> list[tuple[str, dict]]:
    out = []
    for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "msg" in record:
            out.append((record["dir"], record["msg"]))
    return out


BASIC = recorded("frames-basic")
APPROVAL = recorded("frames-cmd-approval-untrusted")


def answer_to(frames, method: str) -> dict:
    """The recorded result of the first request of ``method``."""
    request = next(m for d, m in frames if d == ">" and m.get("method") == method)
    return next(m for d, m in frames if d == "<" and m.get("id") == request["id"] and "method" not in m)["result"]


def notification(frames, method: str, nth: int = 0) -> dict:
    return [m for d, m in frames if d == "<" and m.get("method") == method and "id" not in m][nth]


class FakeCodex:
    def __init__(self):
        self.thread_id = str(uuid.uuid4())
        self.turn_id: str | None = None
        self.asking: dict | None = None
        self.next_request = 0

    def write(self, frame: dict) -> None:
        text = json.dumps(frame, separators=(",", ":"))
        for recorded_id in self._recorded_ids:
            text = text.replace(recorded_id, self.thread_id)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    _recorded_ids = (answer_to(BASIC, "thread/start")["thread"]["id"],
                     answer_to(APPROVAL, "thread/start")["thread"]["id"])

    def turn(self, frame: dict) -> dict:
        """A recorded notification of a turn, made this turn's."""
        frame = json.loads(json.dumps(frame))
        params = frame.get("params", {})
        if "turnId" in params:
            params["turnId"] = self.turn_id
        if isinstance(params.get("turn"), dict):
            params["turn"]["id"] = params["turn"]["rootTurnId"] = self.turn_id
        return frame

    def read(self, frame: dict) -> None:
        method, request_id = frame.get("method"), frame.get("id")
        if method is None and request_id is not None and self.asking is not None:
            self.answered(frame.get("result") or {})
        elif method == "initialize":
            self.write({"id": request_id, "result": answer_to(BASIC, "initialize")})
        elif method in ("thread/start", "thread/resume"):
            if method == "thread/resume":
                self.thread_id = frame["params"]["threadId"]
            self.write({"id": request_id, "result": answer_to(BASIC, "thread/start")})
            self.write(notification(BASIC, "thread/started"))
        elif method == "turn/start":
            self.start_turn(request_id, frame["params"])
        elif method == "turn/steer":
            self.write({"id": request_id, "result": {"turnId": self.turn_id}})
            self.user_item(frame["params"])
        elif method == "turn/interrupt":
            self.write({"id": request_id, "result": {}})
            self.complete("interrupted")
        elif request_id is not None and method is not None:
            self.write({"id": request_id, "error": {"code": -32601, "message": f"unknown method {method}"}})

    def start_turn(self, request_id, params: dict) -> None:
        self.turn_id = str(uuid.uuid4())
        result = json.loads(json.dumps(answer_to(BASIC, "turn/start")))
        result["turn"]["id"] = result["turn"]["rootTurnId"] = self.turn_id
        self.write({"id": request_id, "result": result})
        self.write(self.turn(notification(BASIC, "turn/started")))
        text = self.user_item(params)
        if text.startswith("hang"):
            return
        if text.startswith("approve"):
            self.write(self.turn(notification(APPROVAL, "item/started", 1)))  # the command item
            ask = self.turn(next(m for d, m in APPROVAL if m.get("method") == "item/commandExecution/requestApproval"))
            ask["id"] = self.next_request
            self.next_request += 1
            self.asking = ask
            self.write(ask)
            return
        self.agent_message(f"echo: {text}")
        self.complete("completed")

    def user_item(self, params: dict) -> str:
        text = " ".join(item.get("text", "") for item in params.get("input") or [] if item.get("type") == "text")
        item_id = str(uuid.uuid4())
        for method in ("item/started", "item/completed"):
            frame = self.turn(notification(BASIC, method))
            item = frame["params"]["item"]
            item.update(id=item_id, clientId=params.get("clientUserMessageId"),
                        content=[{"type": "text", "text": text, "text_elements": []}])
            self.write(frame)
        return text

    def agent_message(self, text: str) -> None:
        item_id = f"msg_{uuid.uuid4().hex[:8]}"
        started = self.turn(notification(BASIC, "item/started", 1))
        started["params"]["item"]["id"] = item_id
        self.write(started)
        delta = self.turn(notification(BASIC, "item/agentMessage/delta"))
        delta["params"].update(itemId=item_id, delta=text)
        self.write(delta)
        completed = self.turn(notification(BASIC, "item/completed", 1))
        completed["params"]["item"].update(id=item_id, text=text)
        self.write(completed)

    def answered(self, result: dict) -> None:
        ask, self.asking = self.asking, None
        self.write({"method": "serverRequest/resolved", "params": {"threadId": self.thread_id,
                                                                    "requestId": ask["id"]}})
        accepted = result.get("decision") in ("accept", "acceptForSession")
        self.agent_message("finished" if accepted else "declined")
        self.complete("completed")

    def complete(self, status: str) -> None:
        if self.turn_id is None:
            return
        if self.asking is not None:
            self.write({"method": "serverRequest/resolved", "params": {"threadId": self.thread_id,
                                                                        "requestId": self.asking["id"]}})
            self.asking = None
        done = self.turn(notification(BASIC, "turn/completed"))
        done["params"]["turn"]["status"] = status
        self.write(done)
        self.turn_id = None


def main() -> int:
    fake = FakeCodex()
    for line in sys.stdin:
        line = line.strip()
        if line and "--never-ready" not in sys.argv:
            fake.read(json.loads(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""An answer that comes when the CLI acts (a steer), and how an edge waits for it."""
from __future__ import annotations

STEER_WAIT = 20.0  # seconds chat.send waits for the CLI to take a steer up or refuse it


class Later:
    """An answer that comes when the CLI acts: a steer is answered by what the CLI did with it
    (taken up, or refused); without word in STEER_WAIT it is what it is until then (queued: it
    goes out after the turn if the CLI never takes it). A socket waits for it in a greenlet of
    its own, so the client's next requests are not held up."""

    def __init__(self, result, meanwhile: dict):
        self.result, self.meanwhile = result, meanwhile

    def wait(self) -> dict:
        return self.result.get() if self.result.wait(STEER_WAIT) else self.meanwhile


def settled(answer: dict) -> dict:
    """``answer`` with a Later result waited for (the HTTP route answers once it is known)."""
    if isinstance(answer.get("result"), Later):
        return {**answer, "result": answer["result"].wait()}
    return answer

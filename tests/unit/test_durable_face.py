"""actors.durable_face: what a chat's attached clients are told, numbered as the log numbers it."""
from __future__ import annotations

import pykka

from actors import durable_record
from actors.durable_face import DurableFace
from actors.harness import claude
from actors.messages import ChatEvent
from storage.chat_store import ChatStore, read_log
from tests.sinks import Sink


class Everyone:
    """The connected core clients: none but the one attached here."""

    def broadcast(self, message) -> None:
        pass


class Owner(pykka.ThreadingActor):
    """The chat actor the face's timers report to."""


def test_text_held_back_at_a_fold_reaches_clients_under_its_own_seq_after_what_came_before(tmp_path, monkeypatch):
    # Deltas to two items in turn: each delta to one item sends the other's held text, and the
    # log, folded every few lines, logs the text still held before it writes the record. Every
    # event reaches the client once, in the log's order, under the seq the log gave it.
    monkeypatch.setattr(durable_record, "FOLD_LOG_BYTES", 300)
    owner = Owner.start()
    try:
        store = ChatStore(str(tmp_path / "chats"))
        face = DurableFace(chat_id="c1", harness=claude, cwd=str(tmp_path), model=None,
                           runtime_mode="full-access", store=store, clients=Everyone(), registry=None,
                           actor_ref=owner)
        sink = Sink()
        face.clients.join(sink)
        face.new_process(claude.Projection("p1"))
        ops = [("upsert", {"id": "a", "kind": "assistant", "text": ""}),
               ("upsert", {"id": "b", "kind": "reasoning", "text": ""})]
        for n in range(40):
            ops.append(("append", "a" if n % 2 else "b", f"<{n}>", None))
        face._apply(ops)
        face.flush_delta()
        told = [message for message in sink.frames if isinstance(message, ChatEvent)]
        seqs = [message.seq for message in told]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        logged = read_log(store.log_path("c1"))
        by_seq = {line["seq"]: line["event"] for line in logged}
        assert all(by_seq.get(m.seq, m.event) == m.event for m in told)  # the same event under each seq
        text = {"a": "", "b": ""}
        for message in told:
            if message.event["type"] == "delta":
                text[message.event["itemId"]] += message.event["text"]
        assert text == {"a": "".join(f"<{n}>" for n in range(1, 40, 2)),
                        "b": "".join(f"<{n}>" for n in range(0, 40, 2))}
    finally:
        owner.stop()

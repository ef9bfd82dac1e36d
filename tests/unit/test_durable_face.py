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


def _face(tmp_path, owner, **kwargs) -> DurableFace:
    return DurableFace(chat_id="c1", harness=claude, cwd=str(tmp_path), model=None, runtime_mode="full-access",
                       store=ChatStore(str(tmp_path / "chats")), clients=Everyone(), registry=None, actor_ref=owner,
                       **kwargs)


EARLIER = [{"id": "turn-saved-1", "turnId": "turn-saved-1", "kind": "turn", "state": "done", "createdAt": 1},
           {"id": "user-saved-1", "turnId": "turn-saved-1", "kind": "user", "text": "Name the otter", "createdAt": 1},
           {"id": "saved:a1", "turnId": "turn-saved-1", "kind": "assistant", "text": "Otto.", "createdAt": 2}]


def test_a_chat_made_to_resume_a_conversation_it_could_not_read_takes_the_agents_replay_first_once(tmp_path):
    # An ACP agent's conversation, resumed by its id: devhostd read no transcript of it, so the
    # chat starts empty; the person's message may go in before the agent has replayed it.
    owner = Owner.start()
    try:
        face = _face(tmp_path, owner, resume="ses_1", imported=[])
        sink = Sink()
        face.clients.join(sink)
        face.new_process(claude.Projection("p1"))
        face.open_turn("turn-1", "and now?", "user-1")
        assert face.earlier([dict(item) for item in EARLIER]) is True
        assert face.thread.order == ["turn-saved-1", "user-saved-1", "saved:a1", "turn-1", "user-1"]
        assert face.info["activeTurnId"] == "turn-1"
        assert face.info["suggestedTitle"] == "Name the otter"  # the conversation's first message names it
        resets = [m.event for m in sink.frames if isinstance(m, ChatEvent) and m.event["type"] == "reset"]
        assert [i["id"] for i in resets[-1]["items"]] == face.thread.order  # clients hold what the thread holds
        # The agent replays it again on every later load (its CLI let go, then started again):
        # the chat holds it now, and takes nothing more.
        assert face.earlier([{**item, "id": item["id"] + "-again"} for item in EARLIER]) is False
        assert len(face.thread.order) == 5
        # What the log holds reads back as the thread was.
        again = _face(tmp_path, owner, stored=ChatStore(str(tmp_path / "chats")).load("c1"))
        assert again.thread.order == face.thread.order
        assert again.earlier([dict(item) for item in EARLIER]) is False  # a chat restored from disk holds its own
    finally:
        owner.stop()


def test_a_chat_that_read_the_transcript_or_resumes_nothing_takes_no_replay(tmp_path):
    owner = Owner.start()
    try:
        imported = _face(tmp_path / "a", owner, resume="ses_1", imported=[dict(item) for item in EARLIER[:2]])
        assert imported.earlier([dict(item) for item in EARLIER]) is False
        assert imported.thread.order == ["turn-saved-1", "user-saved-1"]
        new = _face(tmp_path / "b", owner)
        assert new.earlier([dict(item) for item in EARLIER]) is False and new.thread.order == []
    finally:
        owner.stop()

"""A rewind of a conversation, on the recorded frames (tests/fixtures/record_rewind.py).

The turns keep the CLI's own ids of them (``native`` on the turn item, through the real
projections and the durable face); ``anchor_for`` picks what a rewind needs from them; Codex's
driver asks for ``thread/revert`` and reads its replies; Claude Code's command line carries the
anchor. The recordings say what the real CLIs did with the same ids (docs/rewind.md).
"""
from __future__ import annotations

import json
from pathlib import Path

import pykka
import pytest

from actors.durable_face import DurableFace
from actors.harness import claude, codex
from actors.harness import effects as fx
from actors.harness.rewind import Anchor, NoAnchor, anchor_for
from storage.chat_store import ChatStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def lines(folder: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / folder / "rewind.jsonl").read_text().splitlines()]


def notes(folder: str, name: str) -> list[dict]:
    key = "frame" if folder == "claude-frames" else "msg"
    return [line[key] for line in lines(folder) if line["dir"] == "note" and line[key]["note"] == name]


class Everyone:
    def broadcast(self, message) -> None:
        pass


@pytest.fixture
def face(tmp_path):
    owner = pykka.ThreadingActor.start()
    made = []

    def make(harness):
        made.append(DurableFace(chat_id="c1", harness=harness, cwd=str(tmp_path), model=None,
                                runtime_mode="full-access", store=ChatStore(str(tmp_path / "chats")),
                                clients=Everyone(), registry=None, actor_ref=owner))
        return made[-1]

    yield make
    owner.stop()


def claude_turns(face) -> list[dict]:
    """The recording's Claude Code turns applied as a chat applies them: a turn opens at each
    message devhost wrote and ends at the CLI's result; each process has its own driver."""
    face = face(claude)
    driver, turn = None, 0
    for line in lines("claude-frames"):
        frame = line["frame"]
        if line["dir"] == "note" and frame["note"] == "spawn":
            driver = claude.ClaudeDriver()
            face.new_process(driver.projection)
        elif line["dir"] == "host->cli" and frame.get("type") == "user":
            turn += 1
            face.begin_turn(f"t{turn}")
        elif line["dir"] == "cli->host":
            _keep, _effects, ops = driver.read(frame)
            face._apply(ops)
            if frame.get("type") == "result":
                face.finish_turn("done" if frame.get("subtype") == "success" else "error")
    return face.thread.turns()


def codex_turns(face) -> list[dict]:
    face = face(codex)
    projection = codex.Projection("g")
    face.new_process(projection)
    turn = 0
    for line in lines("codex-frames"):
        msg = line["msg"]
        if line["dir"] == ">" and msg.get("method") == "turn/start":
            turn += 1
            face.begin_turn(f"t{turn}")
        elif line["dir"] == "<" and "method" in msg:
            face._apply(projection.notification(msg["method"], msg.get("params") or {}))
            if msg["method"] == "turn/completed":
                face.finish_turn("done")
    return face.thread.turns()


# ---- what a turn keeps ---------------------------------------------------------------------------

def test_a_claude_turn_keeps_the_uuid_of_its_last_chain_entry(face):
    turns = claude_turns(face)
    written = [line["frame"] for line in lines("claude-frames") if line["dir"] == "cli->host"]
    assistants = [f["uuid"] for f in written if f.get("type") == "assistant"]
    [rewind] = notes("claude-frames", "rewind")
    # Turn 1's last entry is its reply: the anchor the recording resumed at, which kept alpha.
    assert turns[0]["native"] == {"lastUuid": rewind["resume_at"]} == {"lastUuid": assistants[0]}
    assert [t["native"]["lastUuid"] for t in turns[1:4]] == assistants[1:4]
    # The stale anchor's turn got no entry at all (Claude Code refused before the prompt).
    assert "native" not in turns[4] and turns[4]["state"] == "error"


def test_a_codex_turn_keeps_its_turn_id(face):
    turns = codex_turns(face)
    started = [line["msg"]["params"]["turn"]["id"] for line in lines("codex-frames")
               if line["dir"] == "<" and line["msg"].get("method") == "turn/started"]
    assert [t["native"] for t in turns] == [{"turnId": turn_id} for turn_id in started] and len(started) == 4


# ---- the anchor ----------------------------------------------------------------------------------

def test_claude_rewinds_a_turn_to_the_last_entry_of_the_turn_before(face):
    turns = claude_turns(face)
    [rewind] = notes("claude-frames", "rewind")
    assert anchor_for("claude", turns[:2], "t2") == Anchor(resume_at=rewind["resume_at"])
    # (a later turn is rewound past the earlier ones: the last entry before it counts)
    assert anchor_for("claude", turns, "t4") == Anchor(resume_at=turns[2]["native"]["lastUuid"])


def test_turns_a_rewind_took_out_anchor_nothing_and_cannot_be_rewound_again(face):
    turns = claude_turns(face)[:3]
    turns[1] = {**turns[1], "rewound": True}  # t2 rewound: t3 followed t1 in the conversation
    assert anchor_for("claude", turns, "t3") == Anchor(resume_at=turns[0]["native"]["lastUuid"])
    with pytest.raises(NoAnchor, match="rewound already"):
        anchor_for("claude", turns, "t2")


def test_claude_rewinding_the_first_turn_keeps_nothing_so_a_new_conversation_starts(face):
    assert anchor_for("claude", claude_turns(face), "t1") == Anchor(fresh=True)


def test_claude_cannot_rewind_past_turns_whose_entries_devhostd_never_saw():
    turns = [{"id": "read-back", "kind": "turn", "origin": "user"}, {"id": "t2", "native": {"lastUuid": "u2"}}]
    with pytest.raises(NoAnchor, match="not run by this devhostd"):
        anchor_for("claude", turns, "t2")


def test_codex_rewinds_a_turn_by_its_own_id(face):
    turns = codex_turns(face)
    [sent] = [line["msg"] for line in lines("codex-frames") if line["dir"] == ">" and line["msg"].get("id") == 30]
    assert anchor_for("codex", turns, "t2") == Anchor(before_turn=sent["params"]["beforeTurnId"])


def test_a_turn_codex_never_named_or_that_is_not_in_the_chat_has_no_anchor():
    with pytest.raises(NoAnchor, match="Codex never named that turn"):
        anchor_for("codex", [{"id": "t1", "kind": "turn"}], "t1")
    with pytest.raises(NoAnchor, match="no turn 'gone'"):
        anchor_for("codex", [{"id": "t1", "kind": "turn"}], "gone")


# ---- what the recordings say the CLIs did with it ---------------------------------------------------

def test_claude_resumed_at_the_anchor_leaves_the_rewound_turn_out_of_every_later_request():
    saw = [n["messages"] for n in notes("claude-frames", "model saw")]
    assert saw[2] == [["user", "remember the word alpha"], ["assistant", "Noted: alpha."],
                      ["user", "what words do you remember?"]]
    assert all("beta" not in text for messages in saw[2:] for _, text in messages)  # a plain resume too
    spawns = [n["argv"] for n in notes("claude-frames", "spawn")]
    assert spawns[2][-1].startswith("--resume=")  # the plain resume after the rewound one


def test_claude_keeps_the_session_id_and_chains_the_next_message_to_the_anchor():
    written = [line["frame"] for line in lines("claude-frames") if line["dir"] == "cli->host"]
    assert len({f["session_id"] for f in written if f.get("session_id")}) == 1
    [transcript] = notes("claude-frames", "transcript")
    [rewind] = notes("claude-frames", "rewind")
    parents = {uuid: parent for _kind, uuid, parent in transcript["chain"]}
    assert parents["55550000-0000-4000-8000-000000000003"] == rewind["resume_at"]  # the file is not cut
    assert "55550000-0000-4000-8000-000000000002" in parents


def test_codex_reverted_leaves_the_rewound_turn_out_of_the_next_requests_and_after_a_resume():
    saw = [n["messages"] for n in notes("codex-frames", "model saw")]
    assert saw[2] == [["user", "remember the word alpha"], ["assistant", "Noted: alpha."],
                      ["user", "what words do you remember?"]]
    assert all("beta" not in text for messages in saw[2:] for _, text in messages)


# ---- the drivers -----------------------------------------------------------------------------------

def test_claude_command_line_resumes_at_the_anchor_only_with_a_resume():
    argv = claude.command_line(("claude",), resume_id="s1", resume_at="u1")
    assert argv[-2:] == ["--resume=s1", "--resume-session-at=u1"]
    assert not any(a.startswith("--resume") for a in claude.command_line(("claude",), resume_at="u1"))
    assert claude.ClaudeDriver().rewind_frames("t") is None  # a running process cannot rewind


def codex_replies() -> dict:
    return {line["msg"]["id"]: line["msg"] for line in lines("codex-frames")
            if line["dir"] == "<" and "id" in line["msg"] and "method" not in line["msg"]}


def test_codex_reverts_the_live_thread_and_reads_the_reply():
    driver = codex.CodexDriver(cwd="/w")
    initialize = driver.start_frames()[0]
    assert driver.rewind_frames("turn-2") == []  # no thread yet: held
    [write] = driver.read({"id": initialize["id"], "result": {}})[1]
    thread_start = write.frames[-1]
    ready = driver.read({"id": thread_start["id"], "result": codex_replies()[2]["result"]})[1]
    revert = next(e.frames[0] for e in ready if isinstance(e, fx.Write))
    assert revert["method"] == "thread/revert"
    assert revert["params"] == {"threadId": codex_replies()[2]["result"]["thread"]["id"], "beforeTurnId": "turn-2"}
    assert any(isinstance(e, fx.Deadline) and e.request_id == revert["id"] for e in ready)
    reply = {**codex_replies()[30], "id": revert["id"]}  # what Codex answered the recorded revert
    assert driver.read(reply)[1] == [fx.Rewound(True, "Codex took the conversation back to before that turn")]


def test_codex_refusing_a_revert_says_why():
    driver = codex.CodexDriver(cwd="/w")
    driver.thread_id = "thread"
    frame = driver.rewind_frames("gone")[0]
    refused = {**codex_replies()[31], "id": frame["id"]}  # a turn the thread no longer holds
    [rewound] = driver.read(refused)[1]
    assert not rewound.ok and "turn not found" in rewound.message


def test_codex_not_answering_a_revert_in_time_is_a_rewind_that_may_not_have_held():
    driver = codex.CodexDriver(cwd="/w")
    driver.thread_id = "thread"
    frame = driver.rewind_frames("t")[0]
    found = driver.expire(frame["id"])
    assert any(isinstance(e, fx.Rewound) and not e.ok and "may or may not" in e.message for e in found)

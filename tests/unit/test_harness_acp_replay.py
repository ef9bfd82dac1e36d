"""actors.harness.acp.replay: what an ACP agent replays on session/load, as a chat's first items
(the person's messages opening turns, the agent's part projected as in a live turn), on the
recorded OpenCode run (tests/fixtures/acp/opencode/load.jsonl) and on schema-shaped updates."""
from actors.harness.acp.replay import Replay
from tests.unit.acp_frames import lines


def replayed_updates() -> list[dict]:
    """The updates OpenCode sent between the second process's session/load and its answer."""
    recorded = lines("load")
    load_at = next(i for i, line in enumerate(recorded) if line["msg"].get("method") == "session/load")
    out = []
    for line in recorded[load_at + 1:]:
        message = line["msg"]
        if line["dir"] == "<" and message.get("id") == 2:
            return out
        if line["dir"] == "<" and message.get("method") == "session/update":
            out.append(message["params"]["update"])
    raise AssertionError("no answer to session/load in the recording")


def shape(items: list[dict]) -> list[tuple]:
    return [(i["kind"], i.get("text") or i.get("state")) for i in items]


def text(value: str, kind: str = "agent_message_chunk", message: str | None = None) -> dict:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": value}}
    return {**update, "messageId": message} if message else update


def test_the_recorded_replay_is_a_turn_with_the_persons_message_and_the_agents_answer():
    replay = Replay()
    for update in replayed_updates():
        replay.update(update)
    items = replay.items()
    assert shape(items) == [("turn", "done"), ("user", "First question."), ("assistant", "First answer.")]
    turn = items[0]["id"]
    assert all(item["turnId"] == turn for item in items)
    assert not any(item.get("streaming") for item in items)  # nothing replayed still streams
    assert all(item["createdAt"] > 0 for item in items)


def test_each_message_of_the_person_opens_its_turn_and_chunks_of_one_message_join():
    replay = Replay()
    added = "\n\n---\nInstructions from devhost:\nEdit the files here."  # what devhostd appended
    for update in [text("Hel", "user_message_chunk", "u1"), text("lo" + added, "user_message_chunk", "u1"),
                   text("Hi.", message="a1"), text("Again", "user_message_chunk", "u2"),
                   text("Next", "user_message_chunk", "u3"), text("Sure.", message="a2")]:
        replay.update(update)
    items = replay.items()
    assert shape(items) == [("turn", "done"), ("user", "Hello"), ("assistant", "Hi."),
                            ("turn", "done"), ("user", "Again"),
                            ("turn", "done"), ("user", "Next"), ("assistant", "Sure.")]
    assert len({item["id"] for item in items}) == len(items)


def test_a_tool_call_the_replay_never_finished_is_not_left_running():
    replay = Replay()
    replay.update(text("list the files", "user_message_chunk", "u1"))
    replay.update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "status": "pending"})
    replay.update({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "cat", "status": "pending"})
    replay.update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                   "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}]})
    tools = [item for item in replay.items() if item["kind"] == "tool"]
    assert [(t["name"], t["state"], t.get("output")) for t in tools] == [("ls", "done", "a.txt"),
                                                                          ("cat", "error", None)]


def test_the_agents_part_before_any_message_of_the_persons_and_other_kinds_make_nothing():
    replay = Replay()
    replay.update(text("orphan"))
    replay.update({"sessionUpdate": "available_commands_update", "availableCommands": []})
    assert replay.items() == []
    replay.update(text("an image only", "user_message_chunk"))
    replay.update({"sessionUpdate": "user_message_chunk", "content": {"type": "image", "data": "", "mimeType": "x"}})
    assert shape(replay.items()) == [("turn", "done"), ("user", "an image only")]

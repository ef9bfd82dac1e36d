"""actors.core.background and the thread: background work a CLI's end stopped is kept until
the agent is told, and the note that tells it names each piece."""
from actors.core import background
from actors.core.thread import Thread, new_info


def with_background_work() -> Thread:
    thread = Thread(new_info("c1", "claude-code", "/tmp", None, "full-access"))
    thread.open_turn("turn-1")
    thread.upsert({"id": "sub-1", "kind": "subagent", "toolUseId": "tu-1", "taskId": "a1", "status": "running",
                   "description": "review the parser"})
    thread.upsert({"id": "task-1", "kind": "task", "taskId": "b1", "status": "running", "description": "",
                   "command": "npm run watch"})
    thread.upsert({"id": "task-2", "kind": "task", "taskId": "b2", "status": "done", "description": "Build"})
    thread.info["background"] = [{"taskId": "a1", "kind": "subagent", "description": "review the parser"}]
    return thread


def test_what_a_cli_end_stops_is_kept_in_info_with_its_words():
    thread = with_background_work()
    events = thread.stop_background()
    assert [thread.items[i]["status"] for i in ("sub-1", "task-1", "task-2")] == ["stopped", "stopped", "done"]
    assert thread.info["backgroundStopped"] == [{"kind": "subagent", "description": "review the parser"},
                                                {"kind": "task", "description": "npm run watch"}]
    assert thread.info["background"] == [] and events[-1]["type"] == "info"
    assert thread.stop_background() == []  # nothing runs any more: nothing more to keep, no event


def test_a_clear_forgets_it():
    thread = with_background_work()
    thread.stop_background()
    thread.reset()
    assert "backgroundStopped" not in thread.info


def test_the_note_names_each_piece_of_work_and_says_it_will_not_report_back():
    kept = background.remember(None, [{"kind": "subagent", "description": "review\nthe  parser"},
                                      {"kind": "task", "description": "", "command": "npm run watch"},
                                      {"kind": "task", "taskId": "b9"}])
    said = background.note(kept)
    assert "- a subagent: review the parser\n- a background task: npm run watch\n- a background task: b9\n" in said
    assert "will not report back" in said and "Start again whatever of it you still need." in said


def test_what_is_kept_is_bounded_and_each_description_clipped():
    many = [{"kind": "task", "description": f"task {n} " + "x" * 10_000} for n in range(40)]
    kept = background.remember(background.remember(None, many[:20]), many[20:])
    assert len(kept) == background.MAX_KEPT and kept[-1]["description"].startswith("task 39 ")
    assert all(len(e["description"]) == background.DESCRIPTION_CHARS for e in kept)

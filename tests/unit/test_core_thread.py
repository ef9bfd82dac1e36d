"""actors.core.thread: a core chat's items and info, and the events that change them."""
import copy
import json

from actors.core.deltas import DeltaJoiner
from actors.core.thread import NOT_RESUMED, Thread, new_info


def fresh(chat_id="c1") -> Thread:
    return Thread(new_info(chat_id, "claude-code", "/tmp", None, "full-access"))


def running(thread: Thread, turn_id="turn-1") -> Thread:
    thread.open_turn(turn_id)
    return thread


def approval(request_id, decision="pending") -> dict:
    return {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id, "toolUseId": None,
            "toolName": "Bash", "input": {}, "description": None, "canAllowAlways": False, "decision": decision}


def question(request_id, state="pending") -> dict:
    return {"id": f"question-{request_id}", "kind": "question", "requestId": request_id,
            "questions": [{"id": "0", "header": "", "question": "?", "choices": [], "multiSelect": False}],
            "answers": None, "state": state}


def kinds(events) -> list[str]:
    return [e["type"] for e in events]


# ---- upsert -------------------------------------------------------------------------------------

def test_an_upsert_of_a_new_item_adds_it_with_one_item_event_at_the_next_index():
    thread = fresh()
    thread.upsert({"id": "a", "kind": "note", "level": "info", "text": "one"})
    events = thread.upsert({"id": "b", "kind": "note", "level": "info", "text": "two"})
    assert kinds(events) == ["item"] and events[0]["historyIndex"] == 1 and events[0]["item"]["text"] == "two"
    assert [i["id"] for i in thread.snapshot()["items"]] == ["a", "b"]


def test_an_upsert_by_an_existing_id_replaces_in_place_and_keeps_its_history_index():
    thread = fresh()
    for item_id in ("a", "b", "c"):
        thread.upsert({"id": item_id, "kind": "note", "level": "info", "text": item_id})
    events = thread.upsert({"id": "b", "kind": "note", "level": "info", "text": "B"})
    assert events[0]["historyIndex"] == 1
    assert [i["text"] for i in thread.snapshot()["items"]] == ["a", "B", "c"]


def test_an_upsert_merges_into_the_item_so_fields_it_leaves_out_stay():
    thread = running(fresh())
    thread.upsert({"id": "tool", "kind": "tool", "name": "Bash", "input": {"command": "ls"}, "output": None,
                   "state": "running"})
    thread.upsert({"id": "tool", "kind": "tool", "output": "a.txt", "state": "done"})
    tool = thread.item("tool")
    assert tool["name"] == "Bash" and tool["input"] == {"command": "ls"} and tool["output"] == "a.txt"


def test_a_new_item_gets_a_creation_time_and_the_active_turn():
    thread = running(fresh(), "turn-9")
    thread.upsert({"id": "a", "kind": "assistant", "text": "", "streaming": True})
    item = thread.item("a")
    assert item["turnId"] == "turn-9" and isinstance(item["createdAt"], int)


def test_a_replacement_keeps_the_creation_time_and_turn_of_the_first_version():
    thread = running(fresh(), "turn-1")
    thread.upsert({"id": "a", "kind": "assistant", "text": "", "streaming": True})
    first = dict(thread.item("a"))
    thread.end_turn("done")
    thread.open_turn("turn-2")
    thread.upsert({"id": "a", "kind": "assistant", "text": "x", "streaming": False})
    assert thread.item("a")["createdAt"] == first["createdAt"] and thread.item("a")["turnId"] == "turn-1"


def test_an_item_outside_a_turn_has_turn_id_null():
    thread = fresh()
    thread.upsert({"id": "n", "kind": "note", "level": "info", "text": "hi"})
    assert thread.item("n")["turnId"] is None


def test_an_upsert_of_an_approval_also_sends_the_info():
    thread = running(fresh())
    assert kinds(thread.upsert(approval("r1"))) == ["item", "info"]


def test_an_upsert_of_an_ordinary_item_sends_no_info():
    thread = running(fresh())
    assert kinds(thread.upsert({"id": "a", "kind": "assistant", "text": "", "streaming": True})) == ["item"]


# ---- append_text --------------------------------------------------------------------------------

def test_append_text_adds_to_the_items_text_and_answers_one_delta():
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "text": "Hel", "streaming": True})
    assert thread.append_text("a", "lo") == [{"type": "delta", "itemId": "a", "text": "lo"}]
    assert thread.item("a")["text"] == "Hello"


def test_append_text_to_an_item_without_text_starts_it():
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "streaming": True})
    thread.append_text("a", "x")
    assert thread.item("a")["text"] == "x"


def test_append_text_to_an_unknown_item_changes_nothing():
    thread = running(fresh())
    assert thread.append_text("nope", "x") == [] and thread.item("nope") is None


def test_append_of_empty_text_sends_nothing():
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "text": "x", "streaming": True})
    assert thread.append_text("a", "") == [] and thread.item("a")["text"] == "x"


# ---- open_turn / add_user -----------------------------------------------------------------------

def test_open_turn_adds_a_running_turn_item_that_is_its_own_turn():
    thread = fresh()
    events = thread.open_turn("turn-1")
    turn = thread.item("turn-1")
    assert turn["kind"] == "turn" and turn["state"] == "running" and turn["turnId"] == "turn-1"
    assert turn["origin"] == "user" and turn["endedAt"] is None
    assert "costUsd" not in turn  # no cost is made up: only what a CLI reported (below)
    assert kinds(events) == ["item", "info"]


def test_open_turn_makes_the_turn_active_and_the_chat_running():
    thread = fresh()
    thread.open_turn("turn-1")
    assert thread.info["activeTurnId"] == "turn-1" and thread.info["status"] == "running" and thread.busy()


def test_open_turn_clears_an_earlier_failure():
    thread = fresh()
    thread.mark_failed()
    thread.open_turn("turn-1")
    thread.end_turn("done")
    assert thread.info["status"] == "idle"


def test_add_user_puts_the_persons_text_in_the_turn():
    thread = running(fresh(), "turn-1")
    thread.add_user("turn-1", "hello", item_id="user-queued-1")
    user = thread.item("user-queued-1")
    assert (user["kind"], user["turnId"], user["text"]) == ("user", "turn-1", "hello")


def test_add_user_without_an_id_makes_a_host_id():
    thread = running(fresh(), "turn-1")
    [event] = thread.add_user("turn-1", "hello")
    assert event["item"]["id"].startswith("user-")


# ---- end_turn -----------------------------------------------------------------------------------

def test_end_turn_closes_the_turns_streaming_items():
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "text": "x", "streaming": True})
    thread.upsert({"id": "t", "kind": "thinking", "text": "y", "streaming": True})
    thread.end_turn("done")
    assert thread.item("a")["streaming"] is False and thread.item("t")["streaming"] is False
    assert thread.item("a")["text"] == "x"


def test_end_turn_leaves_streaming_items_of_other_turns_alone():
    thread = fresh()
    thread.upsert({"id": "old", "kind": "assistant", "text": "x", "streaming": True, "turnId": "turn-0"})
    running(thread, "turn-1").end_turn("done")
    assert thread.item("old")["streaming"] is True


def test_end_turn_fails_running_tools_and_keeps_finished_ones():
    thread = running(fresh())
    thread.upsert({"id": "t1", "kind": "tool", "name": "Bash", "state": "running"})
    thread.upsert({"id": "t2", "kind": "tool", "name": "Bash", "state": "done"})
    thread.end_turn("done")
    assert thread.item("t1")["state"] == "error" and thread.item("t2")["state"] == "done"


def test_an_aborted_turn_cancels_its_pending_approvals_and_questions():
    thread = running(fresh())
    thread.upsert(approval("r1"))
    thread.upsert(question("r2"))
    thread.end_turn("aborted")
    assert thread.item("approval-r1")["decision"] == "cancelled" and thread.item("question-r2")["state"] == "cancelled"
    assert thread.pending_requests() == [] and thread.info["requests"] == []


def test_a_turn_ended_by_a_dead_process_cancels_pending_requests():
    thread = running(fresh())
    thread.upsert(approval("r1"))
    thread.end_turn("error", process_gone=True)
    assert thread.item("approval-r1")["decision"] == "cancelled"


def test_a_turn_ending_done_keeps_requests_still_pending():
    thread = running(fresh())
    thread.upsert(approval("r1"))
    thread.end_turn("done")
    assert thread.item("approval-r1")["decision"] == "pending" and thread.info["status"] == "needs-you"


def test_a_turn_ending_in_error_with_the_process_alive_keeps_pending_requests():
    thread = running(fresh())
    thread.upsert(question("r1"))
    thread.end_turn("error")
    assert thread.item("question-r1")["state"] == "pending"


def test_answered_requests_are_not_cancelled_by_an_abort():
    thread = running(fresh())
    thread.upsert(approval("r1", decision="allow"))
    thread.upsert(question("r2", state="answered"))
    thread.end_turn("aborted")
    assert thread.item("approval-r1")["decision"] == "allow" and thread.item("question-r2")["state"] == "answered"


def test_end_turn_sets_the_state_and_end_time_and_frees_the_chat():
    thread = running(fresh(), "turn-1")
    events = thread.end_turn("aborted")
    turn = thread.item("turn-1")
    assert turn["state"] == "aborted" and isinstance(turn["endedAt"], int)
    assert thread.info["activeTurnId"] is None and thread.info["status"] == "idle" and not thread.busy()
    assert events[-1]["type"] == "info"


def test_end_turn_counts_the_turn_and_keeps_the_cost_it_was_given():
    thread = running(fresh(), "turn-1")
    thread.end_turn("done", cost=0.25)
    thread.open_turn("turn-2")
    thread.end_turn("done")
    assert thread.info["usage"] == {"turns": 2}  # the chat's cost is what the CLI reports (durable_face)
    assert thread.item("turn-1")["costUsd"] == 0.25 and "costUsd" not in thread.item("turn-2")


def test_end_turn_without_a_running_turn_does_nothing():
    thread = fresh()
    assert thread.end_turn("done") == []
    thread.open_turn("turn-1")
    thread.end_turn("done")
    assert thread.end_turn("aborted") == [] and thread.item("turn-1")["state"] == "done"


def test_a_failure_outlives_the_turn_as_status_error():
    thread = running(fresh())
    thread.mark_failed()
    thread.end_turn("error", process_gone=True)
    assert thread.info["status"] == "error"


# ---- info.requests ------------------------------------------------------------------------------

def test_a_pending_request_puts_a_summary_in_the_info_and_the_chat_needs_you():
    thread = running(fresh())
    thread.upsert(approval("r1"))
    [summary] = thread.info["requests"]
    assert summary == {"requestId": "r1", "itemId": "approval-r1", "kind": "approval",
                       "createdAt": thread.item("approval-r1")["createdAt"],
                       "approval": {"toolName": "Bash"}}  # its short form: tests/unit/test_core_summaries.py
    assert thread.info["status"] == "needs-you"


def test_the_info_lists_at_most_eight_requests_oldest_first():
    thread = running(fresh())
    for n in range(10):
        thread.upsert(approval(f"r{n}") if n % 2 else question(f"r{n}"))
    assert [r["requestId"] for r in thread.info["requests"]] == [f"r{n}" for n in range(8)]
    assert [r["kind"] for r in thread.info["requests"]][:2] == ["question", "approval"]


def test_a_settled_request_leaves_the_summaries_and_the_next_one_moves_up():
    thread = running(fresh())
    for n in range(9):
        thread.upsert(approval(f"r{n}"))
    thread.upsert({**thread.item("approval-r0"), "decision": "allow"})
    assert [r["requestId"] for r in thread.info["requests"]] == [f"r{n}" for n in range(1, 9)]


def test_the_last_settled_request_brings_the_status_back():
    thread = running(fresh())
    thread.upsert(question("r1"))
    thread.upsert({**thread.item("question-r1"), "state": "answered"})
    assert thread.info["requests"] == [] and thread.info["status"] == "running"


def test_a_waiting_requests_summary_is_made_once_and_info_events_reuse_it():
    thread = running(fresh())
    thread.upsert({**approval("r1"), "input": {"command": "echo " + "y" * 400_000}})
    [made] = thread.info["requests"]
    for _ in range(3):
        thread.set_info(runtimeMode="approval-required")  # what chat.configure does
    assert thread.info["requests"][0] is made


def test_a_request_stored_again_while_it_waits_gets_a_new_summary():
    thread = running(fresh())
    thread.upsert(approval("r1"))
    thread.upsert({**thread.item("approval-r1"), "input": {"command": "ls"}})
    assert thread.info["requests"][0]["approval"]["command"] == "ls"
    thread.apply({"type": "item", "item": {**thread.item("approval-r1"), "input": {"command": "pwd"}}})
    assert thread.refresh_info()[0]["info"]["requests"][0]["approval"]["command"] == "pwd"


def test_a_replayed_log_lists_its_pending_requests_in_order():
    thread = fresh()
    for event in [{"type": "item", "item": {**approval("r1"), "createdAt": 1}},
                  {"type": "item", "item": {"id": "n", "kind": "note", "level": "info", "text": "x"}},
                  {"type": "item", "item": {**question("r2"), "createdAt": 2}},
                  {"type": "item", "item": {**approval("r1", "allow"), "createdAt": 1}}]:
        thread.apply(event)
    assert [i["id"] for i in thread.pending_requests()] == ["question-r2"]
    thread.apply({"type": "reset", "info": thread.info, "items": []})
    assert thread.pending_requests() == []


# ---- abort_interrupted --------------------------------------------------------------------------

def test_the_not_resumed_prefix_is_the_seeds_words():
    assert NOT_RESUMED == "This turn could not be resumed after the machine restarted: "


def test_abort_interrupted_aborts_the_running_turn_with_a_warning_note():
    thread = running(fresh(), "turn-1")
    thread.abort_interrupted("this machine does not resume turns")
    notes = [i for i in thread.snapshot()["items"] if i["kind"] == "note"]
    assert [(n["level"], n["text"], n["turnId"]) for n in notes] == [
        ("warning", "This turn could not be resumed after the machine restarted: this machine does not resume turns",
         "turn-1")]
    assert thread.item("turn-1")["state"] == "aborted" and thread.info["activeTurnId"] is None


def test_abort_interrupted_settles_what_the_turn_left_open():
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "text": "half", "streaming": True})
    thread.upsert({"id": "t", "kind": "tool", "name": "Bash", "state": "running"})
    thread.upsert(approval("r1"))
    thread.abort_interrupted("why")
    assert thread.item("a")["streaming"] is False and thread.item("t")["state"] == "error"
    assert thread.item("approval-r1")["decision"] == "cancelled" and thread.info["status"] == "idle"


def test_abort_interrupted_with_no_running_turn_does_nothing():
    thread = running(fresh())
    thread.end_turn("done")
    count = len(thread.order)
    assert thread.abort_interrupted("why") == [] and len(thread.order) == count


# ---- reset --------------------------------------------------------------------------------------

def test_reset_empties_the_thread_and_sends_the_info_with_no_items():
    thread = running(fresh())
    thread.add_user("turn-1", "hi")
    thread.mark_failed()
    events = thread.reset()
    assert events == [{"type": "reset", "info": thread.info, "items": []}]
    assert thread.snapshot()["items"] == [] and thread.failed is False


def test_after_a_reset_history_indexes_start_again_at_zero():
    thread = fresh()
    thread.upsert({"id": "a", "kind": "note", "level": "info", "text": "a"})
    thread.reset()
    assert thread.upsert({"id": "b", "kind": "note", "level": "info", "text": "b"})[0]["historyIndex"] == 0


# ---- apply: replaying the log -------------------------------------------------------------------

class Logged:
    """A thread driven by operations, its events written down as the log would hold them."""

    def __init__(self, joined: bool = False):
        self.thread = fresh()
        self.start = copy.deepcopy(self.thread.info)
        self.log: list[dict] = []
        self._joiner = DeltaJoiner() if joined else None

    def emit(self, events):
        if events and self._joiner:
            self._write(self._joiner.flush())
        self._write(events)

    def delta(self, item_id, text):
        events = self.thread.append_text(item_id, text)
        if self._joiner is None:
            self._write(events)
            return
        for event in events:
            out, _ = self._joiner.add(event)
            self._write(out)

    def _write(self, events):
        self.log += [json.loads(json.dumps(e)) for e in events]  # what reached disk at that moment

    def replayed(self) -> Thread:
        if self._joiner:
            self._write(self._joiner.flush())
        thread = Thread(copy.deepcopy(self.start))
        for event in self.log:
            thread.apply(event)
        return thread


def _conversation(logged: Logged) -> None:
    t = logged.thread
    logged.emit(t.open_turn("turn-1"))
    logged.emit(t.add_user("turn-1", "hello", item_id="user-1"))
    logged.emit(t.upsert({"id": "g:m1:0:think", "kind": "thinking", "text": "", "streaming": True}))
    logged.delta("g:m1:0:think", "Let me ")
    logged.delta("g:m1:0:think", "think.")
    logged.emit(t.upsert({"id": "g:m1:1", "kind": "assistant", "text": "", "streaming": True}))
    for word in ("Hel", "lo ", "there"):
        logged.delta("g:m1:1", word)
    logged.emit(t.upsert({"id": "g:toolu_1", "kind": "tool", "name": "Bash", "input": {"command": "ls"},
                          "output": None, "state": "running"}))
    logged.emit(t.upsert(approval("r1")))
    logged.emit(t.upsert({**t.item("approval-r1"), "decision": "allow"}))
    logged.emit(t.upsert({"id": "g:toolu_1", "kind": "tool", "output": "a.txt", "state": "done"}))
    logged.emit(t.upsert({"id": "g:m1:1", "kind": "assistant", "text": "Hello there", "streaming": False}))
    logged.emit(t.end_turn("done", cost=0.01))
    logged.emit(t.open_turn("turn-2"))
    logged.emit(t.add_user("turn-2", "again", item_id="user-2"))
    logged.emit(t.upsert({"id": "g:m2:0", "kind": "assistant", "text": "", "streaming": True}))
    logged.delta("g:m2:0", "cut sh")
    logged.emit(t.upsert(question("r2")))
    logged.emit(t.note("error", "Claude Code exited with code 1"))
    t.mark_failed()
    logged.emit(t.end_turn("error", process_gone=True))
    logged.emit(t.set_info(running=False, agentSessionId="s-1"))


def test_replaying_the_logged_events_rebuilds_the_same_thread():
    logged = Logged()
    _conversation(logged)
    live = json.loads(json.dumps(logged.thread.snapshot()))
    assert logged.replayed().snapshot() == live


def test_replaying_joined_deltas_rebuilds_the_same_thread():
    logged = Logged(joined=True)
    _conversation(logged)
    assert sum(e["type"] == "delta" for e in logged.log) == 3  # one per item, however many arrived
    assert logged.replayed().snapshot() == json.loads(json.dumps(logged.thread.snapshot()))


def test_replaying_across_a_reset_keeps_only_what_came_after_it():
    logged = Logged()
    _conversation(logged)
    logged.emit(logged.thread.reset())
    logged.emit(logged.thread.open_turn("turn-3"))
    logged.emit(logged.thread.add_user("turn-3", "after the clear", item_id="user-3"))
    replayed = logged.replayed()
    assert [i["id"] for i in replayed.snapshot()["items"]] == ["turn-3", "user-3"]
    assert replayed.snapshot() == json.loads(json.dumps(logged.thread.snapshot()))


def test_replay_continues_a_thread_loaded_from_a_record():
    logged = Logged()
    _conversation(logged)
    half = len(logged.log) // 2
    partial = Thread(copy.deepcopy(logged.start))
    for event in logged.log[:half]:
        partial.apply(event)
    record = json.loads(json.dumps(partial.snapshot()))
    resumed = Thread(record["info"], record["items"])
    for event in logged.log[half:]:
        resumed.apply(event)
    assert resumed.snapshot() == json.loads(json.dumps(logged.thread.snapshot()))


def test_a_delta_for_an_item_the_log_never_made_is_ignored():
    thread = fresh()
    thread.apply({"type": "delta", "itemId": "ghost", "text": "boo"})
    assert thread.snapshot()["items"] == []


# ---- text streamed in many deltas -----------------------------------------------------------------

def test_text_streamed_in_thousands_of_deltas_reads_whole_wherever_it_is_read():
    """Deltas are kept as pieces and joined when the item is read (a long reply must not cost
    each delta the whole text so far); every way of reading sees the whole text."""
    thread = running(fresh())
    thread.upsert({"id": "a", "kind": "assistant", "text": "", "streaming": True})
    pieces = [f"w{n} " for n in range(5000)]
    deltas = []
    for n, piece in enumerate(pieces):
        deltas += thread.append_text("a", piece)
        if n == 2500:
            assert thread.item("a")["text"] == "".join(pieces[:2501])  # a read mid-stream
    whole = "".join(pieces)
    assert [i["text"] for i in thread.snapshot()["items"] if i["id"] == "a"] == [whole]
    assert thread.upsert({"id": "a", "kind": "assistant", "streaming": False})[0]["item"]["text"] == whole
    replayed = Thread(new_info("c1", "claude-code", "/tmp", None, "full-access"))
    replayed.apply({"type": "item", "item": {"id": "a", "kind": "assistant", "text": "", "turnId": "turn-1"}})
    for event in deltas:
        replayed.apply(event)
    assert replayed.item("a")["text"] == whole
    ended = running(fresh("c2"))
    ended.upsert({"id": "b", "kind": "assistant", "text": "", "streaming": True})
    ended.append_text("b", "all of it")
    assert [e["item"]["text"] for e in ended.end_turn("done") if e["type"] == "item" and e["item"]["id"] == "b"] \
        == ["all of it"]



def test_a_chat_that_cannot_be_saved_reads_error_until_it_is_and_a_pending_request_still_comes_first():
    thread = fresh()
    thread.set_info(storeError="the disk is full")
    assert thread.info["status"] == "error"
    thread.upsert(approval("r1"))
    assert thread.refresh_info()[0]["info"]["status"] == "needs-you"
    thread.upsert(approval("r1", "allow"))
    assert thread.refresh_info()[0]["info"]["status"] == "error"
    thread.info.pop("storeError")
    assert thread.refresh_info()[0]["info"]["status"] == "idle"


# ---- rewind ---------------------------------------------------------------------------------------

def test_a_rewind_keeps_what_came_before_the_turn_and_drops_it_and_all_after():
    thread = fresh()
    running(thread, "turn-1")
    thread.add_user("turn-1", "first", "user-1")
    thread.end_turn("done")
    running(thread, "turn-2")
    thread.add_user("turn-2", "second", "user-2")
    thread.end_turn("done")
    running(thread, "turn-3")
    thread.end_turn("done")
    events = thread.rewind_to("turn-2")
    assert kinds(events) == ["reset"]
    assert [i["id"] for i in events[0]["items"]] == ["turn-1", "user-1"]
    assert thread.order == ["turn-1", "user-1"] and not thread.has("turn-3")
    assert thread.info["activeTurnId"] is None
    replayed = fresh()
    for event in events:
        replayed.apply(copy.deepcopy(event))
    assert replayed.snapshot()["items"] == thread.snapshot()["items"]  # the log replays it


# ---- prepend: a conversation its agent replayed -----------------------------------------------------

def test_prepended_items_go_before_a_turn_running_meanwhile_which_goes_on():
    thread = running(fresh(), "turn-now")
    thread.add_user("turn-now", "go on", "user-now")
    earlier = [{"id": "turn-saved-1", "turnId": "turn-saved-1", "kind": "turn", "state": "done"},
               {"id": "user-saved-1", "turnId": "turn-saved-1", "kind": "user", "text": "first"}]
    events = thread.prepend(earlier)
    assert kinds(events) == ["reset"]
    assert [i["id"] for i in events[0]["items"]] == ["turn-saved-1", "user-saved-1", "turn-now", "user-now"]
    assert thread.order == ["turn-saved-1", "user-saved-1", "turn-now", "user-now"]
    assert thread.info["activeTurnId"] == "turn-now"  # the running turn is still the running one
    thread.upsert({"id": "a1", "kind": "assistant", "text": "reply"})
    assert thread.order[-1] == "a1" and thread.item("a1")["turnId"] == "turn-now"
    replayed = fresh()
    for event in events:
        replayed.apply(copy.deepcopy(event))
    assert [i["id"] for i in replayed.snapshot()["items"]] == thread.order[:-1]  # the log replays it


# ---- in_order: what a history page reads ------------------------------------------------------------

def test_in_order_reads_the_items_as_the_snapshot_holds_them_text_streamed_in_included():
    from actors.core.history import page
    thread = running(fresh())
    for n in range(250):
        thread.upsert({"id": f"a{n}", "kind": "assistant", "text": f"{n}:"})
    thread.append_text("a249", " still streaming")
    thread.append_text("a3", " late")
    view = thread.in_order()
    assert len(view) == 251 and view[250]["text"] == "249: still streaming" and view[-1] is view[250]
    first = page(view, 0, None, 100)
    assert first == page(thread.snapshot()["items"], 0, None, 100)
    older = page(thread.in_order(), 0, "0:4", 100)
    assert [i["id"] for i in older["items"]] == ["turn-1", "a0", "a1", "a2"] and older["history"]["cursor"] is None
    assert view[4]["text"] == "3: late"

"""actors.harness.acp.projection: ACP session/update kinds and permission requests as thread
items, on the recorded OpenCode runs (tests/fixtures/acp/opencode/). Kinds OpenCode 1.18.33 did not
send in those runs (agent_thought_chunk, plan, ACP's own diff content) are checked on frames
shaped as the ACP schema has them, and say so."""
from actors.harness.acp import Projection
from tests.unit.acp_frames import agent_frames, updates


def projector():
    return Projection("p1")


def test_agent_message_chunks_append_to_one_assistant_item_per_message():
    p = projector()
    ops = [op for u in updates("basic", "agent_message_chunk") for op in p.update(u)]
    message = updates("basic", "agent_message_chunk")[0]["messageId"]
    assert [op[:3] for op in ops] == [("append", f"p1:{message}", t) for t in ("Hello ", "from ", "the ", "mock.")]
    assert ops[0][3] == {"id": f"p1:{message}", "kind": "assistant", "text": "", "streaming": True}


def test_thought_chunks_are_a_thinking_item_beside_the_message():  # schema-shaped: OpenCode sent none
    ops = projector().update({"sessionUpdate": "agent_thought_chunk", "messageId": "m1",
                              "content": {"type": "text", "text": "Let me see."}})
    assert ops == [("append", "p1:m1:think", "Let me see.",
                    {"id": "p1:m1:think", "kind": "thinking", "text": "", "streaming": True})]


def test_chunks_without_a_message_id_split_at_anything_else():
    p = projector()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}}
    first = p.update(chunk)[0][1]
    assert p.update(chunk)[0][1] == first
    p.update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"})
    assert p.update(chunk)[0][1] != first


def test_a_tool_call_runs_then_completes_with_its_output():
    p = projector()
    calls = updates("permission_allow", "tool_call") + updates("permission_allow", "tool_call_update")
    items = [p.update(u)[0][1] for u in calls]
    ref = calls[0]["toolCallId"]
    assert items[0] == {"id": f"p1:{ref}", "kind": "tool", "toolUseId": ref, "name": "bash", "input": {"cwd":
                        "/home/dev/tmp/work"}, "output": None, "state": "running", "parentToolUseId": None,
                        "toolKind": "execute", "locations": ["/home/dev/tmp/work"]}
    assert items[1]["name"] == "echo hi-from-bash" and items[1]["input"]["command"] == "echo hi-from-bash"
    assert items[-1]["state"] == "done" and items[-1]["output"] == "hi-from-bash\n"


def test_a_rejected_tool_call_fails():
    last = updates("permission_reject", "tool_call_update")[-1]
    item = projector().update(last)[0][1]
    assert item["state"] == "error" and "rejected" in item["output"]


def test_an_edit_carries_its_changes_from_opencodes_patch():
    item = projector().update(updates("edit", "tool_call_update")[-1])[0][1]
    assert item["state"] == "done"
    assert item["changes"][0]["path"] == "/home/dev/tmp/work/notes.txt"
    assert item["changes"][0]["kind"] == "update"
    assert "-old line\n+new line" in item["changes"][0]["diff"]


def test_acps_own_diff_content_becomes_a_unified_diff():  # schema-shaped
    item = projector().update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed",
                               "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "x\n", "newText": "y\n"},
                                           {"type": "diff", "path": "/w/new.txt", "oldText": None,
                                            "newText": "hi\n"}]})[0][1]
    assert item["changes"][0] == {"path": "/w/a.txt", "kind": "update",
                                  "diff": "--- /w/a.txt\n+++ /w/a.txt\n@@ -1 +1 @@\n-x\n+y\n"}
    assert item["changes"][1]["kind"] == "add" and "+hi" in item["changes"][1]["diff"]


def test_a_plan_is_one_item_replaced_whole():  # schema-shaped: OpenCode sends its plan as todowrite (below)
    p = projector()
    ops = p.update({"sessionUpdate": "plan", "entries": [
        {"content": "Read", "priority": "high", "status": "completed"},
        {"content": "Fix", "priority": "medium", "status": "in_progress"}]})
    assert ops == [("upsert", {"id": "p1:plan", "kind": "plan", "entries": [
        {"content": "Read", "status": "completed", "priority": "high"},
        {"content": "Fix", "status": "in_progress", "priority": "medium"}]})]
    assert p.update({"sessionUpdate": "plan", "entries": []})[0][1]["entries"] == []
    assert projector().update(updates("plan", "tool_call_update")[-1])[0][1]["state"] == "done"


def test_opencodes_todowrite_is_its_tool_call_and_the_plan_as_its_todos_say():
    p = projector()
    ops = [op for kind in ("tool_call", "tool_call_update") for u in updates("plan", kind) for op in p.update(u)]
    plans = [op[1] for op in ops if op[1]["kind"] == "plan"]
    assert plans and all(plan["id"] == "p1:plan" for plan in plans)  # one item, replaced whole
    assert plans[-1]["entries"] == [{"content": "Read the code", "status": "completed", "priority": "high"},
                                    {"content": "Write the fix", "status": "in_progress", "priority": "high"},
                                    {"content": "Run the tests", "status": "pending", "priority": "medium"}]
    tools = [op[1] for op in ops if op[1]["kind"] == "tool"]
    assert {t["id"] for t in tools} == {f"p1:{updates('plan', 'tool_call')[0]['toolCallId']}"}
    # Another tool whose input holds "todos" is no plan.
    other = projector().update({"sessionUpdate": "tool_call", "toolCallId": "t9", "title": "bash",
                                "rawInput": {"todos": [{"content": "x"}]}})
    assert [op[1]["kind"] for op in other] == ["tool"]


def test_updates_that_are_facts_not_items_make_none():
    p = projector()
    for kind in ("available_commands_update", "user_message_chunk", "current_mode_update", "config_option_update",
                 "usage_update", "something_newer"):
        assert p.update({"sessionUpdate": kind}) == []


def request_frame(name="permission_allow"):
    return next(f for f in agent_frames(name) if f.get("method") == "session/request_permission")


def test_a_permission_request_is_an_approval_with_the_agents_options():
    frame = request_frame()
    [(op, item)] = projector().project(frame)
    assert op == "upsert"
    assert item == {"id": "approval-p1:0", "kind": "approval", "requestId": "p1:0",
                    "toolUseId": frame["params"]["toolCall"]["toolCallId"], "toolName": "echo hi-from-bash",
                    "toolKind": "execute", "input": {"command": "echo hi-from-bash"},
                    "description": "echo hi-from-bash",
                    "options": [{"optionId": "once", "name": "Allow once", "kind": "allow_once"},
                                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
                    "canAllowAlways": True, "decision": "pending"}


def test_the_answer_is_the_option_the_decision_names():
    p = projector()
    p.project(request_frame())
    picked = lambda d: p.answer_approval("p1:0", d, None)["outcome"]  # noqa: E731
    assert picked("allow") == {"outcome": "selected", "optionId": "once"}
    assert picked("allow-always") == {"outcome": "selected", "optionId": "always"}
    assert picked("deny") == {"outcome": "selected", "optionId": "reject"}
    assert picked("always") == {"outcome": "selected", "optionId": "always"}  # an optionId itself
    assert p.decision_of({"outcome": {"outcome": "selected", "optionId": "once"}}) == "allow"
    assert p.decision_of({"outcome": {"outcome": "selected", "optionId": "always"}}) == "allow-always"
    assert p.decision_of({"outcome": {"outcome": "selected", "optionId": "reject"}}) == "deny"
    assert p.decision_of({"outcome": {"outcome": "cancelled"}}) == "deny"


def test_deny_with_no_rejecting_option_is_the_cancelled_outcome():
    p = projector()
    p.request(4, {"toolCall": {"toolCallId": "t"}, "options": [{"optionId": "ok", "kind": "allow_once"}]})
    assert p.answer_approval("p1:4", "deny", None) == {"outcome": {"outcome": "cancelled"}}


def test_request_ids_carry_the_prefix_and_map_back_to_the_agents_own():
    p = projector()
    p.project(request_frame())
    assert p.native("p1:0") == 0 and p.thread_id_of(0) == "p1:0"
    assert p.cancelled() == [("resolved", "p1:0")]  # the prompt ended with it open
    assert p.native("p1:0") is None

"""actors.harness.<cli>.projection: both CLIs' native frames turned into thread items.

Every test replays REAL recorded frames: tests/fixtures/claude-frames/ (Claude Code 2.1.328,
``cli->host`` lines; ask_question and thinking were made by tests/fixtures/record_claude_frames.py)
and tests/fixtures/codex-frames/ (codex-cli 0.169.0, ``<`` lines). Only what the CLI wrote is fed
to the projector; what devhost wrote is read only to check an answer's native shape.
"""
import json

import pytest

from actors.harness import HARNESSES
from actors.harness.claude.projection import ClaudeProjector
from actors.harness.codex.projection import CodexProjector
from actors.core.thread import Thread, new_info
from actors.harness.claude import session_only
from tests.projected import (FIXTURES, apply_ops, claude_frames, claude_written, codex_frames, ops, thread_from,
                             upserts)


def of_kind(thread: Thread, kind: str) -> list[dict]:
    return [item for item in thread.snapshot()["items"] if item["kind"] == kind]


RECORDED = [("claude-code", path.stem) for path in sorted((FIXTURES / "claude-frames").glob("*.jsonl"))] + [
    ("codex", path.stem) for path in sorted((FIXTURES / "codex-frames").glob("frames-*.jsonl"))]


@pytest.mark.parametrize("harness, name", RECORDED)
def test_a_running_cli_s_items_come_from_its_driver_s_one_reading_of_each_frame(harness, name):
    """The driver reads each frame once, for the link's effects and the thread's items: its
    items are the projection's of the frame, in the same order, with the projection's state."""
    module = HARNESSES[harness]
    frames = claude_frames(name) if harness == "claude-code" else codex_frames(name)
    driver, alone = module.Driver(projection=module.Projection("g")), module.Projection("g")
    read = [op for frame in frames for op in driver.read(frame)[2]]
    assert read == ops(alone, frames)


def test_each_harness_names_its_projection():
    assert {harness_id: module.Projection for harness_id, module in HARNESSES.items()} == {
        "claude-code": ClaudeProjector, "codex": CodexProjector}


# ---- Claude Code: text ----------------------------------------------------------------------------

def test_claude_a_streamed_reply_is_one_assistant_item_with_the_whole_text_and_streaming_closed():
    thread = thread_from(ClaudeProjector("g"), claude_frames("plain"))
    [assistant] = of_kind(thread, "assistant")
    assert assistant["text"] == "Hello from the mock." and assistant["streaming"] is False


def test_claude_deltas_go_to_the_streaming_item_that_the_block_start_made():
    result = ops(ClaudeProjector("g"), claude_frames("queued"))
    started = [op[1]["id"] for op in result if op[0] == "upsert" and op[1].get("streaming") is True]
    appended = [op for op in result if op[0] == "append"]
    assert len(started) == 2 and len(appended) == 12
    assert {op[1] for op in appended} == set(started) and all(op[3] is None for op in appended)
    first = "".join(op[2] for op in appended if op[1] == started[0])
    assert first == "one two three four five six seven eight nine ten eleven twelve"


def test_claude_the_final_assistant_frame_completes_the_streamed_item_instead_of_adding_one():
    thread = thread_from(ClaudeProjector("g"), claude_frames("queued"))
    assert [(i["text"], i["streaming"]) for i in of_kind(thread, "assistant")] == [
        ("one two three four five six seven eight nine ten eleven twelve", False),
        ("Answer to the second message.", False)]


def test_claude_items_are_named_after_the_process_id_prefix():
    projector = ClaudeProjector("1700000000000")
    items = upserts(projector, claude_frames("plain") + claude_frames("perm_allow"))
    cli_items = [i for i in items if i["kind"] not in ("approval", "question")]
    assert cli_items and all(i["id"].startswith("1700000000000:") for i in cli_items)


def test_claude_an_unstreamed_reply_is_a_finished_assistant_item():
    [item] = upserts(ClaudeProjector("g"), claude_frames("fold_during_tool"), "assistant")
    assert item["text"] == "after the tool" and item["streaming"] is False


def test_claude_echoed_user_messages_and_bookkeeping_frames_make_no_items():
    frames = [f for f in claude_frames("fold_during_tool") if f["type"] in ("user", "system", "result",
                                                                             "command_lifecycle")
              and (f["type"] != "user" or f.get("isReplay"))]
    # (what they do give is the turn's last chain entry, for a rewind: test_harness_rewind.py)
    assert frames and [op for op in ops(ClaudeProjector("g"), frames) if op[0] != "native"] == []


# ---- Claude Code: thinking ------------------------------------------------------------------------

def test_claude_thinking_is_a_thinking_item_with_the_whole_thought_and_streaming_closed():
    thread = thread_from(ClaudeProjector("g"), claude_frames("thinking"))
    [thinking] = of_kind(thread, "thinking")
    assert thinking["text"] == "Let me think about this." and thinking["streaming"] is False
    assert thinking["id"].endswith(":think")


def test_claude_thinking_deltas_go_to_the_thinking_item_and_text_deltas_to_the_reply():
    result = ops(ClaudeProjector("g"), claude_frames("thinking"))
    appended = [(op[1].endswith(":think"), op[2]) for op in result if op[0] == "append"]
    assert appended == [(True, "Let me think"), (True, " about this."), (False, "Thought it through.")]


def test_claude_the_thinking_comes_before_the_reply_in_the_thread():
    thread = thread_from(ClaudeProjector("g"), claude_frames("thinking"))
    assert [(i["kind"], i["text"]) for i in thread.snapshot()["items"] if i["kind"] in ("thinking", "assistant")] \
        == [("thinking", "Let me think about this."), ("assistant", "Thought it through.")]


# ---- Claude Code: tools and approvals -------------------------------------------------------------

def test_claude_a_tool_item_has_its_input_first_then_its_output_and_state_done():
    tools = upserts(ClaudeProjector("g"), claude_frames("perm_allow"), "tool")
    assert tools[0] == {"id": "g:toolu_3f05bb598f654e10b16e", "kind": "tool",
                        "toolUseId": "toolu_3f05bb598f654e10b16e", "name": "Bash",
                        "input": {"command": "touch made_by_tool.txt", "description": "Create a file"},
                        "output": None, "state": "running", "parentToolUseId": None}
    assert tools[-1]["id"] == tools[0]["id"]
    assert (tools[-1]["output"], tools[-1]["state"]) == ("(Bash completed with no output)", "done")


def test_claude_the_thread_keeps_one_tool_item_with_input_and_output():
    [tool] = of_kind(thread_from(ClaudeProjector("g"), claude_frames("perm_allow")), "tool")
    assert tool["input"]["command"] == "touch made_by_tool.txt" and tool["state"] == "done"
    assert tool["output"] == "(Bash completed with no output)"


def test_claude_a_tool_result_marked_as_an_error_is_state_error():
    [tool] = of_kind(thread_from(ClaudeProjector("g"), claude_frames("perm_pending_interrupt")), "tool")
    assert tool["state"] == "error" and "doesn't want to proceed" in tool["output"]


def test_claude_a_permission_request_is_a_pending_approval():
    [item] = upserts(ClaudeProjector("g"), claude_frames("perm_allow"), "approval")
    request_id = "262d350b-20dd-4e7b-8a7b-72df2d4b6d32"
    assert item == {"id": f"approval-{request_id}", "kind": "approval", "requestId": request_id,
                    "toolUseId": "toolu_3f05bb598f654e10b16e", "toolName": "Bash",
                    "input": {"command": "touch made_by_tool.txt", "description": "Create a file"},
                    "description": "Create a file", "canAllowAlways": True, "decision": "pending"}


def test_claude_an_approval_can_be_always_allowed_only_when_the_cli_proposes_rules():
    [frame] = [f for f in claude_frames("perm_allow") if f["type"] == "control_request"]
    no_rules = {**frame, "request_id": "other", "request": {
        **frame["request"], "permission_suggestions": [s for s in frame["request"]["permission_suggestions"]
                                                        if s["type"] != "addRules"]}}
    [item] = [op[1] for op in ClaudeProjector("g").project(no_rules)]
    assert item["canAllowAlways"] is False


def test_claude_a_pending_approval_puts_the_chat_in_needs_you():
    thread = thread_from(ClaudeProjector("g"), claude_frames("perm_allow")[:3])
    assert thread.info["status"] == "needs-you" and [r["kind"] for r in thread.info["requests"]] == ["approval"]


def test_claude_a_withdrawn_request_is_cancelled():
    projector = ClaudeProjector("g")
    result = upserts(projector, claude_frames("perm_pending_interrupt"), "approval")
    assert [item["decision"] for item in result] == ["pending", "cancelled"]
    assert result[1]["id"] == result[0]["id"]


def test_claude_after_a_withdrawal_the_thread_waits_on_nobody():
    thread = thread_from(ClaudeProjector("g"), claude_frames("perm_pending_interrupt"))
    assert thread.pending_requests() == [] and thread.info["requests"] == []


def test_claude_a_withdrawal_of_a_request_already_answered_changes_nothing():
    projector = ClaudeProjector("g")
    frames = claude_frames("perm_pending_interrupt")
    cancel = next(i for i, f in enumerate(frames) if f["type"] == "control_cancel_request")
    ops(projector, frames[:cancel])
    projector.settled(frames[cancel]["request_id"])
    assert projector.project(frames[cancel]) == []


def test_claude_a_withdrawal_nobody_asked_for_changes_nothing():
    assert ClaudeProjector("g").project({"type": "control_cancel_request", "request_id": "unknown"}) == []


# ---- Claude Code: questions -----------------------------------------------------------------------

def test_claude_ask_user_question_is_a_pending_question_item():
    [item] = upserts(ClaudeProjector("g"), claude_frames("ask_question"), "question")
    [request] = [f for f in claude_frames("ask_question") if f["type"] == "control_request"]
    assert item == {"id": f"question-{request['request_id']}", "kind": "question",
                    "requestId": request["request_id"], "answers": None, "state": "pending",
                    "questions": [{"id": "0", "header": "Color", "question": "Which color?", "multiSelect": False,
                                   "choices": [{"label": "Red", "description": "warm"},
                                               {"label": "Blue", "description": "cool"}]}]}


def test_claude_a_question_is_not_also_an_approval():
    thread = thread_from(ClaudeProjector("g"), claude_frames("ask_question"))
    assert of_kind(thread, "approval") == [] and len(of_kind(thread, "question")) == 1


def test_claude_a_withdrawn_question_is_cancelled():
    projector = ClaudeProjector("g")
    [request] = [f for f in claude_frames("ask_question") if f["type"] == "control_request"]
    projector.project(request)
    [(kind, item)] = projector.project({"type": "control_cancel_request", "request_id": request["request_id"]})
    assert item == {"id": f"question-{request['request_id']}", "kind": "question", "state": "cancelled"}


def test_claude_answer_question_allows_the_tool_with_answers_keyed_by_question_text():
    projector = ClaudeProjector("g")
    [item] = upserts(projector, claude_frames("ask_question"), "question")
    [request] = [f for f in claude_frames("ask_question") if f["type"] == "control_request"]
    answer = projector.answer_question(item["requestId"], item["questions"], {"0": "Blue"})
    assert answer == {"behavior": "allow",
                      "updatedInput": {**request["request"]["input"], "answers": {"Which color?": "Blue"}}}


def test_claude_the_real_cli_took_that_answer():
    written = [f for f in claude_written("ask_question") if f["type"] == "control_response"]
    result = next(f for f in claude_frames("ask_question") if f["type"] == "user"
                  and isinstance(f["message"]["content"], list))
    assert written[0]["response"]["response"]["updatedInput"]["answers"] == {"Which color?": "Blue"}
    assert '"Which color?"="Blue"' in result["message"]["content"][0]["content"]


# ---- Claude Code: native answers ------------------------------------------------------------------

@pytest.fixture
def claude_approval():
    projector = ClaudeProjector("g")
    [request] = [f for f in claude_frames("perm_allow") if f["type"] == "control_request"]
    projector.project(request)
    return projector, request


def test_claude_allow_lets_the_tool_run_with_its_own_input(claude_approval):
    projector, request = claude_approval
    assert projector.answer_approval(request["request_id"], "allow", None) == {
        "behavior": "allow", "updatedInput": request["request"]["input"]}


def test_claude_allow_always_grants_exactly_the_proposed_rules_for_this_session(claude_approval):
    projector, request = claude_approval
    answer = projector.answer_approval(request["request_id"], "allow-always", None)
    assert answer["updatedPermissions"] == [{"type": "addRules", "behavior": "allow", "destination": "session",
                                             "rules": [{"toolName": "Bash", "ruleContent": "touch made_by_tool.txt"}]}]
    assert answer["behavior"] == "allow" and answer["updatedInput"] == request["request"]["input"]


def test_claude_allow_always_survives_the_drivers_session_only_filter_unchanged(claude_approval):
    projector, request = claude_approval
    answer = projector.answer_approval(request["request_id"], "allow-always", None)
    assert session_only(answer) == answer


def test_claude_deny_carries_the_persons_reason(claude_approval):
    projector, request = claude_approval
    assert projector.answer_approval(request["request_id"], "deny", "Not that file.") == {
        "behavior": "deny", "message": "Not that file."}


def test_claude_deny_without_a_reason_still_tells_the_agent(claude_approval):
    projector, request = claude_approval
    assert projector.answer_approval(request["request_id"], "deny", None) == {
        "behavior": "deny", "message": "The user denied this."}


# ---- Codex ----------------------------------------------------------------------------------------

def test_codex_an_agent_message_streams_into_one_item_that_ends_whole():
    projector = CodexProjector("g")
    result = [op for op in ops(projector, codex_frames("frames-basic")) if op[0] != "native"]
    assert result[0] == ("upsert", {"id": "g:msg_0002", "kind": "assistant", "text": "", "streaming": True})
    assert "".join(op[2] for op in result if op[0] == "append") == "Hello from the mock model!"
    assert {op[1] for op in result if op[0] == "append"} == {"g:msg_0002"}
    [assistant] = of_kind(thread_from(CodexProjector("g"), codex_frames("frames-basic")), "assistant")
    assert (assistant["text"], assistant["streaming"]) == ("Hello from the mock model!", False)


def test_codex_a_delta_brings_its_own_skeleton_for_an_item_never_started():
    [op] = CodexProjector("g").project({"method": "item/agentMessage/delta",
                                        "params": {"itemId": "msg_9", "delta": "hi"}})
    assert op == ("append", "g:msg_9", "hi", {"id": "g:msg_9", "kind": "assistant", "text": "", "streaming": True})


def test_codex_a_command_is_a_shell_tool_item_running_then_done():
    tools = upserts(CodexProjector("g"), codex_frames("frames-cmd-approval-untrusted"), "tool")
    first = [t for t in tools if t["id"] == "g:call_0002"]
    assert [t["state"] for t in first] == ["running", "done"]
    assert first[0]["name"] == "shell" and first[0]["toolUseId"] == "call_0002"
    assert first[0]["input"] == {"command": "/bin/bash -lc 'touch a.txt'", "cwd": "/home/dev/cx/cmd_approval/work"}


def test_codex_a_declined_command_ends_in_error():
    thread = thread_from(CodexProjector("g"), codex_frames("frames-cmd-approval-untrusted"))
    assert thread.item("g:call_0017")["state"] == "error"


def test_codex_a_command_approval_is_a_pending_approval_of_the_shell_tool():
    [item] = [i for i in upserts(CodexProjector("g"), codex_frames("frames-cmd-approval-untrusted"), "approval")
              if i["toolUseId"] == "call_0002"]
    assert item["kind"] == "approval" and item["decision"] == "pending" and item["toolName"] == "shell"
    assert item["id"] == f"approval-{item['requestId']}" and item["canAllowAlways"] is True
    assert item["input"] == {"command": "/bin/bash -lc 'touch a.txt'", "cwd": "/home/dev/cx/cmd_approval/work"}


def test_codex_a_file_change_is_an_apply_patch_tool_item_with_its_changes():
    thread = thread_from(CodexProjector("g"), codex_frames("frames-file-approval"))
    added, updated = thread.item("g:call_0003"), thread.item("g:call_0008")
    assert added["name"] == "apply_patch" and added["state"] == "done"
    assert added["changes"] == [{"path": "/home/dev/cx/file_approval/home/dev/project/hello.txt", "kind": "add",
                                 "diff": "hello from apply_patch\n"}]
    assert updated["changes"][0]["kind"] == "update" and updated["changes"][0]["diff"].startswith("@@ -1 +1 @@")
    assert thread.item("g:call_0013")["state"] == "error"  # declined


def test_codex_a_file_change_approval_names_the_patch_tool():
    approvals = upserts(CodexProjector("g"), codex_frames("frames-file-approval"), "approval")
    assert [(a["toolName"], a["toolUseId"], a["decision"]) for a in approvals] == [
        ("apply_patch", "call_0003", "pending"), ("apply_patch", "call_0008", "pending"),
        ("apply_patch", "call_0013", "pending")]


def test_codex_a_resolved_server_request_is_reported_by_the_approvals_request_id():
    result = ops(CodexProjector("g"), codex_frames("frames-file-approval"))
    approvals = [op[1]["requestId"] for op in result if op[0] == "upsert" and op[1]["kind"] == "approval"]
    assert [op[1] for op in result if op[0] == "resolved"] == approvals


def test_codex_a_request_resolved_before_anyone_answered_is_cancelled():
    thread = thread_from(CodexProjector("g"), codex_frames("frames-cmd-approval-untrusted"))
    assert {a["decision"] for a in of_kind(thread, "approval")} == {"cancelled"}
    assert thread.info["requests"] == []


def test_codex_a_later_process_never_reuses_an_earlier_processs_request_ids():
    # Codex numbers its requests from 0 in every process: a restarted CLI asks "0" again.
    first = upserts(CodexProjector("1700000000001"), codex_frames("frames-cmd-approval-untrusted"), "approval")
    second = upserts(CodexProjector("1700000000002"), codex_frames("frames-cmd-approval-untrusted"), "approval")
    assert not {a["id"] for a in first} & {a["id"] for a in second}
    assert not {a["requestId"] for a in first} & {a["requestId"] for a in second}


def test_codex_a_second_process_keeps_the_first_ones_answered_approvals_in_the_thread():
    thread = Thread(new_info("c1", "codex", "/tmp", None, "full-access"))
    for turn, id_prefix in (("turn-1", "1700000000001"), ("turn-2", "1700000000002")):
        thread.open_turn(turn)
        projector = CodexProjector(id_prefix)
        for frame in codex_frames("frames-file-approval"):
            for op in projector.project(frame):
                if op[0] == "upsert" and op[1]["kind"] == "approval":
                    thread.upsert(op[1])
                    thread.upsert({**thread.item(op[1]["id"]), "decision": "allow"})  # answered at once
        thread.end_turn("done")
    approvals = of_kind(thread, "approval")
    assert [a["turnId"] for a in approvals] == ["turn-1"] * 3 + ["turn-2"] * 3


def test_codex_the_native_id_of_an_open_request_is_the_clis_own():
    projector, frames = CodexProjector("g"), codex_frames("frames-file-approval")
    asked = next(i for i, f in enumerate(frames) if f.get("id") == 1 and "method" in f)
    [item] = upserts(projector, frames[:asked + 1], "approval")[1:]
    assert item["requestId"] == "g:1" and projector.native("g:1") == 1
    assert projector.native("other:1") is None and projector.native(1) is None


def test_codex_a_resolved_or_answered_request_has_no_native_id_any_more():
    projector, frames = CodexProjector("g"), codex_frames("frames-file-approval")
    ops(projector, frames)
    assert [projector.native(f"g:{n}") for n in range(3)] == [None, None, None]
    projector.project({"method": "item/fileChange/requestApproval", "id": 7, "params": {"itemId": "x"}})
    projector.settled("g:7")
    assert projector.native("g:7") is None


def test_claude_the_native_id_of_an_open_request_is_the_clis_own_until_it_is_settled():
    projector = ClaudeProjector("g")
    [item] = upserts(projector, claude_frames("perm_allow"), "approval")
    assert projector.native(item["requestId"]) == "262d350b-20dd-4e7b-8a7b-72df2d4b6d32"
    projector.settled(item["requestId"])
    assert projector.native(item["requestId"]) is None


def test_claude_a_withdrawn_request_has_no_native_id_any_more():
    projector = ClaudeProjector("g")
    [item, _] = upserts(projector, claude_frames("perm_pending_interrupt"), "approval")
    assert projector.native(item["requestId"]) is None


@pytest.mark.parametrize("decision, native", [("allow", "accept"), ("allow-always", "acceptForSession"),
                                              ("deny", "decline")])
def test_codex_approval_answers_are_its_decisions(decision, native):
    assert CodexProjector("g").answer_approval("g:0", decision, "ignored") == {"decision": native}


def test_codex_the_decisions_are_those_the_real_server_took():
    lines = [json.loads(line) for line in
             (FIXTURES / "codex-frames" / "frames-cmd-approval-untrusted.jsonl").read_text().splitlines()]
    taken = {line["msg"]["result"]["decision"] for line in lines if line["dir"] == ">" and "result" in line["msg"]}
    assert taken == {"accept", "acceptForSession", "decline"}


def test_codex_question_answers_are_lists_keyed_by_question_id_with_unanswered_ones_empty():
    questions = [{"id": "color", "header": "", "question": "Which color?", "choices": [], "multiSelect": False},
                 {"id": "size", "header": "", "question": "Which size?", "choices": [], "multiSelect": False}]
    assert CodexProjector("g").answer_question("g:3", questions, {"color": "Blue"}) == {
        "answers": {"color": {"answers": ["Blue"]}, "size": {"answers": []}}}


def test_codex_a_user_input_request_is_a_pending_question():
    frame = {"method": "item/tool/requestUserInput", "id": 4, "params": {"questions": [
        {"id": "color", "header": "Color", "question": "Which color?",
         "options": [{"label": "Red", "description": "warm"}]}]}}
    [(_, item)] = CodexProjector("g").project(frame)
    assert item["kind"] == "question" and item["state"] == "pending" and item["id"] == f"question-{item['requestId']}"
    assert item["questions"] == [{"id": "color", "header": "Color", "question": "Which color?", "multiSelect": False,
                                  "choices": [{"label": "Red", "description": "warm"}]}]


def test_codex_notifications_it_does_not_render_make_no_items():
    frames = [f for f in codex_frames("frames-basic") if f.get("method") in (
        "thread/started", "turn/started", "turn/completed", "thread/tokenUsage/updated", "configWarning")
        or (f.get("method", "").startswith("item/") and (f["params"].get("item") or {}).get("type") == "userMessage")]
    # (turn/started names the turn's id on the turn item, for a rewind: test_harness_rewind.py)
    assert frames and [op for op in ops(CodexProjector("g"), frames) if op[0] != "native"] == []


# ---- Claude Code: delegated agents and background shells --------------------------------------

def test_claude_a_delegated_agent_is_an_item_with_its_own_tool_calls_grouped_under_it():
    projector = ClaudeProjector("g")
    frames = claude_frames("subagent")
    thread = thread_from(projector, frames)
    [task_tool] = [i for i in of_kind(thread, "tool") if i["name"] == "Task"]
    [agent] = of_kind(thread, "subagent")
    assert agent["toolUseId"] == task_tool["toolUseId"] and agent["description"] == "say hello from a subagent"
    assert agent["subagentType"] == "general-purpose" and agent["taskId"] and agent["status"] == "done"
    [bash] = [i for i in of_kind(thread, "tool") if i["name"] == "Bash"]
    assert bash["parentToolUseId"] == task_tool["toolUseId"]
    assert bash["state"] == "done" and bash["output"] == "sub-hello"
    said = [i for i in of_kind(thread, "assistant") if i.get("parentToolUseId") == task_tool["toolUseId"]]
    assert [i["text"] for i in said] == ["SUB-DONE"]  # the agent's own words, apart from the parent's
    assert thread.info["background"] == []  # nothing runs any more at the end


def test_claude_background_work_is_listed_while_it_runs_and_gone_when_it_ended():
    frames = claude_frames("subagent")
    until_started = next(n for n, f in enumerate(frames) if f.get("subtype") == "task_started") + 1
    thread = thread_from(ClaudeProjector("g"), frames[:until_started])
    assert thread.info["background"] == [{"taskId": of_kind(thread, "subagent")[0]["taskId"], "kind": "subagent",
                                          "description": "say hello from a subagent"}]
    assert of_kind(thread, "subagent")[0]["status"] == "running"


def test_claude_a_background_shell_is_a_task_item_with_its_command_and_end():
    thread = thread_from(ClaudeProjector("g"), claude_frames("background_bash"))
    [task] = of_kind(thread, "task")
    assert task["command"] == "sleep 2; echo bg-done" and task["taskType"] == "local_bash"
    assert task["description"] == "Wait and report" and task["status"] == "done"


def test_a_turn_ending_leaves_a_subagents_running_tools_running_and_a_dead_cli_stops_them():
    thread = Thread(new_info("c1", "claude", "/tmp", None, "full-access"))
    thread.open_turn("t1")
    thread.upsert({"id": "sub-tool", "kind": "tool", "state": "running", "parentToolUseId": "toolu_task"})
    thread.upsert({"id": "own-tool", "kind": "tool", "state": "running", "parentToolUseId": None})
    thread.upsert({"id": "agent", "kind": "subagent", "status": "running", "toolUseId": "toolu_task"})
    thread.end_turn("done")
    assert thread.item("sub-tool")["state"] == "running" and thread.item("own-tool")["state"] == "error"
    thread.set_info(background=[{"taskId": "a1", "kind": "subagent", "description": ""}])
    thread.stop_background()
    assert thread.item("agent")["status"] == "stopped" and thread.info["background"] == []


# ---- Codex: child agents (features.multi_agent_v2) and background terminals -------------------

def _main_thread(frames: list[dict]) -> str:
    return next(f["params"]["threadId"] for f in frames if f.get("method") == "turn/started")


def _until_main_turn_ends(frames: list[dict]) -> tuple[list[dict], list[dict]]:
    main = _main_thread(frames)
    end = next(n for n, f in enumerate(frames) if f.get("method") == "turn/completed"
               and f["params"]["threadId"] == main)
    return frames[:end + 1], frames[end + 1:]


def test_codex_a_child_agent_is_a_subagent_item_with_its_own_items_grouped_under_it():
    frames = codex_frames("subagent")
    thread = thread_from(CodexProjector("g"), frames)
    [agent] = of_kind(thread, "subagent")
    spawned = next(f["params"]["item"] for f in frames if (f.get("params") or {}).get("item", {}).get("type")
                   == "subAgentActivity")
    assert agent["toolUseId"] == spawned["id"] and agent["taskId"] == spawned["agentThreadId"]
    assert agent["description"] == "greeter" and agent["agentPath"] == "/root/greeter" and agent["status"] == "done"
    [shell] = [i for i in of_kind(thread, "tool") if i["name"] == "shell"]
    assert shell["parentToolUseId"] == agent["toolUseId"] and shell["state"] == "done"
    assert "sub-hello" in shell["output"]
    words = {i["text"]: i.get("parentToolUseId") for i in of_kind(thread, "assistant")}
    assert words == {"SUB-DONE": agent["toolUseId"], "The agent said SUB-DONE.": None}
    [wait] = [i for i in of_kind(thread, "tool") if i["name"] == "agents.wait"]
    assert wait["state"] == "done" and wait["parentToolUseId"] is None
    assert thread.info["background"] == []


def test_codex_a_child_agent_is_background_work_while_its_turn_runs():
    frames = codex_frames("subagent")
    child_started = next(n for n, f in enumerate(frames) if f.get("method") == "turn/started"
                         and f["params"]["threadId"] != _main_thread(frames))
    thread = thread_from(CodexProjector("g"), frames[:child_started + 1])
    [agent] = of_kind(thread, "subagent")
    assert agent["status"] == "running"
    assert thread.info["background"] == [{"taskId": agent["taskId"], "kind": "subagent", "description": "greeter"}]


def test_codex_a_child_agent_whose_turn_was_interrupted_reads_stopped():
    thread = thread_from(CodexProjector("g"), codex_frames("subagent_stop"))
    [agent] = of_kind(thread, "subagent")
    assert agent["status"] == "stopped" and thread.info["background"] == []


def test_codex_a_command_that_outlives_its_turn_becomes_a_task_that_ends_stopped_when_asked():
    projector = CodexProjector("g")
    during, after = _until_main_turn_ends(codex_frames("background_terminal"))
    thread = thread_from(projector, during)
    apply_ops(thread, projector.turn_ending())  # the chat asks before it closes the turn
    thread.end_turn("done")
    [tool] = of_kind(thread, "tool")
    [task] = of_kind(thread, "task")
    assert tool["state"] == "done" and tool["background"] is True  # not failed by the turn's end
    assert task["status"] == "running" and task["toolUseId"] == tool["toolUseId"] and task["taskType"] == "terminal"
    assert "sleep 30; echo bg-done" in task["command"] and task["taskId"].isdigit()  # Codex's process id
    assert thread.info["background"] == [{"taskId": task["taskId"], "kind": "task", "description": task["command"]}]
    projector.stop_requested(task["taskId"])
    apply_ops(thread, [op for frame in after for op in projector.project(frame)])
    task = of_kind(thread, "task")[0]
    assert task["status"] == "stopped" and "exitCode" not in task and thread.info["background"] == []
    assert of_kind(thread, "tool")[0]["state"] == "done"


def test_codex_a_background_command_that_ends_unasked_keeps_its_outcome_and_exit_code():
    projector = CodexProjector("g")
    during, after = _until_main_turn_ends(codex_frames("background_terminal"))
    thread = thread_from(projector, during)
    apply_ops(thread, projector.turn_ending())
    apply_ops(thread, [op for frame in after for op in projector.project(frame)])
    [task] = of_kind(thread, "task")
    assert task["status"] == "error" and task["exitCode"] == -1


def test_codex_a_turn_that_ends_with_nothing_running_leaves_nothing_behind():
    projector = CodexProjector("g")
    thread_from(projector, codex_frames("frames-basic"))
    assert projector.turn_ending() == []


def test_claude_its_own_words_for_a_failed_request_are_no_assistant_item():
    # The turn's error (a note, or the limit's message) says them once.
    thread = thread_from(ClaudeProjector("g"), claude_frames("usage_limit"))
    assert of_kind(thread, "assistant") == []

"""actors.harness.modes: devhostd's runtime modes on each CLI, and what devhostd allows itself.

The requests are the pinned CLIs' own, recorded in tests/fixtures/modes/ (Claude Code 2.1.328,
Codex 0.169.0, in a checkout at /home/dev/tmp/project).
"""
import json
from pathlib import Path

from actors.harness import effects as fx
from actors.harness import modes
from actors.harness.claude import protocol as claude
from actors.harness.codex import protocol as codex

MODES = Path(__file__).resolve().parent.parent / "fixtures" / "modes"
RECORDED_ROOT = "/home/dev/tmp/project"


def frames(name: str, direction: str = "cli->host") -> list[dict]:
    rows = [json.loads(line) for line in (MODES / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return [r["frame"] for r in rows if r["dir"] == direction]


def can_use_tool(name: str, tool: str) -> dict:
    return next(f for f in frames(name) if f.get("type") == "control_request"
                and f["request"].get("subtype") == "can_use_tool" and f["request"]["tool_name"] == tool)


def with_path(frame: dict, path: str) -> dict:
    request = frame["request"]
    return {**frame, "request": {**request, "input": {**request["input"], "file_path": path}}}


# ---- the mapping ---------------------------------------------------------------------------------

def test_claude_runs_each_mode_no_wider_than_asked():
    settings = {mode: modes.claude_settings(mode, as_root=False, sandbox_declared=False)
                for mode in modes.RUNTIME_MODES}
    assert settings["supervised"].flags() == ["--permission-mode=manual"]  # the flag's name for default
    assert settings["supervised"].allows == modes.NOBODY
    assert settings["auto-accept-edits"].flags() == ["--permission-mode=manual"]
    assert settings["auto-accept-edits"].allows == modes.EDITS_IN_CHECKOUT
    # The CLI's auto mode denied every classified step (measured): auto runs as auto-accept-edits, and says so.
    assert settings["auto"] == settings["auto-accept-edits"] and settings["auto"].effective == "auto-accept-edits"
    assert settings["full-access"].flags() == ["--permission-mode=bypassPermissions"]
    assert [settings[m].effective for m in ("supervised", "auto-accept-edits", "full-access")] == [
        "supervised", "auto-accept-edits", "full-access"]


def test_claude_full_access_as_root_takes_the_measured_fallback_unless_a_sandbox_is_declared():
    as_root = modes.claude_settings("full-access", as_root=True, sandbox_declared=False)
    assert as_root.flags() == ["--permission-mode=acceptEdits", "--allowedTools=Bash"]
    assert as_root.allows == modes.EVERYTHING and as_root.effective == "full-access"
    declared = modes.claude_settings("full-access", as_root=True, sandbox_declared=True)
    assert declared.permission_mode == "bypassPermissions"


def test_codex_modes_are_an_approval_policy_and_a_sandbox():
    table = {mode: modes.codex_settings(mode) for mode in modes.RUNTIME_MODES}
    assert [(s.approval_policy, s.sandbox, s.accepts_edits, s.effective) for s in table.values()] == [
        ("untrusted", "workspace-write", False, "supervised"),
        ("untrusted", "workspace-write", True, "auto-accept-edits"),
        ("on-request", "workspace-write", False, "auto"),
        ("never", "danger-full-access", False, "full-access")]
    assert table["full-access"].sandbox_policy() == {"type": "dangerFullAccess"}
    assert table["supervised"].sandbox_policy() == {"type": "workspaceWrite"}


# ---- what devhostd allows itself -----------------------------------------------------------------

def test_inside_resolves_dot_dot_and_symlinks(tmp_path):
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "out").symlink_to(outside)
    assert modes.inside(str(root / "src" / "new.py"), str(root), str(root))
    assert modes.inside("src/new.py", str(root), str(root))  # relative to the CLI's folder
    assert not modes.inside(str(root / ".." / "elsewhere" / "x"), str(root), str(root))
    assert not modes.inside("../elsewhere/x", str(root), str(root / "src" / ".."))
    assert not modes.inside(str(root / "out" / "x"), str(root), str(root))  # a link out of the checkout
    assert not modes.inside(str(root), str(root), str(root))  # the checkout itself is no file in it
    assert not modes.inside(str(tmp_path / "checkout-other" / "x"), str(root), str(root))  # a prefix is not a parent
    assert not modes.inside(None, str(root), str(root)) and not modes.inside("", str(root), str(root))


def test_claude_edits_in_the_checkout_go_under_auto_accept_edits_and_nothing_else_does():
    edits = modes.claude_settings("auto-accept-edits", as_root=False, sandbox_declared=False)
    write = can_use_tool("claude-default", "Write")
    edit = can_use_tool("claude-default", "Edit")
    bash = can_use_tool("claude-default", "Bash")
    assert modes.claude_allows(edits, write["request"], RECORDED_ROOT, RECORDED_ROOT)
    assert modes.claude_allows(edits, edit["request"], RECORDED_ROOT, RECORDED_ROOT)
    assert not modes.claude_allows(edits, bash["request"], RECORDED_ROOT, RECORDED_ROOT)
    assert not modes.claude_allows(edits, with_path(write, "/etc/passwd")["request"], RECORDED_ROOT, RECORDED_ROOT)
    assert not modes.claude_allows(edits, with_path(write, f"{RECORDED_ROOT}/../x")["request"],
                                   RECORDED_ROOT, RECORDED_ROOT)
    supervised = modes.claude_settings("supervised", as_root=False, sandbox_declared=False)
    assert not modes.claude_allows(supervised, write["request"], RECORDED_ROOT, RECORDED_ROOT)


def test_claude_full_access_as_root_allows_everything_but_what_wants_the_person():
    full = modes.claude_settings("full-access", as_root=True, sandbox_declared=False)
    assert modes.claude_allows(full, with_path(can_use_tool("claude-default", "Write"), "/tmp/x")["request"],
                               RECORDED_ROOT, RECORDED_ROOT)
    assert modes.claude_allows(full, can_use_tool("claude-default", "Bash")["request"], RECORDED_ROOT, RECORDED_ROOT)
    plan_exit = can_use_tool("claude-plan", "ExitPlanMode")
    assert not modes.claude_allows(full, plan_exit["request"], RECORDED_ROOT, RECORDED_ROOT)


def test_the_claude_driver_answers_an_edit_itself_and_passes_a_command_on():
    settings = modes.claude_settings("auto-accept-edits", as_root=False, sandbox_declared=False)
    driver = claude.ClaudeDriver(cwd=RECORDED_ROOT, settings=settings, root=RECORDED_ROOT)
    write = can_use_tool("claude-default", "Write")
    keep, found = driver.decode(write)
    assert keep is False and found == [fx.Write(({"type": "control_response", "response": {
        "subtype": "success", "request_id": write["request_id"],
        "response": {"behavior": "allow", "updatedInput": write["request"]["input"]}}},))]
    bash = can_use_tool("claude-default", "Bash")
    keep, found = driver.decode(bash)
    assert keep is True and fx.RequestOpened(bash["request_id"], "can_use_tool") in found


def test_a_claude_mode_change_goes_to_the_running_cli_except_to_and_from_what_only_a_launch_has():
    def settings(mode, as_root=False):
        return modes.claude_settings(mode, as_root=as_root, sandbox_declared=False)
    driver = claude.ClaudeDriver(settings=settings("supervised"))
    assert driver.set_mode_frames(settings("auto-accept-edits")) == []  # devhostd's own answers change
    assert driver.effective_mode == "auto-accept-edits"
    assert driver.set_mode_frames(settings("full-access")) is None  # bypass_not_launched: a new process
    assert driver.effective_mode == "auto-accept-edits"
    fallback = claude.ClaudeDriver(settings=settings("full-access", as_root=True))
    assert fallback.set_mode_frames(settings("supervised", as_root=True)) is None  # --allowedTools stays
    bypass = claude.ClaudeDriver(settings=settings("full-access"))
    [frame] = bypass.set_mode_frames(settings("supervised"))
    assert frame["request"] == {"subtype": "set_permission_mode", "mode": "default"}


# ---- Codex ---------------------------------------------------------------------------------------

def _codex_driver(mode: str, root: str = RECORDED_ROOT) -> codex.CodexDriver:
    return codex.CodexDriver(cwd=root, settings=modes.codex_settings(mode), root=root)


def _file_change_approval(name: str) -> tuple[dict, dict]:
    recorded = frames(name)
    request = next(f for f in recorded if f.get("method") == "item/fileChange/requestApproval")
    started = next(f for f in recorded if f.get("method") == "item/started"
                   and f["params"]["item"]["id"] == request["params"]["itemId"])
    return started, request


def test_the_codex_driver_accepts_a_file_change_in_the_checkout_under_auto_accept_edits():
    started, request = _file_change_approval("codex-untrusted-workspace-write")
    driver = _codex_driver("auto-accept-edits")
    driver.decode(started)
    assert driver.decode(request) == (False, [fx.Write(({"id": request["id"], "result": {"decision": "accept"}},))])
    supervised = _codex_driver("supervised")
    supervised.decode(started)
    assert supervised.decode(request) == (True, [fx.RequestOpened(request["id"], request["method"])])


def test_a_codex_file_change_outside_the_checkout_or_never_seen_is_the_persons():
    started, request = _file_change_approval("codex-untrusted-workspace-write")
    item = started["params"]["item"]
    escaping = {**started, "params": {**started["params"], "item": {**item, "changes": [
        *item["changes"], {**item["changes"][0], "path": f"{RECORDED_ROOT}/../elsewhere.txt"}]}}}
    driver = _codex_driver("auto-accept-edits")
    driver.decode(escaping)
    assert driver.decode(request)[1] == [fx.RequestOpened(request["id"], request["method"])]
    unseen = _codex_driver("auto-accept-edits")
    assert unseen.decode(request)[1] == [fx.RequestOpened(request["id"], request["method"])]


def test_codex_gets_the_mode_at_thread_start_and_a_change_between_or_on_the_next_turn():
    driver = _codex_driver("full-access")
    [init] = driver.start_frames()
    [write] = driver.decode({"id": init["id"], "result": {}})[1]
    start = write.frames[1]
    assert start["method"] == "thread/start"
    assert (start["params"]["approvalPolicy"], start["params"]["sandbox"]) == ("never", "danger-full-access")
    driver.decode({"id": start["id"], "result": {"thread": {"id": "t1"}}})
    update, _deadline = driver.set_mode_frames(modes.codex_settings("supervised"))
    assert update["method"] == "thread/settings/update" and update["params"] == {
        "threadId": "t1", "approvalPolicy": "untrusted", "sandboxPolicy": {"type": "workspaceWrite"}}
    assert driver.effective_mode == "supervised"
    turn, _ = driver.message_frames("m1", "go", [])
    assert "approvalPolicy" not in turn["params"]
    driver.decode({"method": "turn/started", "params": {"threadId": "t1", "turn": {"id": "u1"}}})
    assert driver.set_mode_frames(modes.codex_settings("auto")) == []  # a turn runs: the next one takes it
    assert driver.effective_mode == "supervised"
    driver.decode({"method": "turn/completed",
                   "params": {"threadId": "t1", "turn": {"id": "u1", "status": "completed"}}})
    turn, _ = driver.message_frames("m2", "again", [])
    assert (turn["params"]["approvalPolicy"], turn["params"]["sandboxPolicy"]) == (
        "on-request", {"type": "workspaceWrite"})
    assert driver.effective_mode == "auto"


def test_a_chat_read_from_disk_runs_under_its_mode_unless_saved_before_modes_were_enforced():
    assert modes.stored_mode({"runtimeMode": "full-access", "effectiveRuntimeMode": "full-access"}) == "full-access"
    assert modes.stored_mode({"runtimeMode": "auto", "effectiveRuntimeMode": "auto-accept-edits"}) == "auto"
    # Before enforcement every record said full-access (a default) while the CLI asked anyway.
    assert modes.stored_mode({"runtimeMode": "full-access"}) == "supervised"
    assert modes.stored_mode({"runtimeMode": "everything", "effectiveRuntimeMode": "full-access"}) == "supervised"


def test_an_approved_codex_command_that_outlives_its_turn_is_a_task_stopped_through_the_threads_terminals():
    # Asked first, the command's item/started carries no processId (it comes on item/completed):
    # the task goes by the item's id, and stopping it looks the process up by that id.
    recorded = frames("codex-approved-background")
    thread = next(f for f in recorded if f.get("method") == "thread/started")["params"]["thread"]["id"]
    driver = _codex_driver("supervised")
    [init] = driver.start_frames()
    start = driver.decode({"id": init["id"], "result": {}})[1][0].frames[1]
    driver.decode({"id": start["id"], "result": {"thread": {"id": thread}}})
    for frame in recorded[:next(n for n, f in enumerate(recorded) if f.get("method") == "turn/completed")]:
        if "method" in frame:
            driver.decode(frame)
    task = next(op[1] for op in driver.projection.turn_ending() if op[0] == "upsert" and op[1]["kind"] == "task")
    assert task["taskId"] == "call_bg" and task["status"] == "running" and "sleep 4" in task["command"]
    listing, _ = driver.stop_task_frames("call_bg", "task")
    assert listing["method"] == "thread/backgroundTerminals/list" and listing["params"] == {"threadId": thread}
    listed = next(f for f in recorded if "result" in f and "data" in f["result"])
    [write, _deadline] = driver.decode({**listed, "id": listing["id"]})[1]
    [terminate] = write.frames
    assert terminate["method"] == "thread/backgroundTerminals/terminate"
    assert terminate["params"] == {"threadId": thread, "processId": listed["result"]["data"][0]["processId"]}
    again, _ = driver.stop_task_frames("call_bg", "task")
    [failed] = driver.decode({"id": again["id"], "result": {"data": [], "nextCursor": None}})[1]
    assert isinstance(failed, fx.ControlFailed) and "it had ended" in failed.message


# ---- plan mode -----------------------------------------------------------------------------------

def test_the_plan_claude_code_proposes_is_an_approval_carrying_the_plan():
    from actors.harness.claude.projection import ClaudeProjector
    exit_plan = can_use_tool("claude-plan", "ExitPlanMode")
    [(op, item)] = ClaudeProjector("g").request(exit_plan)
    assert op == "upsert" and item["kind"] == "approval" and item["toolName"] == "ExitPlanMode"
    assert item["plan"] == {"text": exit_plan["request"]["input"]["plan"],
                            "path": exit_plan["request"]["input"]["planFilePath"]}
    [(_, write)] = ClaudeProjector("g").request(can_use_tool("claude-plan", "Write"))
    assert "plan" not in write  # an edit tried while planning is a plain approval


def test_planning_allows_nothing_and_an_approved_plan_moves_the_cli_with_its_own_set_mode():
    driver = claude.ClaudeDriver(cwd=RECORDED_ROOT, settings=modes.claude_settings(
        "supervised", as_root=False, sandbox_declared=False), root=RECORDED_ROOT)
    assert driver.set_mode_frames(modes.CLAUDE_PLAN)[0]["request"] == {"subtype": "set_permission_mode",
                                                                       "mode": "plan"}
    early = can_use_tool("claude-plan", "Write")
    assert driver.decode(early)[1] == [fx.RequestOpened(early["request_id"], "can_use_tool")]  # the person's
    exit_plan = can_use_tool("claude-plan", "ExitPlanMode")
    answer = {"behavior": "allow", "updatedInput": exit_plan["request"]["input"]}
    edits = modes.claude_settings("auto-accept-edits", as_root=False, sandbox_declared=False)
    [frame], owed = driver.plan_approved_frames(exit_plan["request_id"], answer, edits)
    # The setMode update the CLI was recorded taking (claude-plan); auto-accept-edits is its default
    # permission mode with devhostd allowing the edits.
    assert frame["response"]["response"]["updatedPermissions"] == [
        {"type": "setMode", "mode": "default", "destination": "session"}] and not owed
    assert driver.effective_mode == "auto-accept-edits"


def test_an_approved_plan_into_a_mode_only_a_launch_has_goes_on_supervised_until_the_swap():
    driver = claude.ClaudeDriver(cwd=RECORDED_ROOT, settings=modes.claude_settings(
        "supervised", as_root=False, sandbox_declared=False), root=RECORDED_ROOT)
    driver.set_mode_frames(modes.CLAUDE_PLAN)
    exit_plan = can_use_tool("claude-plan", "ExitPlanMode")
    full = modes.claude_settings("full-access", as_root=False, sandbox_declared=False)
    [frame], owed = driver.plan_approved_frames(exit_plan["request_id"], {"behavior": "allow"}, full)
    assert owed and frame["response"]["response"]["updatedPermissions"][0]["mode"] == "default"
    assert driver.effective_mode == "supervised"

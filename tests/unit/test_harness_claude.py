"""actors.harness.claude: Claude Code's stream-json protocol, checked against recorded sessions.

The recordings in tests/fixtures/claude-frames/ are real runs of Claude Code 2.1.328 against a
mock model server (one line per frame: ``{t, dir, frame}``). A replay plays devhost's part
with the driver itself (the user messages, interrupts, set_model and answers it would write)
and feeds the driver every ``cli->host`` frame the CLI wrote back.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from actors.harness import claude
from actors.harness import effects as fx
from actors.harness.claude import ClaudeDriver
from actors.harness.claude.protocol import NOT_SENT_INTERRUPT

FRAMES = Path(__file__).resolve().parent.parent / "fixtures" / "claude-frames"


def recorded(name: str) -> list[dict]:
    return [json.loads(line) for line in (FRAMES / f"{name}.jsonl").read_text().splitlines() if line.strip()]


@dataclass
class Step:
    frame: dict           # a frame the CLI wrote, as decoded
    keep: bool            # whether it goes to the event history
    effects: list         # what it means to the chat
    waiting: set          # driver.waiting right after it


@dataclass
class Replay:
    steps: list[Step] = field(default_factory=list)
    written: list[dict] = field(default_factory=list)  # frames the driver produced for devhost to write

    def effects(self, kind=None) -> list:
        return [e for step in self.steps for e in step.effects if kind is None or isinstance(e, kind)]

    def first(self, kind, **fields) -> int:
        """Index of the first effect of ``kind`` whose fields match (over all effects, in order)."""
        for index, effect in enumerate(self.effects()):
            if isinstance(effect, kind) and all(getattr(effect, k) == v for k, v in fields.items()):
                return index
        raise AssertionError(f"no {kind.__name__} {fields} in {self.effects()}")


def replay(name: str, driver: ClaudeDriver | None = None, *, interrupt: bool = True) -> Replay:
    """Plays a recorded session through ``driver``.

    Request ids the recording's host chose (``req_int``, ...) are mapped to the ids the driver
    chose for the same request, so replies reach the driver as they would in a live run.
    ``interrupt=False`` leaves out devhost's interrupt: the CLI's frames still say it stopped.
    """
    driver = driver or ClaudeDriver()
    result = Replay()
    ids: dict[str, str] = {}
    for record in recorded(name):
        frame = record["frame"]
        if record["dir"] == "host->cli":
            made = _devhost_part(driver, frame, interrupt)
            result.written += made
            if frame.get("type") == "control_request" and made:
                ids[frame["request_id"]] = made[0]["request_id"]
        elif record["dir"] == "cli->host":
            if frame.get("type") == "control_response":
                response = frame["response"]
                frame = {**frame, "response": {**response, "request_id": ids.get(response["request_id"],
                                                                                  response["request_id"])}}
            keep, found = driver.decode(frame)
            result.steps.append(Step(frame, keep, found, set(driver.waiting)))
    return result


def _devhost_part(driver: ClaudeDriver, frame: dict, interrupt: bool) -> list[dict]:
    kind = frame.get("type")
    if kind == "user" and "uuid" in frame:
        return driver.message_frames(frame["uuid"], frame["message"]["content"], [])
    if kind == "control_response":
        response = frame["response"]
        return driver.respond_frames(response["request_id"], response["response"])
    if kind != "control_request":
        return []
    request = frame["request"]
    if request["subtype"] == "initialize":
        return driver.start_frames()
    if request["subtype"] == "interrupt":
        return driver.interrupt_frames() if interrupt else []
    if request["subtype"] == "set_model":
        return driver.set_model_frames(request["model"])
    if request["subtype"] == "end_session":
        return driver.stop_frames()
    return []  # requests devhost never makes (get_settings, list_models, ...): their replies are not ours


FIRST = "11111111-1111-4111-8111-111111111111"
SECOND = "22222222-2222-4222-8222-222222222222"


# ---- delivery and turns ----------------------------------------------------------------------

def test_a_message_is_queued_on_receipt_and_started_at_pickup_by_its_uuid():
    run = replay("queued")
    deliveries = [(e.message_id, e.delivery) for e in run.effects(fx.Delivery)]
    # The first message's lifecycle; its echo at pickup confirms the same thing again.
    assert deliveries[:3] == [(FIRST, "queued"), (FIRST, "started"), (FIRST, "started")]
    assert (SECOND, "queued") in deliveries and (SECOND, "started") in deliveries
    assert all(e.error is None for e in run.effects(fx.Delivery))


def test_a_message_sent_during_a_streaming_turn_starts_only_after_that_turn_ends():
    run = replay("queued")
    first_turn_end = run.first(fx.TurnEnded)
    assert run.first(fx.Delivery, message_id=SECOND, delivery="queued") < first_turn_end
    assert run.first(fx.Delivery, message_id=SECOND, delivery="started") > first_turn_end
    assert run.effects(fx.TurnStarted) == [fx.TurnStarted(), fx.TurnStarted()]
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded(), fx.TurnEnded()]


def test_waiting_holds_a_queued_message_across_the_end_of_the_turn_before_it():
    run = replay("queued")
    results = [step for step in run.steps if step.frame["type"] == "result"]
    assert results[0].waiting == {SECOND}  # so the chat knows another turn follows
    assert results[1].waiting == set()
    assert run.steps[-1].waiting == set()


def test_a_message_folded_into_a_running_tool_turn_is_not_waiting_when_that_turn_ends():
    first, folded = "77777777-0000-4000-8000-000000000001", "77777777-0000-4000-8000-000000000002"
    run = replay("fold_during_tool")
    turn_end = run.first(fx.TurnEnded)
    assert run.first(fx.Delivery, message_id=folded, delivery="queued") < turn_end
    assert run.first(fx.Delivery, message_id=folded, delivery="started") < turn_end
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded()]  # one turn consumed both messages
    (result,) = [step for step in run.steps if step.frame["type"] == "result"]
    assert result.frame["user_message_uuids"] == [first, folded]
    assert result.waiting == set()
    assert fx.MessageSettled(folded) in run.effects() and fx.MessageSettled(first) in run.effects()


def test_a_message_is_waiting_from_the_moment_its_frame_is_built_until_the_cli_takes_it():
    driver = ClaudeDriver()
    driver.message_frames(FIRST, "hello", [])
    assert driver.waiting == {FIRST}
    driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": "queued"})
    assert driver.waiting == {FIRST}  # received is not taken up
    driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": "started"})
    assert driver.waiting == set()


def test_a_message_cancelled_behind_a_running_turn_leaves_that_turn_running():
    driver = ClaudeDriver()
    driver.message_frames(FIRST, "first", [])
    driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": "started"})
    driver.message_frames(SECOND, "queued two", [])
    _, found = driver.decode({"type": "command_lifecycle", "command_uuid": SECOND, "state": "cancelled"})
    # It never reached the model: said so, and the running turn goes on.
    assert found == [fx.Delivery(SECOND, "cancelled", NOT_SENT_INTERRUPT), fx.MessageSettled(SECOND)]
    assert driver.waiting == set()


def test_a_started_message_cancelled_by_the_interrupt_is_no_unsent_message():
    driver = ClaudeDriver()
    driver.message_frames(FIRST, "first", [])
    driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": "started"})
    _, found = driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": "cancelled"})
    assert not any(isinstance(effect, fx.Delivery) for effect in found)


def test_a_message_settled_before_any_turn_took_it_ends_the_turn_it_opened():
    # Nothing else will: no turn started, so no result follows.
    driver = ClaudeDriver()
    driver.message_frames(SECOND, "queued two", [])
    _, found = driver.decode({"type": "command_lifecycle", "command_uuid": SECOND, "state": "cancelled"})
    assert found == [fx.Delivery(SECOND, "cancelled", NOT_SENT_INTERRUPT), fx.MessageSettled(SECOND), fx.TurnEnded()]
    assert driver.waiting == set()


@pytest.mark.parametrize("state", ["discarded", "refused"])
def test_a_message_the_cli_discards_or_refuses_is_a_failed_delivery(state):
    driver = ClaudeDriver()
    driver.message_frames(FIRST, "hello", [])
    _, found = driver.decode({"type": "command_lifecycle", "command_uuid": FIRST, "state": state})
    assert found == [fx.Delivery(FIRST, "error", f"Claude Code {state} the message"), fx.MessageSettled(FIRST),
                     fx.TurnEnded()]
    assert driver.waiting == set()


def test_a_failed_api_call_ends_the_turn_with_the_clis_error_text():
    run = replay("err_401")
    # The result's subtype says "success"; is_error is what counts, and its text is kept.
    (result,) = [step for step in run.steps if step.frame["type"] == "result"]
    assert result.frame["subtype"] == "success" and result.frame["is_error"] is True
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded(error="Invalid API key · Fix external API key")]


def test_a_failed_result_without_text_still_ends_the_turn_with_an_error():
    _, found = ClaudeDriver().decode({"type": "result", "subtype": "error_during_execution", "is_error": True,
                                      "terminal_reason": "turn_setup_failed"})
    assert found[0] == fx.TurnEnded(error="Claude Code turn failed (turn_setup_failed)")


def test_a_result_reports_the_usage_the_cli_gives_and_nothing_it_does_not():
    _, found = ClaudeDriver().decode({"type": "result", "is_error": False, "duration_ms": 127,
                                      "total_cost_usd": 0.00014, "usage": {"input_tokens": 10, "output_tokens": 5}})
    usage = next(e for e in found if isinstance(e, fx.Usage))
    assert usage == fx.Usage((("input_tokens", 10), ("output_tokens", 5), ("duration_ms", 127),
                              ("total_cost_usd", 0.00014)))
    assert [e for e in found if isinstance(e, fx.Facts)] == [fx.Facts((("costTotalUsd", 0.00014),))]
    _, found = ClaudeDriver().decode({"type": "result", "is_error": True, "usage": "n/a"})
    assert found[-1] == fx.Usage(())  # and no facts: nothing reported


def test_what_claude_code_reports_of_its_session_is_reported_as_facts_from_a_recording():
    facts = [dict(e.fields) for e in replay("queued").effects(fx.Facts)]
    commands = next(f["slashCommands"] for f in facts if "slashCommands" in f)
    assert "compact" in commands or len(commands) > 3  # the init frame's list, as given
    assert [f["costTotalUsd"] for f in facts if "costTotalUsd" in f] == [0.00014000000000000001, 0.00028000000000000003]
    assert {f["contextWindow"] for f in facts if "contextWindow" in f} == {1000000}
    assert [f["contextTokens"] for f in facts if "contextTokens" in f] == [10, 10]  # each request's input


def test_a_plain_turn_reports_the_native_session_and_the_model_and_keeps_every_frame():
    run = replay("plain")
    (init,) = [step.frame for step in run.steps if step.frame.get("subtype") == "init"]
    assert set(run.effects(fx.NativeSession)) == {fx.NativeSession(init["session_id"])}
    assert run.effects(fx.ModelInUse) == [fx.ModelInUse("claude-opus-5-5")]
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded()]
    assert all(step.keep for step in run.steps)


def test_the_session_id_every_frame_carries_is_reported_once_until_it_changes():
    # Each effect flushes the chat's staged frames: one per frame would cut every batch into lines.
    run = replay("plain")
    session = run.effects(fx.NativeSession)
    assert len(session) == 1 and sum("session_id" in step.frame for step in run.steps) > 5
    driver = ClaudeDriver()
    assert driver.decode({"type": "keep_alive", "session_id": "a"})[1] == [fx.NativeSession("a")]
    assert driver.decode({"type": "keep_alive", "session_id": "a"})[1] == []
    assert driver.decode({"type": "keep_alive", "session_id": "b"})[1] == [fx.NativeSession("b")]


def test_a_message_taken_up_says_the_prompt_was_taken():
    driver = ClaudeDriver()
    for state, taken in (("queued", True), ("started", True), ("completed", False)):
        found = driver.decode({"type": "command_lifecycle", "command_uuid": "m", "state": state})[1]
        assert (fx.PromptTaken() in found) is taken


# ---- interrupts ------------------------------------------------------------------------------

def test_a_turn_devhost_interrupted_ends_as_interrupted_not_as_an_error():
    run = replay("controls2")
    turn_ends = run.effects(fx.TurnEnded)
    assert turn_ends == [fx.TurnEnded(interrupted=True), fx.TurnEnded()]  # the next turn is unaffected


def test_an_aborted_turn_devhost_did_not_interrupt_is_an_error():
    run = replay("controls2", interrupt=False)
    stopped = run.effects(fx.TurnEnded)[0]
    assert not stopped.interrupted
    assert stopped.error and "[ede_diagnostic]" in stopped.error


def test_interrupt_cancels_queued_input_only_once_system_init_lists_that_capability():
    driver = ClaudeDriver()
    (initialize,) = driver.start_frames()
    assert driver.interrupt_frames()[0]["request"] == {"subtype": "interrupt"}
    # controls2: the initialize reply does not list interrupt_cancel_queued_v1; system/init does.
    records = [r["frame"] for r in recorded("controls2") if r["dir"] == "cli->host"]
    initialize_reply = next(f for f in records if f["type"] == "control_response")
    reply = {**initialize_reply, "response": {**initialize_reply["response"], "request_id": initialize["request_id"]}}
    assert isinstance(driver.decode(reply)[1][-1], fx.Ready)
    assert driver.interrupt_frames()[0]["request"] == {"subtype": "interrupt"}
    driver.decode(next(f for f in records if f.get("subtype") == "init"))
    assert "interrupt_cancel_queued_v1" in driver.capabilities
    assert driver.interrupt_frames()[0]["request"] == {"subtype": "interrupt", "cancel_queued": True}


def test_an_interrupt_with_cancel_queued_settles_the_queued_message_before_the_turn_ends():
    queued_two = "99999999-0000-4000-8000-000000000002"
    run = replay("controls2")
    idle, running = [f for f in run.written if f.get("type") == "control_request"
                     and f["request"]["subtype"] == "interrupt"]
    assert idle["request"] == {"subtype": "interrupt"}  # before any turn: capability not known yet
    assert running["request"] == {"subtype": "interrupt", "cancel_queued": True}  # learned from system/init
    assert run.first(fx.MessageSettled, message_id=queued_two) < run.first(fx.TurnEnded)
    interrupted = next(step for step in run.steps if step.frame["type"] == "result")
    assert interrupted.waiting == set()  # nothing left to start another turn


def test_a_pending_permission_prompt_is_withdrawn_when_the_turn_is_interrupted():
    run = replay("perm_pending_interrupt")
    (opened,) = run.effects(fx.RequestOpened)
    assert opened.kind == "can_use_tool"
    assert run.effects(fx.RequestClosed) == [fx.RequestClosed(opened.request_id)]
    assert run.first(fx.RequestClosed) < run.first(fx.TurnEnded)
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded(interrupted=True)]  # aborted_tools


# ---- requests from the CLI and replies to devhost's requests ---------------------------------

def test_a_permission_prompt_opens_a_request_under_the_clis_own_id():
    run = replay("perm_allow")
    (step,) = [s for s in run.steps if s.frame["type"] == "control_request"]
    assert step.keep  # the page renders the prompt from history
    assert fx.RequestOpened(step.frame["request_id"], "can_use_tool") in step.effects


def test_an_answer_is_written_in_the_clis_own_control_response_format():
    recorded_answer = next(r["frame"] for r in recorded("perm_allow")
                           if r["dir"] == "host->cli" and r["frame"]["type"] == "control_response")
    response = recorded_answer["response"]
    assert ClaudeDriver().respond_frames(response["request_id"], response["response"]) == [recorded_answer]


def test_replies_to_control_requests_are_not_kept_in_history():
    run = replay("controls2")
    replies = [step for step in run.steps if step.frame["type"] == "control_response"]
    assert len(replies) == 6  # initialize, idle interrupt, two set_model, interrupt, end_session
    assert not any(step.keep for step in replies)


def test_the_initialize_reply_makes_the_session_ready():
    run = replay("controls2")
    (ready,) = run.effects(fx.Ready)
    assert "ui_surface_v1" in ready.capabilities


def test_set_model_reports_the_resolved_model_or_the_clis_refusal():
    run = replay("controls2")
    assert fx.ModelRefused("Claude Code refused the model: Model 'bogus-model-1' not found") in run.effects()
    replies = [step for step in run.steps if step.frame["type"] == "control_response"]
    default_reply = replies[3]
    assert default_reply.effects == [fx.ModelInUse("claude-opus-5-5")]


def test_replies_to_requests_devhost_did_not_make_mean_nothing():
    run = replay("initialize")  # get_settings, list_models, get_status, ... were the recorder's own
    replies = [step for step in run.steps if step.frame["type"] == "control_response"]
    assert len(replies) == 9
    assert [step.effects for step in replies[1:]] == [[]] * 8
    assert not any(step.keep for step in replies)


def test_keep_alive_frames_are_dropped_and_unknown_frames_are_kept_without_effects():
    driver = ClaudeDriver()
    assert driver.decode({"type": "keep_alive"}) == (False, [])
    assert driver.decode({"type": "a_future_frame", "data": {"status": "allowed"}}) == (True, [])
    # A rate-limit event that names no window says nothing to show.
    assert driver.decode({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}) == (True, [])


# ---- frames devhost writes -------------------------------------------------------------------

def test_a_text_message_is_the_user_frame_the_cli_was_recorded_reading():
    written = next(r["frame"] for r in recorded("queued") if r["dir"] == "host->cli")
    assert ClaudeDriver().message_frames(FIRST, "first message", []) == [written]


def test_images_become_base64_image_blocks_before_the_text():
    (frame,) = ClaudeDriver().message_frames(FIRST, "what is this?", [("image/png", "iVBORw0KGgo="),
                                                                      ("image/jpeg", "/9j/4AAQ")])
    assert frame["message"]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
        {"type": "text", "text": "what is this?"},
    ]
    assert frame["uuid"] == FIRST


def test_an_image_without_text_has_no_empty_text_block():
    (frame,) = ClaudeDriver().message_frames(FIRST, "", [("image/png", "iVBORw0KGgo=")])
    assert [block["type"] for block in frame["message"]["content"]] == ["image"]


def test_every_control_request_devhost_makes_gets_a_fresh_id():
    driver = ClaudeDriver()
    frames = [*driver.start_frames(), *driver.set_model_frames("sonnet"), *driver.interrupt_frames(),
              *driver.stop_frames()]
    assert len({f["request_id"] for f in frames}) == 4
    assert [f["request"]["subtype"] for f in frames] == ["initialize", "set_model", "interrupt", "end_session"]


def test_an_empty_model_returns_to_the_clis_default():
    assert ClaudeDriver().set_model_frames("")[0]["request"] == {"subtype": "set_model", "model": "default"}


# ---- command lines ---------------------------------------------------------------------------

def test_the_command_line_speaks_stream_json_and_routes_permission_prompts_to_devhost():
    argv = claude.command_line(("claude",))
    assert argv[0] == "claude"
    for flag in ("-p", "--verbose", "--replay-user-messages", "--include-partial-messages"):
        assert flag in argv
    assert argv[argv.index("--input-format") + 1] == "stream-json"
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"
    assert not any(item.startswith(("--model", "--resume")) for item in argv)


def test_a_configured_command_of_several_words_comes_first_unchanged():
    argv = claude.command_line(("node", "/opt/claude/cli.js"), model="sonnet")
    assert argv[:2] == ["node", "/opt/claude/cli.js"]


@pytest.mark.parametrize("value", ["--dangerously-skip-permissions", "-p", "sonnet --verbose"])
def test_a_model_or_resume_id_is_one_argv_item_and_never_reads_as_a_flag(value):
    argv = claude.command_line(("claude",), model=value, resume_id=value)
    assert argv == [*claude.command_line(("claude",)), f"--model={value}", f"--resume={value}"]


def test_the_listing_command_line_runs_no_turn_and_asks_no_permissions():
    argv = claude.listing_command_line(("claude",))
    assert "--permission-prompt-tool" not in argv and "--replay-user-messages" not in argv
    assert claude.listing_requests() == [{"type": "control_request", "request_id": "devhost-models",
                                          "request": {"subtype": "initialize"}}]


def test_the_listing_reply_is_the_initialize_answer_and_nothing_else():
    answer = {"type": "control_response", "response": {"subtype": "success", "request_id": "devhost-models",
              "response": {"models": [{"value": "sonnet", "displayName": "Sonnet", "description": "fast"}]}}}
    assert claude.listing_reply(answer) == [{"id": "sonnet", "label": "Sonnet", "description": "fast"}]
    assert claude.listing_reply({"type": "system", "subtype": "init"}) is None
    refused = {"type": "control_response", "response": {"subtype": "error", "request_id": "devhost-models",
               "error": "nope"}}
    with pytest.raises(ValueError, match="nope"):
        claude.listing_reply(refused)


# ---- model list ------------------------------------------------------------------------------

def test_models_come_from_the_initialize_reply_with_their_display_names():
    reply = next(r["frame"] for r in recorded("initialize")
                 if r["dir"] == "cli->host" and r["frame"]["response"].get("request_id") == "req_init")
    models = claude.models_from_initialize(reply["response"]["response"])
    assert [m["id"] for m in models][:4] == ["default", "opus", "fable", "sonnet"]
    assert models[0]["label"] == "Default (recommended)"
    assert models[0]["description"].startswith("Use the default model")
    assert all(set(m) == {"id", "label", "description"} for m in models)


def test_a_model_entry_without_a_value_is_skipped_and_a_missing_name_falls_back_to_the_value():
    models = claude.models_from_initialize({"models": [{"displayName": "nameless"}, "haiku", {"value": "haiku"}]})
    assert models == [{"id": "haiku", "label": "haiku", "description": ""}]
    assert claude.models_from_initialize({}) == []


# ---- finding a saved conversation ------------------------------------------------------------

SESSION = "2792a6d5-942a-4e6c-aae1-893c1a3b7798"


def save_transcript(config_dir: Path, session_id: str, cwd: str | None, slug: str = "-work-app") -> Path:
    """A transcript shaped like the CLI's: queue operations first, then lines that carry cwd."""
    folder = config_dir / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "queue-operation", "operation": "enqueue", "sessionId": session_id, "content": "hi"},
             "not json {"]
    if cwd is not None:
        lines.append({"type": "user", "cwd": cwd, "sessionId": session_id, "message": {"role": "user"}})
    path = folder / f"{session_id}.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def test_a_saved_conversation_gives_the_folder_it_was_started_in(tmp_path):
    save_transcript(tmp_path / "home" / ".claude", SESSION, "/work/app")
    assert claude.find_conversation_cwd(SESSION, {"HOME": str(tmp_path / "home")}) == "/work/app"


def test_an_unknown_conversation_gives_none(tmp_path):
    save_transcript(tmp_path / "home" / ".claude", SESSION, "/work/app")
    other = "00000000-0000-4000-8000-000000000000"
    assert claude.find_conversation_cwd(other, {"HOME": str(tmp_path / "home")}) is None


def test_a_conversation_saved_without_a_folder_gives_an_empty_string(tmp_path):
    save_transcript(tmp_path / "home" / ".claude", SESSION, None)
    assert claude.find_conversation_cwd(SESSION, {"HOME": str(tmp_path / "home")}) == ""


def test_claude_config_dir_replaces_home_dot_claude(tmp_path):
    save_transcript(tmp_path / "home" / ".claude", SESSION, "/from/home")
    save_transcript(tmp_path / "config", SESSION, "/from/config")
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    assert claude.find_conversation_cwd(SESSION, env) == "/from/config"


def test_a_config_dir_with_pattern_characters_is_read_literally(tmp_path):
    config = tmp_path / "odd [dir] *?"
    save_transcript(config, SESSION, "/work/app")
    assert claude.find_conversation_cwd(SESSION, {"CLAUDE_CONFIG_DIR": str(config)}) == "/work/app"


@pytest.mark.parametrize("pattern", ["*", "2792a6d5-*", "[0-9]*", "../-work-app/" + SESSION])
def test_a_session_id_is_a_name_never_a_pattern_or_a_path(tmp_path, pattern):
    save_transcript(tmp_path / "home" / ".claude", SESSION, "/work/app")
    assert claude.find_conversation_cwd(pattern, {"HOME": str(tmp_path / "home")}) is None


def test_the_fixtures_are_the_recorded_sessions_these_tests_rely_on():
    # Guards against a fixture being trimmed to the point where a replay proves nothing.
    names = sorted(p.stem for p in FRAMES.glob("*.jsonl"))
    assert names == sorted(["ask_question", "background_bash", "controls2", "err_401", "err_529_exhausted",
                            "err_529_retry", "fold_during_tool", "initialize", "perm_allow", "perm_pending_interrupt",
                            "plain", "queued", "rewind", "rewind_files", "subagent", "thinking", "usage_limit",
                            "usage_warning"])
    for name in names:
        assert any(r["dir"] == "cli->host" for r in recorded(name)), name


def test_a_deny_that_interrupts_ends_the_turn_as_an_interrupt_not_an_error():
    driver = ClaudeDriver()
    driver.respond_frames("r1", {"behavior": "deny", "message": "no", "interrupt": True})
    _, found = driver.decode({"type": "result", "is_error": True, "subtype": "error_during_execution",
                              "terminal_reason": "aborted_tools"})
    assert found[0] == fx.TurnEnded(interrupted=True)


def test_always_allow_stays_in_the_session_and_never_widens_it():
    [frame] = ClaudeDriver().respond_frames("r1", {"behavior": "allow", "updatedPermissions": [
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}], "behavior": "allow",
         "destination": "userSettings"},
        {"type": "addDirectories", "directories": ["/"], "destination": "session"},
        {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}]})
    answer = frame["response"]["response"]
    assert answer["updatedPermissions"] == [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}],
                                             "behavior": "allow", "destination": "session"}]
    [frame] = ClaudeDriver().respond_frames("r2", {"behavior": "allow", "updatedPermissions": [
        {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}]})
    assert "updatedPermissions" not in frame["response"]["response"]


def test_a_retried_model_request_is_an_effect_with_its_attempt_status_and_error():
    run = replay("err_529_retry")
    retries = run.effects(fx.Retry)
    assert retries[:2] == [fx.Retry(1, 10, 529, "overloaded"), fx.Retry(2, 10, 529, "overloaded")]
    assert run.effects(fx.TurnEnded)  # the turn still ends: a retry does not end it


def test_a_turn_the_cli_starts_by_itself_after_background_work_ends_is_a_turn():
    # The subagent ends after the parent's turn did; Claude Code then starts a turn of its own
    # (system/init, no message of ours) to report on it: the session is running, not idle.
    run = replay("subagent")
    assert len(run.effects(fx.TurnStarted)) == 2 and len(run.effects(fx.TurnEnded)) == 2
    second_init = [n for n, s in enumerate(run.steps) if s.frame.get("subtype") == "init"][1]
    assert fx.TurnStarted() in run.steps[second_init].effects


# ---- usage limits and overloaded models ------------------------------------------------------

RESETS_AT_MS = 1796160000 * 1000  # the reset time the recordings' mock named


def test_a_turn_on_a_used_up_five_hour_window_ends_with_a_usage_limit_and_its_reset():
    run = replay("usage_limit")  # a subscription login; the API refused with the unified headers
    [ended] = run.effects(fx.TurnEnded)
    assert ended.error.startswith("You've hit your 5-hour limit")
    assert ended.limit == {"kind": "usage", "resetsAt": RESETS_AT_MS, "window": "five_hour", "message": ended.error}
    [usage] = run.effects(fx.PlanUsage)
    assert dict(usage.usage) == {"window": "five_hour", "utilization": 1, "status": "rejected",
                                 "resetsAt": RESETS_AT_MS}


def test_a_window_nearly_used_up_is_a_warning_and_the_turn_is_a_normal_one():
    run = replay("usage_warning")
    [usage] = run.effects(fx.PlanUsage)
    assert dict(usage.usage) == {"window": "five_hour", "utilization": 0.93, "status": "allowed_warning",
                                 "resetsAt": RESETS_AT_MS}
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded()]


def test_an_overloaded_model_whose_retries_ran_out_ends_with_an_overload_limit():
    run = replay("err_529_exhausted")
    [ended] = run.effects(fx.TurnEnded)
    assert ended.limit == {"kind": "overload", "message": ended.error} and "529" in ended.error


def test_an_error_that_is_no_limit_has_none():
    [ended] = replay("err_401").effects(fx.TurnEnded)
    assert ended.error and ended.limit is None

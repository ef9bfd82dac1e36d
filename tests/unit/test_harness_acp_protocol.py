"""actors.harness.acp.protocol: the ACP driver, checked against recorded OpenCode runs.

The recordings (tests/fixtures/acp/opencode/, made by tests/fixtures/record_acp_frames.py) are
real runs of opencode-ai 1.18.33 (``opencode acp``) against the Responses mock. A replay plays
devhost's part with the driver itself — its own handshake, the messages, cancels and answers
devhost would write, each compared with what the recorder wrote — and feeds the driver every
frame the agent wrote back.
"""
from dataclasses import dataclass, field

import pytest

from actors.harness import effects as fx
from actors.harness.acp import AcpSettings, AcpSpec, harness
from actors.harness.acp.protocol import CLIENT_CAPABILITIES, NOT_SENT_INTERRUPT, AcpDriver
from tests.unit.acp_frames import CWD, agent_frames, client_frames, lines

OPENCODE = harness(AcpSpec("opencode", "OpenCode", ("opencode", "acp"), "1.18.33"))


def effects_of(found, kind):
    return [f for f in found if isinstance(f, kind)]


def written(found) -> list[dict]:
    return [frame for w in effects_of(found, fx.Write) for frame in w.frames]


@dataclass
class Replay:
    driver: AcpDriver
    effects: list = field(default_factory=list)
    ops: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    out: list = field(default_factory=list)  # every frame the driver wrote, in order

    def write(self, items):
        self.out += [i for i in items if isinstance(i, dict)]
        self.effects += [i for i in items if not isinstance(i, dict)]

    def feed(self, frame):
        keep, found, ops = self.driver.read(frame)
        self.kept.append(keep)
        self.effects += found
        self.ops += ops
        self.out += written(found)
        return found


def replay(name: str, *, answer=None, settings=AcpSettings("supervised"), resume_id=None, images=()) -> Replay:
    """Plays one recorded run: the driver's start, then each line in order. A recorded prompt is
    sent by ``message_frames`` (checked to be the same frame), a cancel by ``interrupt_frames``, an
    answer to a permission request by the projection's ``answer_approval(decision)`` (``answer``)."""
    run = Replay(OPENCODE.Driver(cwd=CWD, settings=settings, resume_id=resume_id))
    run.write(run.driver.start_frames())
    for number, line in enumerate(lines(name)):
        msg = line["msg"]
        if line["dir"] == "<":
            run.feed(msg)
        elif line["dir"] == ">" and msg.get("method") == "session/prompt":
            text = next((b["text"] for b in msg["params"]["prompt"] if b["type"] == "text"), "")
            pictures = [(b["mimeType"], b["data"]) for b in msg["params"]["prompt"] if b["type"] == "image"]
            run.write(run.driver.message_frames(f"m{number}", text, pictures))
        elif line["dir"] == ">" and msg.get("method") == "session/cancel":
            run.write(run.driver.interrupt_frames())
        elif line["dir"] == ">" and "result" in msg and answer is not None:
            request_id = run.driver.projection.thread_id_of(msg["id"])
            run.write(run.driver.respond_frames(msg["id"], run.driver.projection.answer_approval(
                request_id, answer, None)))
        if line["dir"] == "note" and "exit" in msg:
            break  # the process is gone: a later run (load's second process) is a driver of its own
    return run


def test_the_harness_face_is_made_for_the_manifests_id():
    assert OPENCODE.HARNESS_ID == "opencode" and OPENCODE.LABEL == "OpenCode"
    assert OPENCODE.DEFAULT_COMMAND == ("opencode", "acp")
    assert OPENCODE.command_line(("opencode", "acp"), model="m", resume_id="s") == ["opencode", "acp"]
    assert OPENCODE.Driver().label == "OpenCode" and OPENCODE.Driver.harness_id == "opencode"
    other = harness(AcpSpec("gemini", "Gemini CLI", ("gemini", "--acp")))
    assert other.Driver.label == "Gemini CLI" and OPENCODE.Driver.label == "OpenCode"


def test_the_handshake_is_initialize_then_session_new_declaring_no_client_ability():
    run = replay("basic")
    recorded = client_frames("basic")
    assert run.out[0]["method"] == "initialize"
    declared = run.out[0]["params"]["clientCapabilities"]
    assert declared == CLIENT_CAPABILITIES == recorded[0]["params"]["clientCapabilities"]
    assert run.out[1] == {**recorded[1], "id": run.out[1]["id"]}  # session/new {cwd, mcpServers: []}
    session = agent_frames("basic")[1]["result"]["sessionId"]
    assert effects_of(run.effects, fx.NativeSession) == [fx.NativeSession(session)]
    assert effects_of(run.effects, fx.Ready)[0].capabilities == ("loadSession", "image")
    assert effects_of(run.effects, fx.ModelInUse)[0] == fx.ModelInUse("mock/gpt-5.5")


def test_a_prompt_is_taken_up_at_its_first_update_and_ends_with_its_answer():
    run = replay("basic")
    assert run.out[2] == {**client_frames("basic")[2], "id": run.out[2]["id"]}
    assert effects_of(run.effects, fx.Delivery) == [fx.Delivery("m4", "started")]
    assert effects_of(run.effects, fx.TurnEnded) == [fx.TurnEnded()]
    assert effects_of(run.effects, fx.MessageSettled) == [fx.MessageSettled("m4")]
    assert dict(effects_of(run.effects, fx.Usage)[0].fields)["totalTokens"] == 120
    assert run.driver.waiting == set()
    facts = {key: value for effect in effects_of(run.effects, fx.Facts) for key, value in effect.fields}
    assert "init" in facts["slashCommands"] and "review" in facts["slashCommands"]


def test_the_chat_hears_what_the_agent_advertised_once_and_again_when_it_is_seen_doing_more():
    run = replay("basic")
    told = [dict(effect.fields)["abilities"] for effect in effects_of(run.effects, fx.Facts)
            if "abilities" in dict(effect.fields)]
    assert told[0]["loadSession"] is True and told[0]["seen"] == {}
    assert len(told) == len({repr(t) for t in told})  # each told once, when it changed
    run = replay("permission_allow", answer="allow")
    told = [dict(effect.fields)["abilities"] for effect in effects_of(run.effects, fx.Facts)
            if "abilities" in dict(effect.fields)]
    assert told[-1]["seen"] == {"permissionRequests": True}


def test_a_permission_request_opens_an_approval_and_allow_sends_the_allow_once_option():
    run = replay("permission_allow", answer="allow")
    assert effects_of(run.effects, fx.RequestOpened) == [fx.RequestOpened(0, "session/request_permission")]
    answers = [f for f in run.out if f.get("id") == 0 and "result" in f]
    assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected", "optionId": "once"}}}]
    assert answers[0]["result"] == next(m for m in client_frames("permission_allow") if m.get("id") == 0)["result"]
    assert effects_of(run.effects, fx.TurnEnded) == [fx.TurnEnded()]


def test_deny_sends_the_reject_option_and_the_turn_ends_with_the_tool_failed():
    run = replay("permission_reject", answer="deny")
    answers = [f for f in run.out if f.get("id") == 0 and "result" in f]
    assert answers[0]["result"] == {"outcome": {"outcome": "selected", "optionId": "reject"}}
    assert [op[1]["state"] for op in run.ops if op[0] == "upsert" and op[1].get("kind") == "tool"][-1] == "error"
    assert effects_of(run.effects, fx.TurnEnded) == [fx.TurnEnded()]


def test_cancel_is_a_notification_and_the_prompt_ends_cancelled_as_an_interrupt():
    run = replay("cancel")
    cancels = [f for f in run.out if f.get("method") == "session/cancel"]
    assert cancels == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": run.driver.session_id}}]
    assert "id" not in cancels[0]
    assert effects_of(run.effects, fx.TurnEnded) == [fx.TurnEnded(interrupted=True)]


def test_cancel_answers_an_open_permission_request_cancelled_and_drops_held_messages():
    driver = OPENCODE.Driver(cwd=CWD)
    driver.start_frames()
    frames = agent_frames("permission_allow")
    driver.read(frames[0])
    driver.read(frames[1])
    driver.message_frames("first", "Run echo.", [])
    assert driver.message_frames("second", "and then", []) == [fx.Delivery("second", "queued")]
    request = next(f for f in frames if f.get("method") == "session/request_permission")
    driver.read(request)
    found = driver.interrupt_frames()
    assert found[0]["method"] == "session/cancel"
    assert {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}} in found
    assert fx.RequestClosed(0) in found
    assert fx.Delivery("second", "cancelled", NOT_SENT_INTERRUPT) in found
    assert driver.waiting == set()


def test_nothing_to_cancel_when_no_prompt_runs():
    run = replay("basic")
    assert run.driver.interrupt_frames() == []


def test_a_message_during_a_turn_waits_and_goes_out_when_the_turn_ends():
    driver = OPENCODE.Driver(cwd=CWD)
    driver.start_frames()
    frames = agent_frames("basic")
    driver.read(frames[0])
    driver.read(frames[1])
    first = driver.message_frames("a", "one", [])
    assert first[0]["method"] == "session/prompt"
    assert driver.message_frames("b", "two", []) == [fx.Delivery("b", "queued")]
    assert driver.waiting == {"a", "b"}
    _, found, _ = driver.read({"jsonrpc": "2.0", "id": first[0]["id"], "result": {"stopReason": "end_turn"}})
    assert fx.TurnEnded() in found
    nxt = written(found)
    assert nxt[0]["method"] == "session/prompt" and nxt[0]["params"]["prompt"] == [{"type": "text", "text": "two"}]
    assert driver.waiting == {"b"}  # the link keeps the turn open for it


def test_messages_before_the_session_is_ready_go_out_once_it_is():
    driver = OPENCODE.Driver(cwd=CWD)
    driver.start_frames()
    assert driver.message_frames("early", "hi", []) == []
    frames = agent_frames("basic")
    driver.read(frames[0])
    _, found, _ = driver.read(frames[1])
    assert [f["method"] for f in written(found)] == ["session/prompt"]


def test_load_resumes_the_saved_session_and_its_replay_is_not_projected_as_a_turn_but_told_as_earlier_items():
    recorded = lines("load")
    exit_at = next(i for i, line in enumerate(recorded) if line["dir"] == "note" and "exit" in line["msg"])
    second = [line["msg"] for line in recorded[exit_at + 1:] if line["dir"] == "<"]
    session = client_frames("load")[4]["params"]["sessionId"]
    driver = OPENCODE.Driver(cwd=CWD, resume_id=session)
    driver.start_frames()
    _, found, _ = driver.read(second[0])  # initialize: loadSession advertised
    assert written(found) == [{"jsonrpc": "2.0", "id": 2, "method": "session/load",
                               "params": {"sessionId": session, "cwd": CWD, "mcpServers": []}}]
    replayed = [f for f in second[1:] if f.get("method") == "session/update"][:2]
    assert [f["params"]["update"]["sessionUpdate"] for f in replayed] == ["user_message_chunk", "agent_message_chunk"]
    for frame in replayed:
        assert driver.read(frame) == (False, [], [])
    _, found, _ = driver.read(next(f for f in second if f.get("id") == 2))
    assert fx.NativeSession(session) in found and any(isinstance(f, fx.Ready) for f in found)
    # What was replayed comes once, as items of their own, first: a chat made for the resume
    # takes them (actors/durable_face.py), one that holds the conversation drops them.
    [earlier] = effects_of(found, fx.Earlier)
    assert found[0] is earlier
    assert [(i["kind"], i.get("text")) for i in earlier.items] == [
        ("turn", None), ("user", "First question."), ("assistant", "First answer.")]
    prompt = driver.message_frames("m", "Second question.", [])
    _, found, ops = driver.read(next(f for f in second if f.get("method") == "session/update"
                                     and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                                     and f["params"]["update"]["content"]["text"] == "Second answer."))
    assert ops and ops[0][2] == "Second answer."
    assert prompt[0]["id"] == 3


def test_a_session_that_cannot_be_loaded_starts_a_new_one_and_says_so():
    driver = OPENCODE.Driver(cwd=CWD, resume_id="ses_doesnotexist")
    driver.start_frames()
    driver.read(agent_frames("load")[0])
    refused = next(f for f in agent_frames("load") if "error" in f)  # OpenCode: -32603 "service failure"
    _, found, _ = driver.read({**refused, "id": 2})
    assert "could not load the saved conversation" in effects_of(found, fx.ControlFailed)[0].message
    assert [f["method"] for f in written(found)] == ["session/new"]
    assert driver.abilities.load_session  # one missing session takes nothing back


def test_an_agent_that_does_not_offer_load_gets_a_new_session():
    driver = OPENCODE.Driver(cwd=CWD, resume_id="ses_1")
    driver.start_frames()
    init = agent_frames("basic")[0]
    caps = {**init["result"]["agentCapabilities"], "loadSession": False}
    _, found, _ = driver.read({**init, "result": {**init["result"], "agentCapabilities": caps}})
    assert [f["method"] for f in written(found)] == ["session/new"]
    assert "cannot load a saved conversation" in effects_of(found, fx.ControlFailed)[0].message


def test_an_image_goes_as_an_image_block():
    run = replay("image")
    sent = next(f for f in run.out if f.get("method") == "session/prompt")
    assert sent["params"]["prompt"] == client_frames("image")[2]["params"]["prompt"]
    assert sent["params"]["prompt"][1]["type"] == "image" and sent["params"]["prompt"][1]["mimeType"] == "image/png"


def test_at_the_agents_exit_the_prompt_stays_unanswered_and_stop_has_no_frames():
    run = replay("exit")
    assert effects_of(run.effects, fx.TurnEnded) == []  # the link's exit ends the turn (CliLink.exited)
    assert run.driver.stop_frames() == []  # closing stdin ends it: exit 0 at once (recorded note)
    note = next(line["msg"] for line in lines("exit") if line["dir"] == "note" and "exit" in line["msg"])
    assert note["exit"] == 0


def test_the_model_changes_by_its_config_option_before_the_prompt_that_asks():
    run = replay("basic")
    driver = run.driver
    frames = driver.message_frames("m", "hi", [], model="opencode/big-pickle")
    assert frames[0]["method"] == "session/set_config_option"
    assert frames[0]["params"] == {"sessionId": driver.session_id, "configId": "model", "value": "opencode/big-pickle"}
    assert isinstance(frames[1], fx.Deadline)
    answer = next(f for f in agent_frames("controls") if f.get("id") == 5)  # set_config_option model: accepted
    _, found, _ = driver.read({**answer, "id": frames[0]["id"]})
    assert fx.ModelInUse("mock/gpt-5.5") in found  # what the agent says is current (the recording's model)
    assert [f["method"] for f in written(found)] == ["session/prompt"]


def test_a_refused_model_is_said_and_the_message_still_goes():
    run = replay("basic")
    frames = run.driver.message_frames("m", "hi", [], model="nobody/none")
    refused = next(f for f in agent_frames("controls") if f.get("id") == 7)
    _, found, _ = run.driver.read({**refused, "id": frames[0]["id"]})
    assert "model not found" in effects_of(found, fx.ModelRefused)[0].message
    assert [f["method"] for f in written(found)] == ["session/prompt"]


def test_the_agents_own_mode_is_set_by_its_config_option():
    run = replay("basic")
    frames = run.driver.set_agent_mode_frames("plan")
    assert frames[0]["params"] == {"sessionId": run.driver.session_id, "configId": "mode", "value": "plan"}
    assert run.driver.set_agent_mode_frames("no-such-mode") is None


def test_devhostd_modes_answer_permissions_itself_and_never_need_a_new_process():
    request = next(f for f in agent_frames("edit") if f.get("method") == "session/request_permission")
    driver = OPENCODE.Driver(cwd=CWD, root=CWD, settings=AcpSettings("supervised"))
    keep, found, ops = driver.read(request)
    assert effects_of(found, fx.RequestOpened) and ops
    driver = OPENCODE.Driver(cwd=CWD, root=CWD, settings=AcpSettings("auto-accept-edits"))
    keep, found, ops = driver.read(request)  # an edit inside the checkout: allowed once, by devhostd
    assert written(found) == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected",
                                                                                  "optionId": "once"}}}]
    assert not keep and ops == []
    bash = next(f for f in agent_frames("permission_allow") if f.get("method") == "session/request_permission")
    assert effects_of(driver.read(bash)[1], fx.RequestOpened)  # a command still asks the person
    driver = OPENCODE.Driver(cwd=CWD, root=CWD, settings=AcpSettings("full-access"))
    assert written(driver.read(bash)[1])[0]["result"]["outcome"]["optionId"] == "once"
    assert driver.set_mode_frames(AcpSettings("supervised")) == []
    assert driver.effective_mode == "supervised"
    assert AcpSettings("auto").effective == "auto-accept-edits"  # no sandbox to keep "auto" narrow


def test_requests_devhostd_does_not_serve_are_refused_at_once():
    driver = OPENCODE.Driver(cwd=CWD)
    keep, found, ops = driver.read({"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file",
                                    "params": {"sessionId": "s", "path": "/etc/passwd"}})
    assert written(found) == [{"jsonrpc": "2.0", "id": 7, "error": {
        "code": -32601, "message": "devhost does not serve fs/read_text_file"}}]
    assert ops == []


def test_a_malformed_answer_is_refused_before_it_reaches_the_agent():
    with pytest.raises(ValueError):
        OPENCODE.Driver().respond_frames(0, {"behavior": "allow"})


@pytest.mark.parametrize("frame, reason", [
    ("not a dict", "not a JSON object"),
    ({"jsonrpc": "2.0"}, "neither a request"),
    ({"jsonrpc": "2.0", "method": 5}, "not a string"),
    ({"jsonrpc": "2.0", "method": "session/update", "params": []}, "params that are not an object"),
    ({"jsonrpc": "2.0", "method": "session/update", "params": {"update": "x"}}, "without an update kind"),
    ({"jsonrpc": "2.0", "id": 41, "result": {}}, "a reply to no request of ours"),
])
def test_a_malformed_frame_is_dropped_with_a_reason_never_raised(frame, reason):
    driver = OPENCODE.Driver(cwd=CWD)
    assert driver.read(frame) == (False, [], [])
    assert reason in driver.dropped[-1]


def test_a_permission_request_without_options_is_refused_and_dropped():
    driver = OPENCODE.Driver(cwd=CWD)
    keep, found, ops = driver.read({"jsonrpc": "2.0", "id": 3, "method": "session/request_permission",
                                    "params": {"sessionId": "s", "toolCall": {}, "options": []}})
    assert not keep and ops == [] and written(found)[0]["error"]["code"] == -32602
    assert "without options" in driver.dropped[-1]


def test_what_acp_has_no_counterpart_for():
    driver = OPENCODE.Driver()
    assert driver.rewind_frames("turn") is None
    assert driver.stop_task_frames("t") == []
    assert isinstance(driver.compact_frames()[0], fx.ControlFailed)
    assert driver.skills is None
    assert OPENCODE.find_conversation_cwd("ses_1") == ""
    assert OPENCODE.listing_reply(agent_frames("basic")[0] | {"id": "devhost-init"}) == []

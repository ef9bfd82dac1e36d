"""actors.harness.codex: Codex's app-server protocol, checked against recorded sessions.

The recordings in tests/fixtures/codex-frames/ are real runs of codex-cli 0.169.0 (``codex
app-server``) against a mock of the OpenAI Responses API, made by a probe client (one line per
frame: ``{t, dir, msg}``, ``>`` client to server, ``<`` server to client; long strings and lists
are cut). A replay plays devhost's part with the driver itself (the messages, interrupts and
answers devhost would write) and feeds the driver every frame the server wrote back.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from actors.harness import codex
from actors.harness import effects as fx
from actors.harness.codex import CodexDriver
from actors.harness.codex.protocol import NOT_SENT_INTERRUPT

FRAMES = Path(__file__).resolve().parent.parent / "fixtures" / "codex-frames"


def recorded(name: str) -> list[dict]:
    return [json.loads(line) for line in (FRAMES / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def server_frames(name: str) -> list[dict]:
    return [r["msg"] for r in recorded(name) if r["dir"] == "<"]


def recorded_request(name: str, method: str, **params) -> dict:
    """The first request ``method`` the recorder wrote whose params include ``params``."""
    return next(r["msg"] for r in recorded(name) if r["dir"] == ">" and r["msg"].get("method") == method
                and "id" in r["msg"] and all(r["msg"]["params"].get(k) == v for k, v in params.items()))


def recorded_reply(name: str, method: str, **params) -> dict:
    """What the server answered to ``recorded_request(name, method, **params)``."""
    request = recorded_request(name, method, **params)
    return next(r["msg"] for r in recorded(name)
                if r["dir"] == "<" and "method" not in r["msg"] and r["msg"].get("id") == request["id"])


def notification(name: str, method: str, index: int = 0) -> dict:
    return [f for f in server_frames(name) if f.get("method") == method and "id" not in f][index]


def answer(driver: CodexDriver, request: dict, reply: dict) -> list:
    """Feeds a recorded reply to the driver as the answer to the request the driver made."""
    keep, found = driver.decode({**reply, "id": request["id"]})
    assert not keep
    return found


@dataclass
class Step:
    frame: dict           # a frame the server wrote, as decoded (reply ids mapped)
    keep: bool            # whether it goes to the event history
    effects: list         # what it means to the chat
    waiting: set          # driver.waiting right after it


@dataclass
class Replay:
    driver: CodexDriver
    steps: list[Step] = field(default_factory=list)
    written: list[dict] = field(default_factory=list)  # frames devhost writes, in order
    deadlines: list[fx.Deadline] = field(default_factory=list)
    ids: dict = field(default_factory=dict)  # the recorder's request id -> the driver's

    def effects(self, kind=None) -> list:
        return [e for step in self.steps for e in step.effects if kind is None or isinstance(e, kind)]

    def first(self, kind, **fields) -> int:
        """Index of the first effect of ``kind`` whose fields match (over all effects, in order)."""
        for index, effect in enumerate(self.effects()):
            if isinstance(effect, kind) and all(getattr(effect, k) == v for k, v in fields.items()):
                return index
        raise AssertionError(f"no {kind.__name__} {fields} in {self.effects()}")

    def last(self, kind, **fields) -> int:
        effects = self.effects()
        return max(i for i, e in enumerate(effects)
                   if isinstance(e, kind) and all(getattr(e, k) == v for k, v in fields.items()))

    def requests(self, method: str, message_id: str | None = None) -> list[dict]:
        return [f for f in self.written if f.get("method") == method and "id" in f
                and (message_id is None or f["params"].get("clientUserMessageId") == message_id)]

    def steps_of(self, method: str) -> list[Step]:
        return [s for s in self.steps if s.frame.get("method") == method]

    def _took(self, made: list) -> None:
        for item in made:
            if isinstance(item, fx.Write):
                self.written += item.frames
            elif isinstance(item, fx.Deadline):
                self.deadlines.append(item)
            elif isinstance(item, dict):
                self.written.append(item)


def replay(name: str, driver: CodexDriver | None = None, *, raced: tuple[str, ...] = ()) -> Replay:
    """Plays a recorded session through ``driver``.

    The recorder's requests become what devhost would do: its ``initialize`` is
    ``start_frames``, its ``turn/start``/``turn/steer`` a message (under its
    clientUserMessageId, else ``msg-<id>``) that the driver sends as it sees fit, its
    ``turn/interrupt`` ``interrupt_frames``, its answers ``respond_frames``; ``thread/start``
    and ``thread/resume`` the driver makes on its own. A reply reaches the driver under the id
    the driver chose for the same request (same method, same message / thread / turn); a reply
    to anything else (the recorder's model/list, thread/read, or a request the driver made
    differently) arrives under an id devhost never uses. Probes devhost never makes (a steer or
    interrupt naming a made-up turn, a message to another thread) are left out.
    ``raced``: messages devhost wrote before it read the ``turn/completed`` the server had
    already sent, as a live steer can race the end of a turn.
    """
    driver = driver or CodexDriver()
    records = _race(recorded(name), set(raced))
    turns = _turn_ids(records)
    run = Replay(driver)
    asked: dict = {}     # the recorder's request id -> (method, key) for requests devhost makes
    kinds: dict = {}     # the server's request id -> its method
    claimed: set = set()
    for record in records:
        frame = record["msg"]
        if record["dir"] == ">":
            _devhost_part(run, frame, asked, kinds, turns)
            continue
        if "method" not in frame and "id" in frame:
            frame = {**frame, "id": _claim(run, frame["id"], asked, claimed)}
        elif "id" in frame:
            kinds[frame["id"]] = frame["method"]
        keep, found = driver.decode(frame)
        run._took(found)
        run.steps.append(Step(frame, keep, found, set(driver.waiting)))
    return run


def _race(records: list[dict], raced: set) -> list[dict]:
    records = list(records)
    for record in list(records):
        if record["dir"] == ">" and (record["msg"].get("params") or {}).get("clientUserMessageId") in raced:
            at = records.index(record)
            end = max(i for i, r in enumerate(records[:at]) if r["msg"].get("method") == "turn/completed")
            records.insert(end, records.pop(at))
    return records


def _turn_ids(records: list[dict]) -> set:
    turns = set()
    for record in records:
        msg = record["msg"]
        for holder in (msg.get("params") or {}, msg.get("result") if isinstance(msg.get("result"), dict) else {}):
            if isinstance(holder.get("turn"), dict):
                turns.add(holder["turn"]["id"])
    return turns


def _key(method: str, params: dict):
    return {"turn/start": params.get("clientUserMessageId"), "turn/steer": params.get("clientUserMessageId"),
            "thread/resume": params.get("threadId"), "turn/interrupt": params.get("turnId")}.get(method)


def _claim(run: Replay, recorded_id, asked: dict, claimed: set):
    if recorded_id in asked:
        method, key = asked.pop(recorded_id)
        for frame in run.written:
            if frame.get("method") == method and "id" in frame and frame["id"] not in claimed \
                    and _key(method, frame["params"]) == key:
                claimed.add(frame["id"])
                run.ids[recorded_id] = frame["id"]
                return frame["id"]
    return f"recorder-{recorded_id}"


def _devhost_part(run: Replay, frame: dict, asked: dict, kinds: dict, turns: set) -> None:
    driver = run.driver
    method = frame.get("method")
    if method is None:  # an answer to one of the server's requests
        if "result" in frame:  # (devhost never answers with a JSON-RPC error)
            run._took(driver.respond_frames(frame["id"], frame["result"], kinds.get(frame["id"], "")))
        return
    params = frame.get("params") or {}
    if method == "initialize":
        run._took(driver.start_frames())
    elif method in ("turn/start", "turn/steer"):
        if driver.thread_id is not None and params.get("threadId") != driver.thread_id:
            return
        if method == "turn/steer" and params.get("expectedTurnId") not in turns:
            return
        message_id = params.get("clientUserMessageId") or f"msg-{frame['id']}"
        text = "".join(i["text"] for i in params["input"] if i["type"] == "text")
        images = [tuple(i["url"][len("data:"):].split(";base64,", 1)) for i in params["input"] if i["type"] == "image"]
        run._took(driver.message_frames(message_id, text, images))
        params = {**params, "clientUserMessageId": message_id}
    elif method == "turn/interrupt":
        if params.get("turnId") not in turns:
            return
        run._took(driver.interrupt_frames())
    elif method not in ("thread/start", "thread/resume"):
        return  # initialized (the driver sends its own), model/list, thread/read, ...: not devhost's requests
    if "id" in frame:
        asked[frame["id"]] = (method, _key(method, params))


def ready_driver(name: str = "frames-steer", **kwargs) -> CodexDriver:
    """A driver that went through the recorded handshake and thread/start of ``name``."""
    driver = CodexDriver(cwd=recorded_request(name, "thread/start")["params"]["cwd"], **kwargs)
    (initialize,) = driver.start_frames()
    (write,) = answer(driver, initialize, recorded_reply(name, "initialize"))
    answer(driver, write.frames[1], recorded_reply(name, "thread/start"))
    return driver


def running_turn(driver: CodexDriver, name: str = "frames-steer") -> None:
    """Sends a first message and feeds the recorded turn/start reply: a turn runs."""
    frame, _ = driver.message_frames("first", "first message", [])
    assert answer(driver, frame, recorded_reply(name, "turn/start")) == [fx.Delivery("first", "queued")]


STEER_THREAD = "01a22cb1-50b2-7991-9fb9-b24bebb29e42"
STEER_TURN_1 = "01a22cb1-50eb-7990-9963-27c16df2787b"
STEER_TURN_2 = "01a22cb1-5345-71c3-aa6c-55d4c9d285b2"
RESUMED = "01a22cb1-a1fa-7bf0-bb1f-36d8a0c5adb8"     # frames-resume-1 saved it, frames-resume-2 resumes it
NEVER_SAVED = "01a00000-0000-7000-8000-000000000000"  # frames-resume-2: "no rollout found"
APPROVAL = "item/commandExecution/requestApproval"


# ---- start -----------------------------------------------------------------------------------

def test_start_is_initialize_with_params_and_its_reply_sends_initialized_and_thread_start_in_the_folder():
    driver = CodexDriver(cwd="/home/dev/cx/steer/work")
    (initialize,) = driver.start_frames()
    # experimentalApi: ending one background terminal (thread/backgroundTerminals/terminate) needs it.
    assert initialize == {"id": initialize["id"], "method": "initialize",
                          "params": {"clientInfo": codex.CLIENT_INFO, "capabilities": {"experimentalApi": True}}}
    # No deadline of its own: the link's start watchdog waits on the whole start (actors/cli_link.py).
    (write,) = answer(driver, initialize, recorded_reply("frames-steer", "initialize"))
    initialized, start = write.frames
    assert initialized == {"method": "initialized"}
    # The frame the server was recorded reading, under the driver's own (fresh) id.
    assert start == {**recorded_request("frames-steer", "thread/start"), "id": start["id"]}
    assert start["id"] != initialize["id"]


def test_a_model_given_at_start_goes_on_thread_start():
    driver = CodexDriver(cwd="/w", model="gpt-6-sol")
    (initialize,) = driver.start_frames()
    (write,) = answer(driver, initialize, recorded_reply("frames-steer", "initialize"))
    assert write.frames[1]["params"] == {"cwd": "/w", "model": "gpt-6-sol"}


def test_the_thread_start_reply_names_the_native_session_makes_it_ready_and_reports_the_model():
    run = replay("frames-basic", CodexDriver(cwd="/home/dev/cx/basic/work"))
    (step,) = [s for s in run.steps if isinstance(s.frame.get("id"), int) and "thread" in s.frame.get("result", {})]
    thread_id = step.frame["result"]["thread"]["id"]
    assert step.effects == [fx.NativeSession(thread_id), fx.Ready(), fx.ModelInUse("gpt-5.5")]
    assert run.driver.thread_id == thread_id
    assert run.effects(fx.Ready) == [fx.Ready()]


def test_a_resume_id_makes_thread_resume_instead_of_thread_start():
    run = replay("frames-resume-2", CodexDriver(cwd="/home/dev/cx/resume/work", resume_id=RESUMED))
    (resume,) = run.requests("thread/resume")
    assert resume["params"] == {"threadId": RESUMED, "cwd": "/home/dev/cx/resume/work"}
    assert run.requests("thread/start") == []
    # The recorder's first resume (of another id) and its later ones were not the driver's.
    assert run.effects(fx.NativeSession) == [fx.NativeSession(RESUMED)]
    assert run.first(fx.Ready) < run.first(fx.Delivery, message_id="msg-11", delivery="queued")
    assert fx.ModelInUse("gpt-5.5") in run.effects()
    assert not run.effects(fx.ControlFailed) and not run.effects(fx.StartFailed)
    (turn_start,) = run.requests("turn/start")
    assert turn_start["params"]["threadId"] == RESUMED


def test_a_resume_codex_never_saved_starts_a_fresh_thread_and_delivers_the_held_messages_there():
    driver = CodexDriver(cwd="/home/dev/cx/resume/work", resume_id=NEVER_SAVED)
    (initialize,) = driver.start_frames()
    (write,) = answer(driver, initialize, recorded_reply("frames-resume-2", "initialize"))
    resume = write.frames[1]
    assert resume["params"] == {"threadId": NEVER_SAVED, "cwd": "/home/dev/cx/resume/work"}
    assert driver.message_frames("held-1", "first", []) == []

    notice, write = answer(driver, resume, recorded_reply("frames-resume-2", "thread/resume",
                                                                      threadId=NEVER_SAVED))
    assert isinstance(notice, fx.ControlFailed) and "new conversation" in notice.message
    (start,) = write.frames
    assert start["method"] == "thread/start" and start["params"] == {"cwd": "/home/dev/cx/resume/work"}
    assert driver.message_frames("held-2", "second", []) == []  # still no thread
    assert driver.waiting == {"held-1", "held-2"}

    found = answer(driver, start, recorded_reply("frames-resume-1", "thread/start"))
    assert found[:3] == [fx.NativeSession(RESUMED), fx.Ready(), fx.ModelInUse("gpt-5.5")]
    sent = [frame for effect in found if isinstance(effect, fx.Write) for frame in effect.frames]
    assert [(f["method"], f["params"]["clientUserMessageId"]) for f in sent] == [("turn/start", "held-1"),
                                                                                ("turn/start", "held-2")]
    assert [e for e in found if isinstance(e, fx.Deadline)] == [fx.Deadline(f["id"], codex.REPLY_DEADLINE)
                                                                 for f in sent]
    assert not any(isinstance(e, fx.StartFailed) for e in found)


def test_a_resume_error_other_than_never_saved_fails_the_held_messages_and_the_start():
    driver = CodexDriver(cwd="/home/dev/cx/resume/work", resume_id=RESUMED)
    (initialize,) = driver.start_frames()
    (write,) = answer(driver, initialize, recorded_reply("frames-resume-2", "initialize"))
    driver.message_frames("held-1", "first", [])
    driver.message_frames("held-2", "second", [])
    refusal = recorded_reply("frames-resume-3", "turn/start")  # the server's "thread not found: <id>"
    found = answer(driver, write.frames[1], refusal)
    reason = f"Codex could not open the conversation: {refusal['error']['message']}"
    assert found == [fx.ControlFailed(reason), fx.Delivery("held-1", "error", reason),
                     fx.Delivery("held-2", "error", reason), fx.StartFailed(reason)]
    assert driver.waiting == set()
    assert driver.thread_id is None


def test_a_refused_initialize_fails_the_start_and_the_held_messages():
    driver = CodexDriver(cwd="/w")
    (initialize,) = driver.start_frames()
    driver.message_frames("held-1", "hello", [])
    refusal = recorded_reply("frames-lifecycle-1", "initialize", clientInfo={"name": "again", "version": "1"})
    found = answer(driver, initialize, refusal)
    # Nothing else would end the start: the reply consumed the request, so its deadline finds nothing.
    assert fx.StartFailed("Codex refused to initialize: Already initialized") in found
    assert fx.Delivery("held-1", "error", "Codex refused to initialize: Already initialized") in found
    assert not any(isinstance(e, fx.Write) for e in found)
    assert driver.waiting == set()
    assert driver.expire(initialize["id"]) == []


# ---- messages --------------------------------------------------------------------------------

def test_messages_before_the_thread_is_ready_are_held_then_sent_in_order():
    driver = CodexDriver(cwd="/home/dev/cx/steer/work")
    (initialize,) = driver.start_frames()
    assert driver.message_frames("a", "one", []) == []  # before the handshake
    (write,) = answer(driver, initialize, recorded_reply("frames-steer", "initialize"))
    assert driver.message_frames("b", "two", []) == []  # thread/start is out, no reply yet
    assert driver.waiting == {"a", "b"}
    found = answer(driver, write.frames[1], recorded_reply("frames-steer", "thread/start"))
    (first,), (second,) = [e.frames for e in found if isinstance(e, fx.Write)]
    assert [first["params"]["input"][0]["text"], second["params"]["input"][0]["text"]] == ["one", "two"]
    assert first["params"]["threadId"] == second["params"]["threadId"] == STEER_THREAD
    assert found.index(fx.Ready()) < found.index(fx.Write((first,)))
    assert fx.Deadline(first["id"], codex.REPLY_DEADLINE) in found
    assert fx.Deadline(second["id"], codex.REPLY_DEADLINE) in found


@pytest.mark.parametrize("name", ["frames-basic", "frames-steer", "frames-interrupt", "frames-errors",
                                  "frames-cmd-approval-untrusted", "frames-file-approval"])
def test_every_request_devhost_writes_carries_params_and_a_fresh_id(name):
    run = replay(name, raced=("cli-3",) if name == "frames-steer" else ())
    requests = [f for f in run.written if "method" in f and "id" in f]
    assert len(requests) >= 3
    assert all(isinstance(f["params"], dict) for f in requests)
    assert len({f["id"] for f in requests}) == len(requests)
    assert [f for f in run.written if "method" in f and "id" not in f] == [{"method": "initialized"}]


def test_a_message_with_no_running_turn_is_the_turn_start_codex_was_recorded_reading():
    run = replay("frames-basic", CodexDriver(cwd="/home/dev/cx/basic/work"))
    (turn_start,) = run.requests("turn/start")
    assert turn_start == {**recorded_request("frames-basic", "turn/start"), "id": turn_start["id"]}
    assert "model" not in turn_start["params"]
    assert fx.Deadline(turn_start["id"], codex.REPLY_DEADLINE) in run.deadlines


def test_a_turn_start_reply_is_queued_and_the_user_message_item_with_its_client_id_is_started():
    run = replay("frames-basic")
    deliveries = run.effects(fx.Delivery)
    assert deliveries == [fx.Delivery("client-msg-1", "queued"), fx.Delivery("client-msg-1", "started")]
    queued = next(s for s in run.steps if fx.Delivery("client-msg-1", "queued") in s.effects)
    assert queued.waiting == {"client-msg-1"}  # received is not taken up
    started = next(s for s in run.steps if fx.Delivery("client-msg-1", "started") in s.effects)
    assert started.frame["params"]["item"]["type"] == "userMessage"
    assert started.waiting == set()
    # The turn's own id, as Codex names it (for the log).
    assert run.effects(fx.TurnStarted) == [fx.TurnStarted("01a22cb1-2c55-7591-8c7a-36872a9a7a15")]
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded()]


def test_a_user_message_item_without_a_client_id_is_no_delivery():
    run = replay("frames-errors")  # the recorder sent no clientUserMessageId
    assert {e.delivery for e in run.effects(fx.Delivery)} == {"queued"}
    assert len(run.steps_of("item/started")) >= 5


def test_a_model_chosen_with_a_message_goes_on_its_turn_start_and_is_not_repeated():
    driver = ready_driver()
    frame, _ = driver.message_frames("m1", "x", [], model="gpt-6-sol")
    assert frame["method"] == "turn/start" and frame["params"]["model"] == "gpt-6-sol"
    frame, _ = driver.message_frames("m2", "y", [])  # Codex keeps a turn's model for later turns
    assert frame["method"] == "turn/start" and "model" not in frame["params"]


def test_an_empty_model_goes_back_to_the_model_the_thread_started_with():
    driver = ready_driver()  # frames-steer: thread/start answered model "gpt-5.5"
    driver.message_frames("m1", "x", [], model="gpt-6-sol")
    frame, _ = driver.message_frames("m2", "y", [], model="")
    assert frame["params"]["model"] == "gpt-5.5"


def test_an_empty_model_with_no_model_known_sends_no_model():
    driver = CodexDriver(cwd="/w")
    (initialize,) = driver.start_frames()
    (write,) = answer(driver, initialize, recorded_reply("frames-steer", "initialize"))
    reply = recorded_reply("frames-steer", "thread/start")
    result = {k: v for k, v in reply["result"].items() if k != "model"}
    found = answer(driver, write.frames[1], {**reply, "result": result})
    assert not any(isinstance(e, fx.ModelInUse) for e in found)
    frame, _ = driver.message_frames("m1", "x", [], model="")
    assert "model" not in frame["params"]


def test_a_model_chosen_during_a_turn_goes_on_the_next_turn_start():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "faster", [], model="gpt-6-luna")
    assert steer["method"] == "turn/steer" and "model" not in steer["params"]
    driver.decode(notification("frames-steer", "turn/completed"))
    frame, _ = driver.message_frames("m3", "next", [])
    assert frame["method"] == "turn/start" and frame["params"]["model"] == "gpt-6-luna"


def test_set_model_writes_nothing_and_applies_to_the_next_turn_start():
    driver = ready_driver()
    assert driver.set_model_frames("gpt-6-astra") == []
    frame, _ = driver.message_frames("m1", "x", [])
    assert frame["params"]["model"] == "gpt-6-astra"


def test_images_are_data_urls_after_the_text_and_no_text_means_no_text_item():
    driver = ready_driver()
    frame, _ = driver.message_frames("m1", "What is this?", [("image/png", "iVBORw0KGgo=")])
    assert frame["params"]["input"] == [{"type": "text", "text": "What is this?", "text_elements": []},
                                        {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}]
    frame, _ = driver.message_frames("m2", "", [("image/jpeg", "/9j/4AAQ")])
    assert frame["params"]["input"] == [{"type": "image", "url": "data:image/jpeg;base64,/9j/4AAQ"}]


# ---- steering --------------------------------------------------------------------------------

def test_a_message_during_a_running_turn_is_a_steer_naming_that_turn():
    run = replay("frames-steer", CodexDriver(cwd="/home/dev/cx/steer/work"), raced=("cli-3",))
    (steer,) = run.requests("turn/steer", "cli-2")
    assert steer == {**recorded_request("frames-steer", "turn/steer", clientUserMessageId="cli-2"), "id": steer["id"]}
    assert steer["params"]["expectedTurnId"] == STEER_TURN_1
    assert run.requests("turn/start", "cli-2") == []
    assert fx.Deadline(steer["id"], codex.REPLY_DEADLINE) in run.deadlines


def test_a_steer_reply_is_queued_and_the_steered_message_starts_within_the_same_turn():
    run = replay("frames-steer", raced=("cli-3",))
    turn_end = run.first(fx.TurnEnded)
    assert run.first(fx.Delivery, message_id="cli-2", delivery="queued") \
        < run.first(fx.Delivery, message_id="cli-2", delivery="started") < turn_end
    started = run.effects(fx.TurnStarted)
    assert len(started) == 2 and len({s.cli_turn for s in started}) == 2  # two turns for five messages


def test_a_steer_refused_because_the_turn_just_ended_starts_exactly_one_new_turn():
    run = replay("frames-steer", raced=("cli-3",))
    assert [f["method"] for f in run.written if f.get("params", {}).get("clientUserMessageId") == "cli-3"] \
        == ["turn/steer", "turn/start"]  # never a second steer, never a second start
    refusal = next(s for s in run.steps if s.frame.get("error", {}).get("message") == "no active turn to steer")
    (restart,) = run.requests("turn/start", "cli-3")
    assert refusal.effects == [fx.Write((restart,)), fx.Deadline(restart["id"], codex.REPLY_DEADLINE)]
    assert restart["params"] == {"threadId": STEER_THREAD, "clientUserMessageId": "cli-3",
                                 "input": [{"type": "text", "text": "too late", "text_elements": []}]}
    assert not [e for e in run.effects(fx.Delivery) if e.message_id == "cli-3"]  # not failed
    # Never lost: still counted on through the end of the turn that follows (the recorder never
    # sent it again, so Codex never picked it up).
    assert all("cli-3" in s.waiting for s in run.steps[run.steps.index(refusal):])


def test_a_steer_that_raced_the_turn_end_stays_waiting_across_that_turn_completed():
    run = replay("frames-steer", raced=("cli-3",))
    first_end = run.steps_of("turn/completed")[0]
    assert first_end.waiting == {"cli-3"}  # its steer is still unanswered: the next turn is coming
    assert first_end.effects == [fx.TurnEnded()]


def test_a_steer_refused_for_an_expected_turn_mismatch_starts_one_new_turn():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "more", [])
    mismatch = recorded_reply("frames-steer", "turn/steer", expectedTurnId="not-the-turn")
    assert "expected active turn id" in mismatch["error"]["message"]
    write, deadline = answer(driver, steer, mismatch)
    (restart,) = write.frames
    assert restart["method"] == "turn/start" and restart["params"]["clientUserMessageId"] == "m2"
    assert "expectedTurnId" not in restart["params"]
    assert deadline == fx.Deadline(restart["id"], codex.REPLY_DEADLINE)
    assert driver.waiting == {"first", "m2"}
    # The turn it named is stale: the next message joins whatever runs rather than steer it again.
    frame, _ = driver.message_frames("m3", "and more", [])
    assert frame["method"] == "turn/start"


def test_a_refused_restart_after_a_refused_steer_is_an_error_and_is_not_sent_a_third_time():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "more", [])
    driver.decode(notification("frames-steer", "turn/completed"))
    write, _ = answer(driver, steer, recorded_reply("frames-steer", "turn/steer", clientUserMessageId="cli-3"))
    (restart,) = write.frames
    refusal = recorded_reply("frames-resume-3", "turn/start")
    found = answer(driver, restart, refusal)
    reason = f"Codex refused the message: {refusal['error']['message']}"
    assert found == [fx.Delivery("m2", "error", reason), fx.TurnEnded(error=reason)]
    assert "m2" not in driver.waiting


def test_other_steer_errors_are_a_failed_delivery():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "more", [])
    refusal = recorded_reply("frames-steer", "turn/steer", threadId="00000000-0000-0000-0000-000000000000")
    found = answer(driver, steer, refusal)
    assert found == [fx.Delivery("m2", "error", f"Codex refused the message: {refusal['error']['message']}")]
    assert driver.waiting == {"first"}


def test_a_message_sent_while_a_later_turn_runs_steers_that_turn():
    # The recorder sent cli-5 as a second turn/start (which joined the running turn); devhost steers.
    run = replay("frames-steer", raced=("cli-3",))
    assert run.requests("turn/start", "cli-5") == []
    (steer,) = run.requests("turn/steer", "cli-5")
    assert steer["params"]["expectedTurnId"] == STEER_TURN_2
    assert run.first(fx.TurnStarted) < run.first(fx.Delivery, message_id="cli-5", delivery="started") \
        < run.last(fx.TurnEnded)


# ---- the end of a turn -----------------------------------------------------------------------

def test_failed_turns_end_with_codexs_error_text_and_the_thread_stays_usable():
    run = replay("frames-errors")
    failed = [f["params"]["turn"]["error"]["message"] for f in server_frames("frames-errors")
              if f.get("method") == "turn/completed" and f["params"]["turn"]["status"] == "failed"]
    assert len(failed) == 4 and failed[0].startswith("unexpected status 401 Unauthorized")
    # The 429 whose retries ran out is a rate limit (see the limit tests below).
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded(error=message, limit={"kind": "rate", "message": message}
                                                      if "429" in message else None)
                                         for message in failed] + [fx.TurnEnded()]


@pytest.mark.parametrize("error", [None, {}, {"message": "  "}, {"message": None}, "a string"])
def test_a_failed_turn_without_an_error_message_still_ends_with_an_error(error):
    frame = notification("frames-errors", "turn/completed")
    frame = {**frame, "params": {**frame["params"], "turn": {**frame["params"]["turn"], "error": error}}}
    assert CodexDriver().decode(frame) == (True, [fx.TurnEnded(error=codex.FAILED_TURN)])


def test_an_interrupted_turn_ends_as_interrupted_and_the_next_one_completes():
    run = replay("frames-interrupt")
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded(interrupted=True), fx.TurnEnded(),
                                         fx.TurnEnded(interrupted=True)]


def test_the_end_of_a_turn_this_driver_does_not_run_is_ignored():
    driver = ready_driver()
    running_turn(driver)
    other = notification("frames-errors", "turn/completed")  # another thread's turn
    assert driver.decode(other) == (True, [])
    assert driver.interrupt_frames()[0]["params"]["turnId"] == STEER_TURN_1  # still running


def test_a_steered_message_codex_had_not_picked_up_when_the_turn_ended_is_no_longer_waiting():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "more", [])
    assert answer(driver, steer, recorded_reply("frames-steer", "turn/steer", clientUserMessageId="cli-2")) \
        == [fx.Delivery("m2", "queued")]
    driver.decode(notification("frames-steer", "turn/completed"))
    assert driver.waiting == set()  # Codex discards input it never took up


def test_a_message_whose_request_is_unanswered_stays_waiting_across_the_end_of_a_turn():
    driver = ready_driver()
    running_turn(driver)
    driver.message_frames("m2", "more", [])  # steer out, no reply yet
    _, found = driver.decode(notification("frames-steer", "turn/completed"))
    assert found == [fx.TurnEnded()]
    assert driver.waiting == {"m2"}


def test_token_usage_reports_the_last_turns_counts_and_the_contexts_use_and_window():
    _, found = CodexDriver().decode(notification("frames-basic", "thread/tokenUsage/updated"))
    assert found == [fx.Usage((("totalTokens", 120), ("inputTokens", 100), ("cachedInputTokens", 0),
                               ("cacheWriteInputTokens", 0), ("outputTokens", 20), ("reasoningOutputTokens", 0))),
                     fx.Facts((("contextTokens", 120), ("contextWindow", 258400)))]


# ---- requests from the server ----------------------------------------------------------------

def test_an_approval_opens_a_request_under_the_servers_integer_id_and_resolved_closes_it():
    run = replay("frames-cmd-approval-untrusted")
    assert run.effects(fx.RequestOpened) == [fx.RequestOpened(0, APPROVAL), fx.RequestOpened(1, APPROVAL),
                                             fx.RequestOpened(2, APPROVAL)]
    assert run.effects(fx.RequestClosed) == [fx.RequestClosed(0), fx.RequestClosed(1), fx.RequestClosed(2)]
    opened = [s for s in run.steps if s.frame.get("method") == APPROVAL]
    assert all(s.keep for s in opened)  # the page renders the prompt from history
    for request_id in (0, 1, 2):
        assert run.first(fx.RequestOpened, request_id=request_id) < run.first(fx.RequestClosed, request_id=request_id)


def test_a_file_change_approval_opens_a_request_of_its_own_kind():
    run = replay("frames-file-approval")
    assert {e.kind for e in run.effects(fx.RequestOpened)} == {"item/fileChange/requestApproval"}
    opened = [e.request_id for e in run.effects(fx.RequestOpened)]
    assert [e.request_id for e in run.effects(fx.RequestClosed)] == opened == [0, 1, 2]


@pytest.mark.parametrize("name", ["frames-cmd-approval-untrusted", "frames-file-approval"])
def test_answers_are_written_in_the_servers_own_format(name):
    run = replay(name)
    recorded_answers = [r["msg"] for r in recorded(name) if r["dir"] == ">" and "method" not in r["msg"]]
    assert [r["result"]["decision"] for r in recorded_answers] == ["accept", "acceptForSession", "decline"]
    assert [f for f in run.written if "method" not in f] == recorded_answers


@pytest.mark.parametrize("decision", ["accept", "acceptForSession", "decline", "cancel"])
def test_respond_passes_a_plain_decision(decision):
    for kind in (APPROVAL, "item/fileChange/requestApproval"):
        assert CodexDriver().respond_frames(7, {"decision": decision}, kind) == [{"id": 7,
                                                                                 "result": {"decision": decision}}]


def test_respond_refuses_object_decisions_which_would_outlive_the_chat():
    request = next(f for f in server_frames("frames-interrupt") if f.get("method") == APPROVAL)
    (amendment,) = [d for d in request["params"]["availableDecisions"] if isinstance(d, dict)]
    for result in [{"decision": amendment}, {"decision": {"applyNetworkPolicyAmendment": {}}},
                   {"decision": "allow"}, {"decision": None}, {}]:
        with pytest.raises(ValueError, match="accept, acceptForSession, decline, cancel"):
            CodexDriver().respond_frames(request["id"], result, APPROVAL)


def test_a_pending_approval_is_closed_after_the_interrupt_ends_the_turn():
    run = replay("frames-interrupt")
    (opened,) = run.effects(fx.RequestOpened)
    assert opened == fx.RequestOpened(0, APPROVAL)
    # The server resolves it after turn/completed; devhost's late answer then changes nothing.
    assert run.first(fx.RequestClosed, request_id=0) > run.last(fx.TurnEnded, interrupted=True)
    assert run.steps[-1].effects == [fx.RequestClosed(0)]


# ---- interrupts and deadlines ----------------------------------------------------------------

def test_interrupt_names_the_running_turn_and_is_nothing_when_no_turn_runs():
    assert CodexDriver().interrupt_frames() == []
    run = replay("frames-interrupt")
    interrupts = run.requests("turn/interrupt")
    recorded_ones = [r["msg"] for r in recorded("frames-interrupt") if r["msg"].get("method") == "turn/interrupt"]
    # Four in the recording: a made-up turn (a probe, left out), two real ones, one after the turn ended.
    assert len(recorded_ones) == 4
    assert [f["params"] for f in interrupts] == [recorded_ones[1]["params"], recorded_ones[3]["params"]]
    assert recorded_ones[2]["params"] == recorded_ones[1]["params"]  # the driver wrote nothing for this one
    for frame in interrupts:
        assert fx.Deadline(frame["id"], codex.REPLY_DEADLINE) in run.deadlines
    assert run.driver.interrupt_frames() == []  # the last turn was interrupted: nothing runs


def test_an_interrupt_codex_refuses_is_a_control_failure_unless_the_turn_had_ended():
    refused = recorded_reply("frames-interrupt", "turn/interrupt", turnId="bogus-turn")
    too_late = [f for f in server_frames("frames-interrupt") if f.get("error", {}).get("message")
                == "no active turn to interrupt"][0]
    driver = ready_driver()
    running_turn(driver)
    frame, _ = driver.interrupt_frames()
    assert answer(driver, frame, refused) == [fx.ControlFailed(f"Codex refused the interrupt: "
                                                               f"{refused['error']['message']}")]
    frame, _ = driver.interrupt_frames()
    assert answer(driver, frame, too_late) == []


@pytest.mark.parametrize("steered", [False, True])
def test_a_send_codex_never_answered_is_unconfirmed_and_never_resent(steered):
    driver = ready_driver()
    if steered:
        running_turn(driver)
    frame, deadline = driver.message_frames("m2", "hello", [])
    assert frame["method"] == ("turn/steer" if steered else "turn/start")
    assert deadline == fx.Deadline(frame["id"], codex.REPLY_DEADLINE)
    assert driver.expire(frame["id"]) == [fx.ControlFailed(f"Codex did not answer {frame['method']} in time"),
                                          fx.Delivery("m2", "unconfirmed")]
    reply = recorded_reply("frames-steer", frame["method"], clientUserMessageId="cli-2" if steered else "cli-1")
    assert answer(driver, frame, reply) == []  # a late answer means nothing any more
    assert driver.expire(frame["id"]) == []


def test_the_deadline_of_an_answered_request_is_nothing():
    run = replay("frames-basic")
    assert run.deadlines
    assert all(run.driver.expire(d.request_id) == [] for d in run.deadlines)
    assert run.driver.expire(12345) == [] and run.driver.expire("recorder-2") == []


# ---- replies and history ---------------------------------------------------------------------

def test_replies_to_requests_devhost_did_not_make_mean_nothing():
    run = replay("frames-basic")  # model/list twice, thread/read, thread/list, thread/loaded/list
    foreign = [s for s in run.steps if str(s.frame.get("id", "")).startswith("recorder-")]
    assert len(foreign) == 5
    assert all(s.effects == [] and not s.keep for s in foreign)
    # Ids are not confused: the recorder's model/list (id 2) arrived while the driver's own
    # request 2 (thread/start) was out, and the driver still got its thread from the right reply.
    assert run.effects(fx.Ready) == [fx.Ready()]


@pytest.mark.parametrize("name", ["frames-basic", "frames-steer", "frames-interrupt", "frames-cmd-approval-untrusted"])
def test_notifications_and_server_requests_are_kept_in_history_and_replies_are_not(name):
    run = replay(name, raced=("cli-3",) if name == "frames-steer" else ())
    assert all(s.keep == ("method" in s.frame) for s in run.steps)
    assert any(not s.keep for s in run.steps) and any(s.keep for s in run.steps)


def test_unknown_notifications_are_kept_without_effects():
    for method in ("configWarning", "remoteControl/status/changed", "thread/status/changed", "item/agentMessage/delta"):
        assert CodexDriver().decode(notification("frames-basic", method)) == (True, [])


# ---- command lines and the model list --------------------------------------------------------

def test_the_command_line_is_app_server_and_model_and_thread_never_travel_as_flags():
    assert codex.command_line(("codex",), model="--dangerously-bypass", resume_id="x") == ["codex", "app-server"]
    assert codex.command_line(("node", "/opt/codex.js")) == ["node", "/opt/codex.js", "app-server"]
    assert codex.listing_command_line(("codex",)) == ["codex", "app-server"]


def test_the_listing_requests_are_a_handshake_and_model_list_each_with_params():
    first, initialized, models = codex.listing_requests()
    assert first == {"id": "devhost-init", "method": "initialize", "params": {"clientInfo": codex.CLIENT_INFO}}
    assert initialized == {"method": "initialized"}
    assert models == {"id": "devhost-models", "method": "model/list", "params": {}}


def test_the_listing_reply_is_the_model_list_answer_and_nothing_else():
    reply = recorded_reply("frames-basic", "model/list")
    # The recording cut the list after four entries (its "...[5 more]" marker is not a model).
    assert codex.listing_reply({**reply, "id": "devhost-models"}) == [
        {"id": "gpt-6.1-sol", "label": "GPT-6.1-Sol",
         "description": "Latest workhorse model for coding and everyday work."},
        {"id": "gpt-6-astra", "label": "GPT-6-Astra", "description": reply["result"]["data"][1]["description"]},
        {"id": "gpt-6-sol", "label": "GPT-6-Sol", "description": "Previous generation workhorse model."},
        {"id": "gpt-6-luna", "label": "GPT-6-Luna", "description": reply["result"]["data"][3]["description"]},
    ]
    assert codex.listing_reply({**recorded_reply("frames-basic", "initialize"), "id": "devhost-init"}) is None
    assert codex.listing_reply(notification("frames-basic", "configWarning")) is None
    assert codex.listing_reply({"id": "devhost-models", "method": "model/list", "params": {}}) is None


def test_a_refused_model_list_raises_with_codexs_reason():
    refusal = recorded_reply("frames-lifecycle-1", "thread/start", approvalPolicy="sometimes")
    with pytest.raises(ValueError, match="unknown variant `sometimes`"):
        codex.listing_reply({**refusal, "id": "devhost-models"})
    with pytest.raises(ValueError, match="no reason given"):
        codex.listing_reply({"id": "devhost-models", "error": "nope"})


def test_hidden_models_are_left_out_and_names_fall_back_to_the_id():
    shown = recorded_reply("frames-basic", "model/list")["result"]["data"][0]
    result = {"data": [shown, {**shown, "id": "secret", "model": "secret", "hidden": True},
                       {"id": "bare"}, {"model": "no-id"}, "...[5 more]"]}
    assert [m["id"] for m in codex.models_from_list(result)] == ["gpt-6.1-sol", "bare"]
    assert codex.models_from_list(result)[1] == {"id": "bare", "label": "bare", "description": ""}
    assert codex.models_from_list({"data": None}) == [] and codex.models_from_list({}) == []


# ---- finding a saved conversation ------------------------------------------------------------

SAVED = "01a22cb1-2be9-7bd1-a6e0-ec2bee23f6fa"  # the thread of frames-basic, whose rollout the samples come from


def save_rollout(codex_home: Path, thread_id: str, lines: list | None = None) -> Path:
    """A rollout where Codex keeps one: sessions/YYYY/MM/DD/rollout-<UTC time>-<thread id>.jsonl."""
    folder = codex_home / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True, exist_ok=True)
    if lines is None:
        lines = (FRAMES / "rollout-line-samples.jsonl").read_text().splitlines()
    path = folder / f"rollout-2026-11-30T13-42-18-{thread_id}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_saved_thread_gives_the_folder_of_its_session_meta(tmp_path):
    save_rollout(tmp_path / "codex", SAVED)
    assert codex.find_conversation_cwd(SAVED, {"CODEX_HOME": str(tmp_path / "codex")}) == "/home/dev/cx/basic/work"


def test_without_codex_home_the_rollouts_are_under_home_dot_codex(tmp_path):
    save_rollout(tmp_path / "home" / ".codex", SAVED)
    assert codex.find_conversation_cwd(SAVED, {"HOME": str(tmp_path / "home")}) == "/home/dev/cx/basic/work"
    assert codex.find_conversation_cwd(SAVED, {"HOME": str(tmp_path / "home"),
                                               "CODEX_HOME": str(tmp_path / "elsewhere")}) is None


def test_a_codex_home_with_pattern_characters_is_read_literally(tmp_path):
    home = tmp_path / "odd [dir] *?"
    save_rollout(home, SAVED)
    assert codex.find_conversation_cwd(SAVED, {"CODEX_HOME": str(home)}) == "/home/dev/cx/basic/work"


def test_a_rollout_without_a_session_meta_folder_gives_an_empty_string(tmp_path):
    samples = (FRAMES / "rollout-line-samples.jsonl").read_text().splitlines()
    save_rollout(tmp_path / "codex", SAVED, ["not json {"] + samples[1:])
    assert codex.find_conversation_cwd(SAVED, {"CODEX_HOME": str(tmp_path / "codex")}) == ""


def test_an_unknown_thread_gives_none(tmp_path):
    save_rollout(tmp_path / "codex", SAVED)
    assert codex.find_conversation_cwd("01a22cb1-0000-7000-8000-000000000000",
                                       {"CODEX_HOME": str(tmp_path / "codex")}) is None
    assert codex.find_conversation_cwd("", {"CODEX_HOME": str(tmp_path / "codex")}) is None


@pytest.mark.parametrize("thread_id", ["a6e0-ec2bee23f6fa", "ec2bee23f6fa", "18-" + SAVED, "30T13-42-18-" + SAVED])
def test_part_of_a_saved_threads_file_name_is_not_a_thread_id(tmp_path, thread_id):
    save_rollout(tmp_path / "codex", SAVED)
    assert codex.find_conversation_cwd(thread_id, {"CODEX_HOME": str(tmp_path / "codex")}) is None


@pytest.mark.parametrize("thread_id", ["*", "01a22cb1-*", "[0-9]*", "?" * len(SAVED), "../30/" + SAVED,
                                       "2026/11/30/rollout-2026-11-30T13-42-18-" + SAVED])
def test_a_thread_id_is_a_name_never_a_pattern_or_a_path(tmp_path, thread_id):
    save_rollout(tmp_path / "codex", SAVED)
    assert codex.find_conversation_cwd(thread_id, {"CODEX_HOME": str(tmp_path / "codex")}) is None


def test_the_fixtures_are_the_recorded_sessions_these_tests_rely_on():
    # Guards against a fixture being trimmed to the point where a replay proves nothing.
    names = sorted(p.stem for p in FRAMES.glob("frames-*.jsonl"))
    assert names == sorted(["frames-basic", "frames-cmd-approval-untrusted", "frames-errors", "frames-file-approval",
                            "frames-interrupt", "frames-lifecycle-1", "frames-resume-1", "frames-resume-2",
                            "frames-resume-3", "frames-steer"])
    for name in names:
        assert any(r["dir"] == "<" for r in recorded(name)), name
    assert json.loads((FRAMES / "rollout-line-samples.jsonl").read_text().splitlines()[0])["type"] == "session_meta"


def _waiting_for_network():
    return {"method": "error", "params": {"error": {"message": "Reconnecting... waiting for network"},
                                          "willRetry": True, "threadId": "t", "turnId": "u"}}


def _running_turn_driver():
    driver = CodexDriver(cwd="/w")
    driver.thread_id = "t"
    driver.decode({"method": "turn/started", "params": {"threadId": "t", "turn": {"id": "u"}}})
    return driver


def test_an_unreachable_provider_gets_a_deadline_then_the_turn_is_stopped_with_a_reason():
    driver = _running_turn_driver()
    _, found = driver.decode(_waiting_for_network())
    assert found == [fx.Deadline(codex.NETWORK_WAIT_KEY, codex.NETWORK_WAIT_LIMIT)]
    assert driver.decode(_waiting_for_network())[1] == []  # one deadline per turn
    expired = driver.expire(codex.NETWORK_WAIT_KEY)
    assert isinstance(expired[0], fx.ControlFailed) and "could not reach" in expired[0].message
    assert expired[1]["method"] == "turn/interrupt"
    _, ended = driver.decode({"method": "turn/completed", "params": {"threadId": "t",
                                                                      "turn": {"id": "u", "status": "interrupted"}}})
    assert ended[0].error and "could not reach" in ended[0].error


def test_progress_after_waiting_for_the_network_cancels_the_stop():
    driver = _running_turn_driver()
    driver.decode(_waiting_for_network())
    driver.decode({"method": "item/agentMessage/delta", "params": {"itemId": "m", "delta": "hi"}})
    assert driver.expire(codex.NETWORK_WAIT_KEY) == []


# ---- child agents and background terminals ---------------------------------------------------

def _child_thread(name: str) -> str:
    return next(f["params"]["item"]["agentThreadId"] for f in server_frames(name)
                if f.get("method") == "item/started" and f["params"]["item"]["type"] == "subAgentActivity")


def test_a_child_agents_turns_are_not_the_chats_turns():
    run = replay("subagent")
    assert len(run.effects(fx.TurnStarted)) == 1 and len(run.effects(fx.TurnEnded)) == 1
    assert isinstance(run.effects()[-1], fx.TurnEnded)  # the chat's turn ends with the parent's, last
    main = recorded_reply("subagent", "thread/start")["result"]["thread"]["id"]
    assert run.driver.thread_id == main


def test_stopping_a_child_agent_interrupts_its_running_turn_on_its_own_thread():
    child, frames = _child_thread("subagent"), server_frames("subagent")
    started = next(n for n, f in enumerate(frames) if f.get("method") == "turn/started"
                   and f["params"]["threadId"] == child)
    driver = ready_driver("subagent")
    for frame in frames[:started + 1]:
        if "method" in frame:
            driver.decode(frame)
    interrupt, deadline = driver.stop_task_frames(child, "subagent")
    assert interrupt["method"] == "turn/interrupt"
    assert interrupt["params"] == {"threadId": child, "turnId": frames[started]["params"]["turn"]["id"]}
    assert deadline == fx.Deadline(interrupt["id"], codex.REPLY_DEADLINE)


def test_a_child_agent_whose_turn_ended_has_nothing_to_interrupt():
    run = replay("subagent")
    assert run.driver.stop_task_frames(_child_thread("subagent"), "subagent") == []


def test_stopping_a_background_command_terminates_its_process_on_the_chats_thread():
    driver = ready_driver("background_terminal")
    sent = recorded_request("background_terminal", "thread/backgroundTerminals/terminate")
    terminate, _ = driver.stop_task_frames(sent["params"]["processId"], "task")
    assert terminate == {**sent, "id": terminate["id"]}  # what Codex was recorded accepting
    reply = recorded_reply("background_terminal", "thread/backgroundTerminals/terminate")
    assert reply["result"] == {"terminated": True} and answer(driver, terminate, reply) == []


@pytest.mark.parametrize("reply, said", [
    ({"result": {"terminated": False}}, "it had ended"),
    ({"error": {"code": -32600, "message": "unknown process"}}, "unknown process")])
def test_a_background_command_codex_could_not_stop_is_a_control_failure(reply, said):
    driver = ready_driver("background_terminal")
    terminate, _ = driver.stop_task_frames("4242", "task")
    [failed] = answer(driver, terminate, reply)
    assert isinstance(failed, fx.ControlFailed) and said in failed.message


# ---- usage limits and overloaded models ------------------------------------------------------

RESETS_AT_MS = 1796160000 * 1000  # the reset time the recordings' mock named


def test_a_used_up_usage_window_ends_the_turn_with_a_usage_limit_and_the_windows_reset():
    run = replay("usage_limit")
    [ended] = run.effects(fx.TurnEnded)
    assert ended.error.startswith("You’ve hit your usage limit")
    assert ended.limit == {"kind": "usage", "resetsAt": RESETS_AT_MS, "window": "five_hour", "message": ended.error}
    assert dict(run.effects(fx.PlanUsage)[0].usage)["status"] == "rejected"


def test_rate_limit_updates_report_the_primary_windows_use_and_warn_past_eighty_percent():
    run = replay("usage_warning")
    [usage] = [dict(u.usage) for u in run.effects(fx.PlanUsage)]
    assert usage == {"window": "five_hour", "utilization": 0.93, "status": "allowed_warning", "resetsAt": RESETS_AT_MS}
    assert run.effects(fx.TurnEnded) == [fx.TurnEnded()]


def test_rate_limit_updates_with_no_window_report_nothing():
    # What Codex sends after every answer of a provider without usage headers (all null).
    assert [e for e in replay("frames-basic").effects() if isinstance(e, fx.PlanUsage)] == []


def test_a_model_that_kept_refusing_with_429_ends_the_turn_with_a_rate_limit_not_an_overload():
    [ended] = replay("rate_limited").effects(fx.TurnEnded)
    # Codex's text names no wait and no window is used up: no reset time is made up.
    assert ended.limit == {"kind": "rate", "message": ended.error} and "429" in ended.error


def test_a_failure_that_is_no_limit_has_none():
    ended = [e for e in replay("frames-errors").effects(fx.TurnEnded) if e.error]
    assert ended and all(e.limit is None or "429" in e.error for e in ended)


def interrupted_turn() -> dict:
    """frames-steer's turn/completed, as an interrupt ends the turn."""
    completed = notification("frames-steer", "turn/completed")
    turn = {**completed["params"]["turn"], "status": "interrupted"}
    return {**completed, "params": {**completed["params"], "turn": turn}}


def test_a_steer_an_interrupt_stopped_before_codex_took_it_up_is_told_as_not_sent():
    """Codex discards input steered into a turn it did not pick up before the turn ended: after
    an interrupt such a message never reached the model, and the driver says so."""
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "and another thing", [])
    assert answer(driver, steer, {"result": {"turnId": STEER_TURN_1}}) == [fx.Delivery("m2", "queued")]
    _, found = driver.decode(interrupted_turn())
    assert found == [fx.Delivery("m2", "cancelled", NOT_SENT_INTERRUPT), fx.TurnEnded(interrupted=True)]


def test_a_steer_taken_up_is_no_unsent_message():
    driver = ready_driver()
    running_turn(driver)
    steer, _ = driver.message_frames("m2", "and another thing", [])
    answer(driver, steer, {"result": {"turnId": STEER_TURN_1}})
    driver.decode({"method": "item/started", "params": {"item": {"type": "userMessage", "clientId": "m2"}}})
    _, found = driver.decode(interrupted_turn())
    assert found == [fx.TurnEnded(interrupted=True)]

"""actors.cli_link ``rewind``: the conversation taken back to before a turn, on Claude Code's driver.

As in test_cli_link.py the CLI is a shell (it notes its arguments, then copies its stdin to a
file) fed frames Claude Code wrote; the conversation to resume is a transcript file in the
account's config home, which is where the link looks for it.
"""
from __future__ import annotations

import json

import gevent
import pytest

from actors.cli_link import CliLink
from actors.harness import claude
from actors.harness import effects as fx
from actors.harness.rewind import Anchor
from actors.messages import Send
from tests.unit.test_cli_link import Mailbox, Owner, feed, ready_frame

SESSION = "9fb7d689-33bd-4c46-95f1-53df28a0dc68"
ANCHOR = "f3870c49-ab39-4f06-b309-53712d945af8"
MESSAGES = [f"66660000-0000-4000-8000-00000000000{n}" for n in range(1, 5)]


@pytest.fixture
def link(tmp_path):
    config = tmp_path / "config"
    (config / "projects" / "p").mkdir(parents=True)
    transcript = config / "projects" / "p" / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(tmp_path)}) + "\n")
    argv_file = tmp_path / "argv.txt"
    command = ("/bin/sh", "-c", 'echo "$*" >> "$0"; exec cat > /dev/null', str(argv_file))
    made = CliLink(chat_id="rewind-test", harness=claude, root=str(tmp_path), command=command, model=None,
                   native_id=SESSION, actor_ref=Mailbox(), owner=Owner(), account="a",
                   account_env=lambda name: {"CLAUDE_CONFIG_DIR": str(config)})
    made.argv_file = argv_file
    yield made
    made.terminate()
    made.shut()
    assert made.gone.wait(timeout=15), "a CLI of the test outlived it"


def launches(link) -> list[str]:
    """The arguments of every process the link started, in order."""
    with gevent.Timeout(15, AssertionError("no CLI started")):
        while not link.argv_file.exists() or \
                len(link.argv_file.read_text().splitlines()) < link.process_serial // 2 + 1:
            gevent.sleep(0.01)
    return link.argv_file.read_text().splitlines()


def send(link, n: int) -> None:
    link.send("page", Send(MESSAGES[n], f"message {n}", None), "")


def taken(link, n: int) -> None:
    """Claude Code took message n (its queued lifecycle), as it does on the rewound branch."""
    link.apply(fx.Delivery(MESSAGES[n], "queued"))


def first_turn(link) -> None:
    """Turn 1 of the recording (its message, then what Claude Code wrote up to its result)."""
    link.send("page", Send("55550000-0000-4000-8000-000000000001", "remember the word alpha", None), "")
    frames = [line["frame"] for line in map(json.loads, claude_fixture("rewind.jsonl").read_text().splitlines())
              if line["dir"] == "cli->host"]
    feed(link, frames[:next(i for i, f in enumerate(frames) if f.get("type") == "result") + 1])


def test_a_rewind_is_refused_while_a_turn_runs(link):
    send(link, 0)
    feed(link, [ready_frame()])
    assert link.turn_active
    link.rewind(Anchor(resume_at=ANCHOR))
    assert link._owner.named("link_rewound") == [
        (False, "a turn is running: stop it before rewinding the conversation")]
    assert link.resume_at is None and link.running


def test_claude_retires_its_process_and_the_next_start_resumes_at_the_anchor_once(link):
    first_turn(link)
    assert not link.turn_active and link.native_id == SESSION
    serial = link.process_serial
    link.rewind(Anchor(resume_at=ANCHOR))
    assert not link.running and link.process_serial > serial  # retired: what it still says counts no more
    assert link._owner.named("link_rewound") == [
        (True, "the next message continues the conversation from before that turn")]
    send(link, 1)
    assert launches(link)[-1].endswith(f"--resume={SESSION} --resume-session-at={ANCHOR}")
    taken(link, 1)  # the rewound branch holds a message now: the transcript's latest
    link.retire("restart")
    send(link, 2)
    # Each process writes its own line as it starts: under load the first may write last.
    lines = launches(link)
    assert sum("--resume-session-at" in line for line in lines) == 1  # the anchor was tried once
    assert any(line.endswith(f"--resume={SESSION}") for line in lines)


def test_an_anchored_start_retired_before_it_took_a_message_resumes_at_the_anchor_again(link):
    link.rewind(Anchor(resume_at=ANCHOR))
    send(link, 0)
    assert launches(link)[-1].endswith(f"--resume-session-at={ANCHOR}")
    link.retire("restart")  # nothing reached the branch: a plain resume would bring the turn back
    send(link, 1)
    assert launches(link)[-1].endswith(f"--resume-session-at={ANCHOR}")


def test_a_stale_anchor_is_dropped_with_claude_codes_reason_and_the_next_start_resumes_plainly(link):
    link.rewind(Anchor(resume_at="00000000-0000-4000-8000-00000000dead"))
    send(link, 0)
    refused = [line["frame"] for line in map(json.loads, (claude_fixture("rewind.jsonl")).read_text().splitlines())
               if line["dir"] == "cli->host" and line["frame"].get("subtype") == "error_during_execution"]
    feed(link, refused)  # what Claude Code wrote before it exited 1
    [(ok, message)] = link._owner.named("link_rewound")[1:]
    assert not ok and "No message found with message.uuid of: 00000000-0000-4000-8000-00000000dead" in message
    assert link.resume_at is None
    link.retire("exited")
    send(link, 1)
    # Each process writes its own line as it starts: under load the first may write last.
    lines = launches(link)
    assert sum("--resume-session-at" in line for line in lines) == 1  # the anchor was tried once
    assert any(line.endswith(f"--resume={SESSION}") for line in lines)


def test_rewinding_the_first_turn_starts_a_new_conversation(link):
    link.rewind(Anchor(fresh=True))
    assert link.native_id is None and link._owner.named("link_rewound") == [
        (True, "the next message starts a new conversation")]
    send(link, 0)
    assert "--resume" not in launches(link)[-1]


def claude_fixture(name: str):
    from tests.unit.test_cli_link import FRAMES
    return FRAMES / name

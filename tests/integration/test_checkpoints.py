"""Every turn a checkpoint, end to end: a real devhostd, the real CLIs behind it, the chat core's
requests (chat.changes, chat.revert) and the Chat API's routes for the panel.

The turns change files three ways — the CLI's own edit tool, ``sed`` in a shell, a new file —
and every one of them is in the turn's changes, and comes back byte for byte. The person's own
repository (its status, refs, stash, index) is never touched.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from devhostd.core_client import CoreRequestError
from tests.integration.chats import items
from tests.integration.daemon import wait_until
from tests.mock_anthropic import message_text, text_reply, tool_use_reply
from tests.mock_openai import message_text as codex_message_text, patch_reply, shell_reply, text_reply as codex_text

# Two lines far apart change: two hunks in one file.
ORIGINAL_A = "".join(f"line {n}\n" for n in range(1, 41))
CHANGED_A = ORIGINAL_A.replace("line 2\n", "line two\n").replace("line 39\n", "line thirty-nine\n")
ORIGINAL_B = "alpha\r\nbeta\r\ngamma"  # CRLF and no newline at the end: bytes, not lines, come back


def _git(project, *args) -> str:
    # No optional locks: this test's own `git status` must not refresh the index it checks.
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout


def _person_repository(project) -> dict:
    """What of the person's repository devhostd must never change: its status, refs, stash and
    what is staged (the index's entries: a CLI's own `git status` may refresh its stat data)."""
    return {"status": _git(project, "status", "--porcelain", "--untracked-files=all"),
            "refs": _git(project, "for-each-ref"), "stash": _git(project, "stash", "list"),
            "staged": _git(project, "ls-files", "--stage"), "head": _git(project, "rev-parse", "HEAD")}


def _checkout(project, git: bool) -> None:
    (project / "a.txt").write_text(ORIGINAL_A)
    (project / "b.txt").write_bytes(ORIGINAL_B.encode())
    (project / ".gitignore").write_text("ignored.log\n")
    (project / "ignored.log").write_text("never in a checkpoint\n")
    if git:
        _git(project, "init", "-q")
        _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
        _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
        (project / "b.txt").write_bytes(ORIGINAL_B.encode() + b"\r\nstaged")
        _git(project, "add", "b.txt")  # a staged change of the person's: the index must stay as it is
        (project / "b.txt").write_bytes(ORIGINAL_B.encode())
        (project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\ntouch \"$GIT_DIR/../HOOK_RAN\"\n")
        (project / ".git" / "hooks" / "pre-commit").chmod(0o755)


def _turn_with_changes(core, chat_id: str, text: str) -> tuple[str, dict]:
    turn = core.chats.send(chat_id, text)["turnId"]
    wait_until(lambda: any(i["id"] == f"changes-{turn}" for i in items(core, chat_id, "changes")), timeout=90,
               what="the turn's changes item")
    item = next(i for i in items(core, chat_id, "changes") if i["id"] == f"changes-{turn}")
    return turn, item


def _changes(core, chat_id, turn):
    return core.request("chat.changes", {"chatId": chat_id, "turnId": turn})


def _by_path(listed):
    return {f["path"]: f for f in listed["files"]}


def _claude_script(mock, project):
    a, b, c = (str(project / name) for name in ("a.txt", "b.txt", "c.txt"))
    mock.add(tool_use_reply("Read", {"file_path": a}),
             tool_use_reply("Write", {"file_path": a, "content": CHANGED_A}),
             tool_use_reply("Bash", {"command": f"sed -i 's/beta/BETA/' {b}", "description": "edit b"}),
             tool_use_reply("Write", {"file_path": c, "content": "a new file\n"}),
             text_reply("Changed three files."))


def _codex_script(openai):
    update = ("*** Begin Patch\n*** Update File: a.txt\n@@\n line 1\n-line 2\n+line two\n line 3\n@@\n line 38\n"
              "-line 39\n+line thirty-nine\n line 40\n*** End Patch\n")
    openai.add(patch_reply(update), shell_reply("sed -i 's/beta/BETA/' b.txt"),
               patch_reply("*** Begin Patch\n*** Add File: c.txt\n+a new file\n*** End Patch\n"),
               codex_text("Changed three files."))


def _three_files_then_back(core, chat_id, project, turn, item):
    """What both CLIs' turns must give: three files listed with hunks; a hunk, a file and the
    rest of the turn reverted to exact bytes; a file changed since the turn refused until forced."""
    assert sorted((f["path"], f["status"]) for f in item["files"]) == \
        [("a.txt", "modified"), ("b.txt", "modified"), ("c.txt", "added")]
    assert item["added"] == 4 and item["removed"] == 3, item
    listed = _by_path(_changes(core, chat_id, turn))
    assert "ignored.log" not in listed
    assert len(listed["a.txt"]["hunks"]) == 2 and listed["a.txt"]["added"] == 2
    assert "-beta\r" in listed["b.txt"]["hunks"][0]["lines"] and listed["c.txt"]["hunks"][0]["lines"] == ["+a new file"]

    first = listed["a.txt"]["hunks"][0]["header"]
    done = core.request("chat.revert", {"chatId": chat_id, "turnId": turn,
                                        "hunks": [{"path": "a.txt", "header": first}]})
    assert done["reverted"] == ["a.txt"]
    assert (project / "a.txt").read_text() == ORIGINAL_A.replace("line 39\n", "line thirty-nine\n")
    assert len(_by_path(done)["a.txt"]["hunks"]) == 1  # what is left of the turn

    done = core.request("chat.revert", {"chatId": chat_id, "turnId": turn, "paths": ["b.txt"]})
    assert (project / "b.txt").read_bytes() == ORIGINAL_B.encode()
    assert sorted(_by_path(done)) == ["a.txt", "c.txt"]

    (project / "c.txt").write_text("the person edited this since\n")
    with pytest.raises(CoreRequestError) as refused:
        core.request("chat.revert", {"chatId": chat_id, "turnId": turn})
    assert refused.value.code == "conflict" and "c.txt" in str(refused.value)
    assert (project / "a.txt").read_text() != ORIGINAL_A  # nothing was written

    core.request("chat.revert", {"chatId": chat_id, "turnId": turn, "force": True})
    assert (project / "a.txt").read_text() == ORIGINAL_A and not (project / "c.txt").exists()
    assert (project / "b.txt").read_bytes() == ORIGINAL_B.encode()
    assert _changes(core, chat_id, turn)["files"] == []
    item = next(i for i in items(core, chat_id, "changes") if i["id"] == f"changes-{turn}")
    assert item["files"] == [] and sorted(item["reverted"]) == ["a.txt", "b.txt", "c.txt"]


@pytest.mark.parametrize("git", [True, False], ids=["git-checkout", "plain-folder"])
def test_a_claude_turn_s_edit_shell_and_new_file_are_its_changes_and_come_back(core, daemon, mock, stack, git):
    project = stack / "project"
    _checkout(project, git)
    before = _person_repository(project) if git else None
    _claude_script(mock, project)
    core.chats.create("k1", provider="claude", cwd=str(project))
    core.chats.attach("k1")
    turn, item = _turn_with_changes(core, "k1", "change three files")
    turn_item = next(i for i in items(core, "k1", "turn") if i["id"] == turn)
    assert turn_item["checkpoint"] and turn_item["checkpointAfter"]
    _three_files_then_back(core, "k1", project, turn, item)
    if git:
        assert _person_repository(project) == before
        assert not (project / "HOOK_RAN").exists()
    else:
        assert not (project / ".git").exists()  # a plain folder stays one


def test_a_codex_turn_s_patch_shell_and_new_file_are_its_changes_and_come_back(core, daemon, openai, stack):
    project = stack / "project"
    _checkout(project, git=True)
    before = _person_repository(project)
    _codex_script(openai)
    core.chats.create("x1", provider="codex", cwd=str(project))
    core.chats.attach("x1")
    turn, item = _turn_with_changes(core, "x1", "change three files")
    _three_files_then_back(core, "x1", project, turn, item)
    assert _person_repository(project) == before


def test_the_panel_s_routes_read_and_revert_a_turn_and_name_a_conflict(daemon, mock, stack):
    project = stack / "project"
    _checkout(project, git=False)
    mock.add(tool_use_reply("Write", {"file_path": str(project / "c.txt"), "content": "new\n"}), text_reply("ok"))
    status, _ = daemon.request("PUT", f"/__devhost__/chat/mode?{daemon.query()}", {"runtimeMode": "full-access"})
    assert status == 200  # no approval to give: this test is about the changes
    session = daemon.create_session()["id"]
    thread = daemon.connect_thread(session)
    thread.send_message("make c")
    changes = thread.wait_item(lambda i: i["kind"] == "changes", timeout=90, what="the changes item")
    turns = f"/__devhost__/chat/sessions/{session}/turns/{changes['turnId']}"
    query = daemon.query()
    status, listed = daemon.request("GET", f"{turns}/changes?{query}")
    assert status == 200, listed
    assert [(f["path"], f["status"], f["added"]) for f in listed["files"]] == [("c.txt", "added", 1)]
    (project / "c.txt").write_text("edited\n")
    status, refused = daemon.request("POST", f"{turns}/revert?{query}", {})
    assert status == 409 and refused["code"] == "conflict" and refused["paths"] == ["c.txt"], refused
    status, done = daemon.request("POST", f"{turns}/revert?{query}", {"paths": ["c.txt"], "force": True})
    assert status == 200 and done["reverted"] == ["c.txt"] and not (project / "c.txt").exists()
    status, bad = daemon.request("POST", f"{turns}/revert?{query}", {"paths": ["../outside"]})
    assert status == 400 and "paths" in bad["error"]
    status, _ = daemon.request("POST", f"{turns}/revert?{query}", {}, origin="http://evil.localhost")
    assert status == 403
    status, missing = daemon.request("GET", f"/__devhost__/chat/sessions/{session}/turns/turn-nope/changes?{query}")
    assert status == 404, missing
    thread.close()


def _rewind_script(provider, mock, openai, project):
    if provider == "claude":
        for word in ("alpha", "beta"):
            mock.add(tool_use_reply("Write", {"file_path": str(project / f"{word}.txt"), "content": f"{word}\n"}),
                     text_reply(f"Noted: {word}."))
        mock.add(text_reply("You told me alpha."))
        return mock, message_text
    for word in ("alpha", "beta"):
        openai.add(patch_reply(f"*** Begin Patch\n*** Add File: {word}.txt\n+{word}\n*** End Patch\n"),
                   codex_text(f"Noted: {word}."))
    openai.add(codex_text("You told me alpha."))
    return openai, codex_message_text


@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_a_rewind_takes_the_files_and_the_conversation_back_to_before_the_turn(core, daemon, mock, openai, stack,
                                                                              provider):
    project = stack / "project"
    _checkout(project, git=True)
    model, said = _rewind_script(provider, mock, openai, project)
    core.chats.create("r1", provider=provider, cwd=str(project))
    core.chats.attach("r1")
    alpha, _ = _turn_with_changes(core, "r1", "remember the word alpha")
    beta, _ = _turn_with_changes(core, "r1", "remember the word beta")
    (project / "alpha.txt").write_text("the person's own edit since\n")
    with pytest.raises(CoreRequestError) as refused:
        core.request("chat.rewind", {"chatId": "r1", "turnId": alpha})  # alpha.txt changed since
    assert refused.value.code == "conflict"
    assert (project / "beta.txt").exists()  # nothing was done

    answer = core.request("chat.rewind", {"chatId": "r1", "turnId": beta})
    assert answer["files"] == "reverted" and answer["reverted"] == ["beta.txt"]
    assert answer["conversation"] == "rewound", answer
    assert not (project / "beta.txt").exists() and (project / "alpha.txt").exists()
    assert [i["id"] for i in items(core, "r1", "turn")] == [alpha]

    _turn_with_changes(core, "r1", "what words do you remember?")
    last = said(model.requests[-1])
    assert "remember the word alpha" in last and "what words do you remember?" in last
    assert "beta" not in last


def test_what_a_turn_s_background_shell_changes_later_joins_its_changes(core, daemon, mock, stack):
    project = stack / "project"
    _checkout(project, git=False)
    mock.add(tool_use_reply("Bash", {"command": "sleep 2; echo late > late.txt", "description": "Later",
                                     "run_in_background": True}),
             text_reply("Started it."), text_reply("It wrote late.txt."))
    core.chats.create("bg", provider="claude", cwd=str(project))
    core.chats.attach("bg")
    turn, item = _turn_with_changes(core, "bg", "write it in the background")
    assert item["files"] == []  # the shell has not written yet
    def listed():
        return [f["path"] for f in next(i for i in items(core, "bg", "changes") if i["turnId"] == turn)["files"]]
    wait_until(lambda: listed() == ["late.txt"], timeout=60, what="the background shell's file in the turn's changes")
    assert [f["path"] for f in _changes(core, "bg", turn)["files"]] == ["late.txt"]


def test_a_checkout_too_large_to_snapshot_in_time_is_snapshot_in_the_background_for_the_next_turns(
        stack, daemon_env, mock):
    from devhostd.core_client import CoreConnection
    from tests.integration.daemon import Daemon

    project = stack / "project"
    _checkout(project, git=False)
    # 8,000 files: a first snapshot hashes them all (seconds here), a warm one only stats them
    # (a tenth of a second): a deadline of 0.5 s fails the one and not the other.
    for folder in range(80):
        (project / "many" / str(folder)).mkdir(parents=True)
        for n in range(100):
            (project / "many" / str(folder) / f"{n}.txt").write_text(f"file {folder}/{n}\n" * 20)
    mock.add(text_reply("one"), tool_use_reply("Write", {"file_path": str(project / "c.txt"), "content": "c\n"}),
             text_reply("two"))
    daemon = Daemon({**daemon_env, "DEVHOSTD_CHECKPOINT_SECONDS": "0.5"}, cwd=stack,
                    config=stack / "devhost.toml", state_dir=stack / "state")
    try:
        with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
            core.chats.create("big", provider="claude", cwd=str(project))
            core.chats.attach("big")
            turn, item = _turn_with_changes(core, "big", "first")
            assert item["files"] == [] and "too large to snapshot" in item["note"], item
            with pytest.raises(CoreRequestError) as none:
                _changes(core, "big", turn)
            assert none.value.code == "chat-unsupported" and "no checkpoint" in str(none.value)
            wait_until(lambda: "checkpoint.warmed" in daemon.log(), timeout=120, what="the background snapshot")
            turn, item = _turn_with_changes(core, "big", "second")
            assert [f["path"] for f in item["files"]] == ["c.txt"], item
        assert daemon.log().count("checkpoint.skipped") == 1
    finally:
        daemon.stop()

"""The CLIs' own saved conversations: one begun in a terminal (the real CLI, run here directly,
not through devhostd) is listed for its folder's pages and resumed with its transcript kept.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.daemon import wait_until
from tests.mock_anthropic import text_reply
from tests.mock_openai import text_reply as openai_text
from tests.peers import CLAUDE, CODEX


def run_in_terminal(argv, cwd, env) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


def saved(daemon, hostname="app.localhost") -> list[dict]:
    status, value = daemon.request("GET", f"/__devhost__/chat/saved?{daemon.query(hostname)}",
                                   host=daemon.host(hostname))
    assert status == 200, (status, value)
    return value["conversations"]


def test_a_claude_conversation_begun_in_a_terminal_is_listed_and_resumed_with_its_transcript(
        daemon, daemon_env, mock, stack):
    mock.add(text_reply("Hello from the terminal's Claude."))
    out = run_in_terminal([str(CLAUDE), "-p", "remember the word heron", "--output-format", "json"],
                          stack / "project", daemon_env)
    native_id = json.loads(out)["session_id"]

    [listed] = saved(daemon)
    assert listed["harness"] == "claude-code" and listed["nativeSessionId"] == native_id
    assert listed["title"] == "remember the word heron" and listed["updatedAt"] > 0
    assert saved(daemon, "other.localhost") == []  # another folder's page does not see it

    mock.add(text_reply("It was heron."))
    record = daemon.create_session(resumeId=native_id)
    assert record["title"] == "remember the word heron"
    sock = daemon.connect_thread(record["id"])
    texts = [(i["kind"], i.get("text")) for i in sock.snapshot["items"] if i["kind"] in ("user", "assistant")]
    assert texts == [("user", "remember the word heron"), ("assistant", "Hello from the terminal's Claude.")]
    sock.send_message("which word?")
    sock.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "It was heron." and not i["streaming"])
    # The CLI itself resumed its conversation: the model saw the first exchange again.
    assert "remember the word heron" in json.dumps(mock.requests[-1])
    sock.close()
    assert saved(daemon) == []  # now a session holds it: listed once, as that session


def test_a_codex_thread_begun_in_a_terminal_is_listed_and_resumed_with_its_transcript(
        daemon, daemon_env, openai, stack):
    openai.add(openai_text("Noted: ibis."))
    run_in_terminal([str(CODEX), "exec", "--skip-git-repo-check", "remember the word ibis"],
                    stack / "project", daemon_env)
    [listed] = saved(daemon)
    assert listed["harness"] == "codex" and listed["title"] == "remember the word ibis"

    openai.add(openai_text("It was ibis."))
    record = daemon.create_session(harness="codex", resumeId=listed["nativeSessionId"])
    sock = daemon.connect_thread(record["id"])
    texts = [(i["kind"], i.get("text")) for i in sock.snapshot["items"] if i["kind"] in ("user", "assistant")]
    assert texts == [("user", "remember the word ibis"), ("assistant", "Noted: ibis.")]
    sock.send_message("which word?")
    sock.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "It was ibis." and not i["streaming"])
    sock.close()


def test_the_saved_list_is_only_for_a_page_of_its_own_folder(daemon):
    status, value = daemon.request("GET", "/__devhost__/chat/saved?pageURL=http://nowhere.localhost/&chatTarget=project",
                                   host=daemon.host())
    assert status == 400 and "pageURL" in value["error"], value



def recorded_folders(home, native_id: str) -> list[str]:
    """The working folder of each record Claude Code wrote to a conversation's transcript (each
    process writes its own cwd on the lines it appends)."""
    [path] = (home / ".claude" / "projects").glob(f"*/{native_id}.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["cwd"] for r in records if isinstance(r, dict) and "cwd" in r]


def test_a_claude_conversation_begun_in_a_subfolder_resumes_in_that_subfolder(daemon, daemon_env, mock, stack):
    folder = stack / "project" / "packages" / "api"
    folder.mkdir(parents=True)
    mock.add(text_reply("Noted, in the api package."))
    native_id = json.loads(run_in_terminal([str(CLAUDE), "-p", "remember the word kite", "--output-format", "json"],
                                           folder, daemon_env))["session_id"]
    home = Path(daemon_env["HOME"])
    begun = recorded_folders(home, native_id)
    assert begun and set(begun) == {str(folder)}
    [listed] = saved(daemon)  # a conversation of a folder inside the checkout is the checkout's
    assert listed["nativeSessionId"] == native_id

    mock.add(text_reply("It was kite."))
    record = daemon.create_session(resumeId=native_id)
    assert record["projectRootPath"] == str(stack / "project")  # still the page's session
    sock = daemon.connect_thread(record["id"])
    sock.send_message("which word?")
    sock.wait_item(lambda i: i["kind"] == "assistant" and i.get("text") == "It was kite." and not i["streaming"])
    assert "remember the word kite" in json.dumps(mock.requests[-1])
    sock.close()
    # (the CLI writes its lines to the transcript a moment after they reach the page)
    wait_until(lambda: len(recorded_folders(home, native_id)) > len(begun), what="the resumed lines in the transcript")
    resumed = recorded_folders(home, native_id)[len(begun):]
    assert set(resumed) == {str(folder)}  # the resumed CLI ran where the conversation began

"""actors.harness.saved (and each harness's saved.py): the CLIs' own saved conversations, listed per folder and read
back as a chat's items. The transcripts are real ones the pinned CLIs wrote
(tests/fixtures/transcripts/, trimmed), laid out in a CLI home the way the CLI lays them out."""
from __future__ import annotations

import shutil
from pathlib import Path

from actors.harness import claude
from actors.harness.claude.files import slug as claude_slug
from actors.harness.claude.saved import claude_items, list_claude
from actors.harness.codex.saved import codex_items, list_codex
from actors.harness.saved import resume_folder, saved_conversations, transcript_items
from actors.harness.transcripts import PROMPT_MARKER

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE_ROOT = "/home/dev/tmp/exp/proj-a"  # the folder the Claude Code samples ran in
CODEX_ROOT = "/home/dev/tmp/exp/proj-b"
CODEX_ID = "01a22ca6-0694-7b40-b7ae-d7e6df08cec5"


def claude_home(tmp_path, *names) -> dict:
    folder = tmp_path / ".claude" / "projects" / claude_slug(CLAUDE_ROOT)
    folder.mkdir(parents=True)
    for n, name in enumerate(names):
        shutil.copy(SAMPLES / "claude-code" / f"{name}.jsonl", folder / f"0000000{n}-1111-2222-3333-444444444444.jsonl")
    return {"HOME": str(tmp_path)}


def codex_home(tmp_path) -> dict:
    folder = tmp_path / ".codex" / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLES / "codex" / "exec-rollout-with-resume.jsonl",
                folder / f"rollout-2026-11-30T13-30-07-{CODEX_ID}.jsonl")
    return {"HOME": str(tmp_path)}


def shown(items) -> list[tuple]:
    return [(i["kind"], i.get("text") or (i.get("input") or {}).get("command")) for i in items if i["kind"] != "turn"]


def test_a_claude_transcript_becomes_turns_of_the_persons_messages_with_the_agents_text_and_tools():
    items = claude_items(str(SAMPLES / "claude-code" / "print-mode-tool-call-and-resume.jsonl"))
    assert shown(items) == [("user", "run echo please"), ("assistant", "I will run a command."),
                            ("tool", "echo hello-from-mock"), ("assistant", "All done."),
                            ("user", "again please"), ("assistant", "I will run a command."),
                            ("tool", "echo hi"), ("assistant", "All done.")]
    tools = [i for i in items if i["kind"] == "tool"]
    assert [(t["state"], t["output"]) for t in tools] == [("done", "hello-from-mock"), ("done", "hi")]
    turns = [i for i in items if i["kind"] == "turn"]
    assert [t["state"] for t in turns] == ["done", "done"]
    assert all(i["turnId"] in {t["id"] for t in turns} for i in items)


def test_what_the_cli_itself_puts_in_a_user_record_is_not_a_message_of_the_person():
    items = claude_items(str(SAMPLES / "claude-code" / "subagent" / "parent-d0d074a6.jsonl"))
    users = [i["text"] for i in items if i["kind"] == "user"]
    assert users == ["delegate to a subagent"]  # not the <task-notification> the CLI added
    # A subagent's own transcript is all sidechain: nothing of it is this conversation's.
    assert claude_items(str(SAMPLES / "claude-code" / "subagent" / "agent-afe2a965a61eab1b3.jsonl")) == []


def test_devhosts_own_instructions_are_not_part_of_a_message(tmp_path):
    source = (SAMPLES / "claude-code" / "renamed-session.jsonl").read_text()
    (tmp_path / "t.jsonl").write_text(source.replace('"please run echo"',
                                                     f'"please run echo{PROMPT_MARKER!r}"'.replace("'", "")))
    [user] = [i for i in claude_items(str(tmp_path / "t.jsonl")) if i["kind"] == "user"]
    assert user["text"] == "please run echo"


def test_a_codex_rollout_becomes_turns_with_commands_their_exit_codes_and_plain_folders():
    items = codex_items(str(SAMPLES / "codex" / "exec-rollout-with-resume.jsonl"))
    assert shown(items) == [("user", "run echo please"), ("tool", "echo hello-from-mock"), ("assistant", "All done."),
                            ("user", "again please"), ("tool", "echo hi"), ("assistant", "All done.")]
    tool = next(i for i in items if i["kind"] == "tool")
    assert tool["exitCode"] == 0 and tool["state"] == "done" and tool["input"]["cwd"] == CODEX_ROOT


def test_claude_conversations_are_listed_for_their_folder_and_folders_inside_it_only(tmp_path):
    env = claude_home(tmp_path, "renamed-session", "interactive-permission-prompt")
    listed = list_claude(CLAUDE_ROOT, env)
    assert sorted(c["title"] for c in listed) == ["please run echo", "please touch a file"]
    assert all(c["harness"] == "claude-code" and len(c["nativeSessionId"]) == 36 for c in listed)
    assert list_claude("/home/dev/tmp/exp/proj-b", env) == []
    assert list_claude("/home/dev/tmp/exp/proj-a-other", env) == []  # a sibling whose name starts the same


def test_codex_threads_are_listed_for_their_folder_and_read_back_by_id(tmp_path):
    env = codex_home(tmp_path)
    [listed] = list_codex(CODEX_ROOT, env)
    assert (listed["nativeSessionId"], listed["title"]) == (CODEX_ID, "run echo please")
    assert list_codex(CLAUDE_ROOT, env) == []
    assert shown(transcript_items("codex", CODEX_ID, env))[0] == ("user", "run echo please")
    assert transcript_items("codex", "../../etc/passwd", env) == []  # an id names a file; never a path


def test_both_clis_are_listed_together_newest_first(tmp_path):
    env = {**claude_home(tmp_path, "renamed-session"), **codex_home(tmp_path)}
    both = saved_conversations("/home/dev/tmp/exp", env)
    assert {c["harness"] for c in both} == {"claude-code", "codex"}
    assert [c["updatedAt"] for c in both] == sorted((c["updatedAt"] for c in both), reverse=True)


def test_each_accounts_home_is_listed_and_each_conversation_says_which_account_keeps_it(tmp_path):
    env = claude_home(tmp_path / "me", "renamed-session")  # the CLI's default home, under HOME
    work = tmp_path / "work"
    claude_home(work, "renamed-session", "print-mode-tool-call-and-resume")  # its .claude: a config home
    accounts = {"claude": {"work": str(work / ".claude"), "same": str(tmp_path / "me" / ".claude")}}
    listed = saved_conversations(CLAUDE_ROOT, env, accounts)
    by_account = sorted((c["account"] or "", c["nativeSessionId"][:8]) for c in listed)
    # The default home's one, work's two (their ids repeat the default's file names: listed once,
    # under the first home that has it) and nothing twice for "same", which is the default home.
    assert by_account == [("", "00000000"), ("work", "00000001")], by_account
    assert [c["account"] for c in saved_conversations(CLAUDE_ROOT, env)] == [None]


def test_a_file_is_read_again_only_when_its_size_or_time_changed(tmp_path):
    from actors.harness import transcripts as saved
    path = tmp_path / "one.jsonl"
    path.write_text("first\n")
    reads = []

    def read(p):
        reads.append(p)
        return {"text": open(p).read()}
    assert saved.read_once(str(path), read) == {"text": "first\n"}
    assert saved.read_once(str(path), read) == {"text": "first\n"} and len(reads) == 1  # unchanged: remembered
    path.write_text("first\nsecond\n")
    assert saved.read_once(str(path), read) == {"text": "first\nsecond\n"} and len(reads) == 2
    assert saved.read_once(str(tmp_path / "gone.jsonl"), read) is None and len(reads) == 2


def saved_in(tmp_path, begun_in: Path) -> str:
    """A real transcript, laid out as Claude Code keeps one begun in ``begun_in``; its id."""
    session_id = "7a44fe79-7da2-4a39-a157-1bbfddcf7a80"
    folder = tmp_path / "home" / ".claude" / "projects" / claude_slug(str(begun_in))
    folder.mkdir(parents=True)
    text = (SAMPLES / "claude-code" / "print-mode-tool-call-and-resume.jsonl").read_text()
    (folder / f"{session_id}.jsonl").write_text(text.replace(f'"cwd": "{CLAUDE_ROOT}"', f'"cwd": "{begun_in}"'))
    return session_id


def test_a_conversation_resumes_in_the_folder_of_the_checkout_it_was_begun_in(tmp_path):
    root = tmp_path / "checkout"
    (root / "packages" / "api").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home")}
    session_id = saved_in(tmp_path, root / "packages" / "api")
    recorded = claude.find_conversation_cwd(session_id, env)
    assert recorded == str(root / "packages" / "api")  # what the CLI wrote on its records
    assert resume_folder(recorded, str(root)) == str(root / "packages" / "api")
    assert resume_folder(str(root), str(root)) == str(root)


def test_a_folder_outside_the_checkout_gone_or_not_absolute_is_never_where_it_resumes(tmp_path):
    root, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (tmp_path / "checkout-b").mkdir()
    (root / "link").symlink_to(elsewhere)  # inside by its name, outside by its real path
    for recorded in (str(elsewhere), str(tmp_path / "checkout-b"), str(root / "link"), str(root / "gone"),
                     "checkout/sub", "", None, str(root / ".." / "elsewhere")):
        assert resume_folder(recorded, str(root)) is None, recorded

"""A chat-core message's references: files of the chat's folder, skills, other chats' context
(actors/core/references.py, web/command_rules.py), and how each driver writes them as its CLI's
own (measured: tests/fixtures/modes/claude-mentions.jsonl, codex-mentions.jsonl)."""
import os

import pytest

from actors.core import references as refs
from actors.errors import ChatError
from actors.harness.claude import protocol as claude
from actors.harness.codex import protocol as codex
from web import command_rules as rules


def test_a_send_names_at_most_64_files_16_skills_and_16_chats():
    assert rules.references({"mentions": ["a.md", "a.md", "b/c.py"], "skills": ["s"], "chats": []}) == {
        "mentions": ["a.md", "b/c.py"], "skills": ["s"]}
    for bad in ({"mentions": ["x"] * 65}, {"skills": ["s"] * 17}, {"chats": ["c"] * 17}, {"mentions": "a.md"},
                {"mentions": [""]}, {"skills": [" "]}, {"chats": [3]}, {"mentions": ["a\nb"]}):
        key = next(iter(bad))
        with pytest.raises(rules.Invalid, match=f"`{key}` is a list of at most"):
            rules.references(bad)


def test_a_mention_must_resolve_inside_the_chats_folder(tmp_path):
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (root / "docs" / "a.md").write_text("a")
    (outside / "secret").write_text("s")
    os.symlink(outside / "secret", root / "link")
    assert refs.resolve_mentions(str(root), ["docs/a.md", "./docs/a.md", "docs"]) == (
        str(root / "docs" / "a.md"), str(root / "docs"))
    for mention, said in (("../outside/secret", "resolves outside"), ("link", "resolves outside"),
                          (str(root / "docs" / "a.md"), "relative to the chat's folder"),
                          ("docs/none.md", "no such file")):
        with pytest.raises(ChatError, match=said) as refused:
            refs.resolve_mentions(str(root), [mention])
        assert refused.value.code == "bad-request"


def test_another_chats_context_is_its_last_texts_oldest_first_and_bounded():
    items = [{"kind": "user", "text": "first question"}, {"kind": "assistant", "text": "first answer"},
             {"kind": "user", "text": "second question"}, {"kind": "tool", "text": "ran ls"},
             {"kind": "assistant", "text": "second answer"}]  # in order, as a history page gives them
    said = refs.chat_context("other", items)
    assert said == ("[Context from chat other]\nUser: first question\n\nAssistant: first answer\n\n"
                    "User: second question\n\nAssistant: second answer\n[End of context from chat other]")
    many = [{"kind": "user", "text": f"m{n} " + "x" * 100} for n in reversed(range(50))]  # m0 the newest
    kept = refs.chat_context("busy", many)
    assert "m0 " in kept and "m19 " in kept and "m20 " not in kept  # the last 20
    assert kept.index("m19 ") < kept.index("m0 ")
    long = refs.chat_context("busy", [{"kind": "user", "text": f"m{n} " + "x" * 5000} for n in reversed(range(50))])
    assert "m0 " in long and "m19 " not in long and len(long) < refs.CONTEXT_CHAT + 100  # each cut, the latest kept
    assert refs.with_context("hi", [said]).endswith("[End of context from chat other]\n\nhi")
    assert refs.with_context("hi", []) == "hi"


def test_claude_code_gets_a_skill_as_its_slash_command_and_files_as_at_paths():
    driver = claude.ClaudeDriver(cwd="/work/project")
    frames = driver.message_frames("m1", "Look at these", [], skills=(("greet", None), ("lint", None)),
                                   mentions=("/work/project/docs/a.md", "/work/project/my notes.txt"))
    assert frames[-1]["message"]["content"] == (
        '/greet Look at these\n\n@docs/a.md @"my notes.txt"\n\nUse the lint skill.')
    assert driver.message_frames("m2", "", [], skills=(("greet", None),))[-1]["message"]["content"] == "/greet"


def test_codex_gets_skill_items_and_files_as_paths_in_the_text():
    driver = codex.CodexDriver(cwd="/work/project")
    driver.thread_id = "thread-1"
    frame = driver.message_frames("m1", "Look", [], skills=(("greet", "/work/project/.agents/skills/greet/SKILL.md"),),
                                  mentions=("/work/project/docs/a.md",))[0]
    assert frame["method"] == "turn/start"
    assert frame["params"]["input"] == [
        {"type": "text", "text": "Look\n\n[Mentioned files]\n- docs/a.md", "text_elements": []},
        {"type": "skill", "name": "greet", "path": "/work/project/.agents/skills/greet/SKILL.md"}]

"""A conversation exported as Markdown (web/markdown_export.py): what a person reads in the file."""
from __future__ import annotations

from web.markdown_export import conversation_markdown, file_name, tool_summary

RECORD = {"title": "Fix the header", "harness": "codex", "projectRootPath": "/src/app", "createdAt": 1_700_000_000_000}


def test_the_file_has_the_title_the_harness_folder_and_start_then_each_side_in_order():
    items = [{"kind": "turn", "id": "t1"},
             {"kind": "user", "text": "make it blue"},
             {"kind": "thinking", "text": "hmm, secret working"},
             {"kind": "assistant", "text": "Looking."},
             {"kind": "tool", "name": "shell", "input": {"command": "ls -la"}, "state": "done"},
             {"kind": "tool", "name": "shell", "input": {"command": "false"}, "state": "error", "exitCode": 1},
             {"kind": "assistant", "text": "Done: it is **blue**."},
             {"kind": "note", "level": "error", "text": "The model failed\nwith two lines"},
             {"kind": "compaction"}]
    assert conversation_markdown(RECORD, items) == (
        "# Fix the header\n\nCodex · in `/src/app` · started 2023-11-14 22:13 UTC\n\n"
        "## You\n\nmake it blue\n\n"
        "## Codex\n\nLooking.\n\n- **shell** `ls -la` — done\n\n- **shell** `false` — error (exit 1)\n\n"
        "Done: it is **blue**.\n\n"
        "> **Error:** The model failed\n> with two lines\n\n"
        "> *The conversation was compacted.*\n")


def test_a_delegated_agent_is_one_line_and_its_own_work_is_left_out():
    items = [{"kind": "user", "text": "ask a helper"},
             {"kind": "subagent", "description": "look around", "status": "done"},
             {"kind": "assistant", "text": "inner words", "parentToolUseId": "toolu_1"},
             {"kind": "assistant", "text": "It looked."}]
    text = conversation_markdown({**RECORD, "harness": "claude-code"}, items)
    assert "- **Agent** look around — done" in text and "inner words" not in text
    assert text.endswith("## Claude Code\n\n- **Agent** look around — done\n\nIt looked.\n")


def test_a_tool_line_names_its_subject_in_code_that_holds_any_backticks_and_is_cut_to_one_line():
    assert tool_summary({"name": "Bash", "input": {"command": "echo `date`"}, "state": "done"}) == \
        "- **Bash** `` echo `date` `` — done"  # CommonMark drops the one space each side
    long = tool_summary({"name": "Bash", "input": {"command": "echo " + "x" * 300 + "\nmore"}, "state": "running"})
    assert len(long) < 160 and long.endswith("…` — running") and "\n" not in long
    assert tool_summary({"name": "Edit", "input": {"file_path": "/src/a.py", "old_string": "a"}}) == \
        "- **Edit** `/src/a.py` — running"
    assert tool_summary({"name": "apply_patch", "input": {}, "changes": [{"path": "a.py"}, {"path": "b.py"}],
                         "state": "done"}) == "- **apply_patch** `a.py, b.py` — done"


def test_the_download_is_named_after_the_title_with_only_safe_characters():
    assert file_name({"title": "Fix the header / footer: now!"}) == "fix-the-header-footer-now.md"
    assert file_name({"title": "../../etc/passwd"}) == "etc-passwd.md"
    assert file_name({"title": None}) == "conversation.md"
    assert file_name({"title": "日本語"}) == "conversation.md"


def test_an_export_of_only_the_newest_items_says_first_that_the_start_is_left_out():
    items = [{"kind": "user", "text": "msg 200"}, {"kind": "assistant", "text": "reply"}]
    text = conversation_markdown(RECORD, items, older_left_out=True)
    assert text.startswith("# Fix the header\n\nCodex · in `/src/app` · started 2023-11-14 22:13 UTC\n\n"
                           "> *The start of this conversation is left out: an export holds its newest 2 items.*\n\n"
                           "## You\n\nmsg 200\n\n")
    assert "left out" not in conversation_markdown(RECORD, items)

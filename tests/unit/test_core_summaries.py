"""actors.core.summaries: what info.requests says of a pending approval or question (the seed's
request summaries), so a client that is not attached can say what waits."""
from actors.core.summaries import LIMITS, clip, summary
from tests.projected import recorded_items


def approval(tool, tool_input, description=None) -> dict:
    return {"id": "approval-r1", "kind": "approval", "requestId": "r1", "toolName": tool, "input": tool_input,
            "description": description, "createdAt": 5}


def test_a_shell_command_is_summarized_by_its_command_from_a_recorded_codex_approval():
    [item] = [i for i in recorded_items("codex", "frames-cmd-approval-untrusted") if i["kind"] == "approval"][:1]
    part = summary({**item, "createdAt": 1})["approval"]
    assert part["toolName"] == "shell" and "touch" in part["command"] and "truncated" not in part


def test_a_claude_code_bash_approval_from_a_recording_names_its_command_and_its_description():
    [item] = [i for i in recorded_items("claude-code", "perm_allow") if i["kind"] == "approval"]
    part = summary({**item, "createdAt": 1})["approval"]
    assert part["toolName"] == item["toolName"] and part.get("command") == item["input"].get("command")


def test_a_long_command_is_cut_to_twelve_lines_and_says_so():
    part = summary(approval("Bash", {"command": "\n".join(f"echo {n}" for n in range(40))}))["approval"]
    assert part["command"].count("\n") == LIMITS["commandLines"] - 1 and part["truncated"] is True


def test_a_file_edit_gives_its_path_clipped_from_the_front_and_only_changed_lines():
    path = "/home/me/" + "deep/" * 60 + "app.py"
    part = summary(approval("Edit", {"file_path": path, "old_string": "a = 1", "new_string": "a = 2"}))["approval"]
    assert part["path"].startswith("…") and part["path"].endswith("/app.py") and len(part["path"]) == LIMITS["subject"]
    assert part["diff"] == "-a = 1\n+a = 2"


def test_a_codex_file_change_with_several_files_counts_them():
    changes = [{"path": "a.py", "diff": "--- a\n+++ b\n@@\n-x\n+y\n ctx"}, {"path": "b.py", "diff": "+new"}]
    part = summary(approval("apply_patch", {"changes": changes}))["approval"]
    assert part == {"toolName": "apply_patch", "path": "a.py", "files": 2, "diff": "-x\n+y\n+new"}


def test_another_tool_is_summarized_by_its_first_subject_key_on_one_line():
    part = summary(approval("WebFetch", {"prompt": "read it", "url": "https://example.com/a\nb"}, "fetch"))["approval"]
    assert part == {"toolName": "WebFetch", "subject": "https://example.com/a", "description": "fetch"}
    assert summary(approval("Mystery", {"n": 3, "what": "the first string"}))["approval"]["subject"] == \
        "the first string"


def test_a_question_keeps_labels_and_ids_whole_and_clips_the_rest():
    item = {"id": "question-q", "kind": "question", "requestId": "q", "createdAt": 1, "async": True, "questions": [
        {"id": "color", "header": "H" * 300, "question": "Which?", "multiSelect": False,
         "choices": [{"label": "L" * 300, "description": "d" * 500}]}]}
    part = summary(item)["question"]
    [q] = part["questions"]
    assert len(q["header"]) == LIMITS["header"] and q["choices"][0]["label"] == "L" * 300
    assert len(q["choices"][0]["description"]) == LIMITS["choiceDescription"] and part["async"] is True


def test_clipping_counts_utf16_units_and_never_splits_a_surrogate_pair():
    assert clip("😀" * 10, 5) == "😀😀…"  # each is two units: four units and the ellipsis
    assert clip("short", 5) == "short"

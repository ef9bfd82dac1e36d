"""A turn's changes as the chat shows them: the ``changes`` item (no hunks, totals) and the
seed's CheckpointDiff (chat.turnDiff), from what the checkpoint store lists."""
from actors.chat.checkpoints import change_summary
from actors.core.changes import seed_diff

LISTED = {"files": [
    {"path": "a.txt", "status": "modified", "added": 2, "removed": 1,
     "hunks": [{"header": "@@ -1,2 +1,3 @@", "lines": [" one", "-two", "+TWO", "+three"]}]},
    {"path": "logo.png", "status": "added", "added": 0, "removed": 0, "binary": True, "hunks": []},
    {"path": "new.txt", "oldPath": "old.txt", "status": "renamed", "added": 0, "removed": 0, "hunks": []},
    {"path": "big.lock", "status": "modified", "added": 5000, "removed": 4000, "truncated": True,
     "hunks": [{"header": "@@ -1 +1 @@", "lines": ["-a", "+b"]}]},
], "skipped": ["video.mp4"]}


def test_the_item_lists_each_file_with_its_counts_and_the_totals_without_hunks():
    item = change_summary("turn-1", LISTED)
    assert item["id"] == "changes-turn-1" and item["kind"] == "changes" and item["turnId"] == "turn-1"
    assert item["added"] == 5002 and item["removed"] == 4001
    assert all("hunks" not in f for f in item["files"])
    assert item["files"][1] == {"path": "logo.png", "status": "added", "added": 0, "removed": 0, "binary": True}
    assert item["files"][2]["oldPath"] == "old.txt"
    assert item["skipped"] == ["video.mp4"]


def test_nothing_skipped_is_no_skipped_key():
    assert "skipped" not in change_summary("t", {"files": [], "skipped": []})


def test_the_seed_s_diff_names_binary_and_cut_files_and_joins_the_hunks():
    diff = seed_diff(LISTED)
    a, png, renamed, lock = diff["files"]
    assert a == {"path": "a.txt", "kind": "modified", "added": 2, "deleted": 1,
                 "diff": "@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three"}
    assert png["omitted"] == "binary" and png["diff"] == ""
    assert renamed["kind"] == "renamed" and "omitted" not in renamed
    assert lock["omitted"] == "too-large" and diff["truncated"] is True
    assert seed_diff({"files": LISTED["files"][:1]})["truncated"] is False

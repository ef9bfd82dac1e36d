"""What a turn changed, between its two snapshots (storage/checkpoints/patch.py, store.changes)."""
from __future__ import annotations

import os

import pytest

from storage.checkpoints import CheckpointError
from storage.checkpoints import patch
from tests.unit.checkpoint_trees import person_repo, store_for, turn, write

LINES = "".join(f"line {n}\n" for n in range(1, 31))


def _by_path(changes: dict) -> dict:
    return {f["path"]: f for f in changes["files"]}


def test_added_modified_deleted_renamed_and_binary_files_with_hunks_and_counts(tmp_path):
    repo = person_repo(tmp_path / "repo", {"mod.txt": LINES, "gone.txt": "a\nb\n", "old/name.txt": LINES,
                                           "pic.png": b"\x89PNG\0\1\2"})
    store = store_for(tmp_path, repo)

    def change():
        write(repo, {"mod.txt": LINES.replace("line 2\n", "two\n").replace("line 29\n", "") + "end\n",
                     "new.txt": "fresh\nlines\n", "pic.png": b"\x89PNG\0\3\4"})
        os.unlink(repo / "gone.txt")
        os.makedirs(repo / "new")
        os.rename(repo / "old" / "name.txt", repo / "new" / "name.txt")

    before, after = turn(store, change)
    files = _by_path(store.changes(before, after))
    assert sorted(files) == ["gone.txt", "mod.txt", "new.txt", "new/name.txt", "pic.png"]
    assert files["new.txt"] == {"path": "new.txt", "status": "added", "added": 2, "removed": 0,
                                "hunks": [{"header": "@@ -0,0 +1,2 @@", "lines": ["+fresh", "+lines"]}]}
    gone = files["gone.txt"]
    assert (gone["status"], gone["added"], gone["removed"]) == ("deleted", 0, 2)
    assert files["new/name.txt"] == {"path": "new/name.txt", "status": "renamed", "oldPath": "old/name.txt",
                                     "added": 0, "removed": 0, "hunks": []}
    assert files["pic.png"] == {"path": "pic.png", "status": "modified", "added": 0, "removed": 0,
                                "binary": True, "hunks": []}
    mod = files["mod.txt"]
    assert (mod["status"], mod["added"], mod["removed"]) == ("modified", 2, 2)
    assert [h["header"] for h in mod["hunks"]] == ["@@ -1,5 +1,5 @@", "@@ -26,5 +26,5 @@"]
    assert mod["hunks"][0]["lines"] == [" line 1", "-line 2", "+two", " line 3", " line 4", " line 5"]
    assert mod["hunks"][1]["lines"] == [" line 26", " line 27", " line 28", "-line 29", " line 30", "+end"]


def test_hunks_past_the_line_budget_are_cut_and_the_counts_stay_true(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"a.txt": "x\n", "b.txt": "y\n"})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: write(folder, {"a.txt": "".join(f"{n}\n" for n in range(2500)),
                                                         "b.txt": "y\nz\n"}))
    files = _by_path(store.changes(before, after))
    assert (files["a.txt"]["added"], files["a.txt"]["removed"]) == (2500, 1)
    assert sum(len(h["lines"]) for h in files["a.txt"]["hunks"]) == patch.PER_FILE_LINES
    assert files["a.txt"]["truncated"] is True
    assert "truncated" not in files["b.txt"]
    # the total budget too: with a tiny one, the second file gets no lines
    entries = patch.parse(store.git.git("diff-tree", "-r", "-M", "--raw", "-z", before, after),
                          store.git.git("diff-tree", "-r", "-M", "-p", before, after))
    described = patch.described(entries, per_file=10, total=10)
    assert [sum(len(h["lines"]) for h in f["hunks"]) for f in described] == [10, 0]
    assert [f.get("truncated") for f in described] == [True, True] and described[1]["added"] == 1


def test_a_file_becoming_a_symlink_is_one_change(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"target.txt": "t\n", "x": "plain\n", "after.txt": "a\n"})
    store = store_for(tmp_path, folder)

    def change():
        os.unlink(folder / "x")
        os.symlink("target.txt", folder / "x")
        write(folder, {"after.txt": "b\n"})

    before, after = turn(store, change)
    files = _by_path(store.changes(before, after))
    assert sorted(files) == ["after.txt", "x"]
    assert files["x"]["status"] == "modified" and (files["x"]["added"], files["x"]["removed"]) == (1, 1)
    assert files["after.txt"]["hunks"][0]["lines"] == ["-a", "+b"]


def test_paths_with_spaces_quotes_and_non_ascii_come_through_unquoted(tmp_path):
    folder = tmp_path / "co"
    names = ['with space.txt', 'quote"d.txt', "été/ñ.txt", "tab\there.txt"]
    write(folder, {n: "1\n" for n in names})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: write(folder, {n: "2\n" for n in names}))
    files = _by_path(store.changes(before, after))
    assert sorted(files) == sorted(names)
    assert all(f["hunks"][0]["lines"] == ["-1", "+2"] for f in files.values())


def test_unknown_commits_are_refused(tmp_path):
    write(tmp_path / "co", {"a": "a\n"})
    store = store_for(tmp_path, tmp_path / "co")
    with pytest.raises(CheckpointError):
        store.changes("HEAD", "HEAD")
    with pytest.raises(CheckpointError):
        store.changes("0" * 40, "1" * 40)

"""Putting a turn's files back (storage/checkpoints/revert.py): exact bytes, modes, links,
conflicts with later work, and hunks one at a time."""
from __future__ import annotations

import os

import pytest

from storage.checkpoints import CheckpointConflict, CheckpointError
from tests.unit.checkpoint_trees import folders_of, git, person_repo, store_for, tree_of, turn, write

THIRTY = "".join(f"line {n}\n" for n in range(1, 31))


def _edit_three_places(path) -> None:
    text = path.read_text().replace("line 2\n", "two\n").replace("line 15\n", "fifteen\n").replace("line 29\n", "29!\n")
    path.write_text(text)


def test_reverting_a_file_restores_its_exact_bytes_and_mode(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"crlf.txt": b"one\r\ntwo\r\n", "tail.txt": b"no newline at the end", "run.sh": "#!/bin/sh\n",
                   "other.txt": "o\n"})
    os.chmod(folder / "run.sh", 0o755)
    expected = tree_of(folder)
    store = store_for(tmp_path, folder)

    def change():
        write(folder, {"crlf.txt": b"one\ntwo\nthree", "tail.txt": b"no newline at the end\n", "other.txt": "p\n"})
        os.chmod(folder / "run.sh", 0o644)
        write(folder, {"run.sh": "#!/bin/sh\necho hi\n"})

    before, after = turn(store, change)
    result = store.revert(before, after, paths=["crlf.txt", "tail.txt", "run.sh"])
    assert result["reverted"] == ["crlf.txt", "run.sh", "tail.txt"]
    now = tree_of(folder)
    asked = ("crlf.txt", "tail.txt", "run.sh")
    assert {k: now[k] for k in asked} == {k: expected[k] for k in asked}
    assert now["other.txt"] == (b"p\n", False)  # not asked for: left as the turn made it
    assert [f["path"] for f in store.changes(before, result["after"])["files"]] == ["other.txt"]


def test_reverting_the_whole_turn_brings_back_the_tree_before_it(tmp_path):
    repo = person_repo(tmp_path / "repo", {"keep.txt": THIRTY, "gone.txt": "bye\r\n", "old/name.txt": THIRTY,
                                           "pic.bin": bytes(range(256)), "tool": "#!/bin/sh\n",
                                           "link": "placeholder"})
    os.unlink(repo / "link")
    os.symlink("keep.txt", repo / "link")
    os.chmod(repo / "tool", 0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    expected, expected_folders = tree_of(repo), folders_of(repo)
    store = store_for(tmp_path, repo)

    def change():
        _edit_three_places(repo / "keep.txt")
        os.unlink(repo / "gone.txt")
        os.makedirs(repo / "new" / "deep")
        os.rename(repo / "old" / "name.txt", repo / "new" / "deep" / "name.txt")
        write(repo, {"added/by/turn.txt": "t\n", "pic.bin": bytes(reversed(range(256)))})
        os.unlink(repo / "link")
        os.symlink("gone.txt", repo / "link")
        os.chmod(repo / "tool", 0o644)
        write(repo, {"tool": "#!/bin/sh\nexit 1\n"})

    before, after = turn(store, change)
    result = store.revert(before, after)
    assert result["reverted"] == ["added/by/turn.txt", "gone.txt", "keep.txt", "link", "new/deep/name.txt",
                                  "pic.bin", "tool"]
    assert tree_of(repo) == expected
    assert folders_of(repo) == expected_folders  # the folders the turn made are gone, `old` is back
    assert store.changes(before, result["after"])["files"] == []


def test_a_checkout_whose_gitattributes_normalise_line_ends_gets_its_crlf_bytes_back(tmp_path):
    repo = person_repo(tmp_path / "repo", {".gitattributes": "* text=auto\n", "win.txt": "a\r\nb\r\n"})
    store = store_for(tmp_path, repo)
    before, after = turn(store, lambda: write(repo, {"win.txt": "a\r\nB\r\n"}))
    changes = store.changes(before, after)
    assert changes["files"][0]["hunks"][0]["lines"] == [" a\r", "-b\r", "+B\r"]  # the bytes, not normalised
    store.revert(before, after, paths=["win.txt"])
    assert (repo / "win.txt").read_bytes() == b"a\r\nb\r\n"


def test_one_hunk_of_three_then_another_of_the_same_file(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"f.txt": THIRTY})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: _edit_three_places(folder / "f.txt"))
    hunks = store.changes(before, after)["files"][0]["hunks"]
    assert len(hunks) == 3
    first = store.revert(before, after, hunks=[{"path": "f.txt", "header": hunks[1]["header"]}])
    assert first["reverted"] == ["f.txt"]
    assert (folder / "f.txt").read_text() == THIRTY.replace("line 2\n", "two\n").replace("line 29\n", "29!\n")
    left = store.changes(before, first["after"])["files"][0]["hunks"]
    assert [h["lines"] for h in left] == [hunks[0]["lines"], hunks[2]["lines"]]
    # the file on disk is what first["after"] holds: no conflict for the next hunk
    second = store.revert(before, first["after"], hunks=[{"path": "f.txt", "header": left[1]["header"]}])
    assert (folder / "f.txt").read_text() == THIRTY.replace("line 2\n", "two\n")
    third = store.revert(before, second["after"], hunks=[{"path": "f.txt", "header": left[0]["header"]}])
    assert (folder / "f.txt").read_text() == THIRTY
    assert store.changes(before, third["after"])["files"] == []


def test_a_stale_hunk_or_a_path_outside_the_turn_is_refused(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"f.txt": THIRTY, "g.txt": "g\n"})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: _edit_three_places(folder / "f.txt"))
    with pytest.raises(CheckpointError, match="no longer in the turn's changes: reload them"):
        store.revert(before, after, hunks=[{"path": "f.txt", "header": "@@ -3,5 +3,5 @@"}])
    with pytest.raises(CheckpointError, match="reload them"):
        store.revert(before, after, paths=["g.txt"])
    for bad in ("../outside.txt", "/etc/passwd", "a/../../b", "", "./f.txt"):
        with pytest.raises(CheckpointError, match="no path of the checkout"):
            store.revert(before, after, paths=[bad])
        with pytest.raises(CheckpointError, match="no path of the checkout"):
            store.revert(before, after, hunks=[{"path": bad, "header": "@@ -1,5 +1,5 @@"}])
    assert (folder / "f.txt").read_text() != THIRTY  # nothing was written


def test_a_file_changed_since_the_turn_is_a_conflict_and_nothing_is_written(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"})
    store = store_for(tmp_path, folder)

    def change():
        write(folder, {"a.txt": "A\n", "b.txt": "B\n", "new.txt": "n\n"})
        os.unlink(folder / "d.txt")

    before, after = turn(store, change)
    write(folder, {"b.txt": "the person's edit\n", "d.txt": "made again\n"})
    os.unlink(folder / "new.txt")
    with pytest.raises(CheckpointConflict) as caught:
        store.revert(before, after)
    assert caught.value.paths == ["b.txt", "d.txt", "new.txt"]
    assert tree_of(folder) == {"a.txt": (b"A\n", False), "b.txt": (b"the person's edit\n", False),
                               "d.txt": (b"made again\n", False)}
    # the file that did not change reverts alone; force overrides the others
    store.revert(before, after, paths=["a.txt"])
    assert (folder / "a.txt").read_text() == "a\n"
    result = store.revert(before, after, paths=["b.txt", "d.txt", "new.txt"], force=True)
    assert result["reverted"] == ["b.txt", "d.txt", "new.txt"]
    assert tree_of(folder) == {"a.txt": (b"a\n", False), "b.txt": (b"b\n", False), "d.txt": (b"d\n", False)}


def test_a_hunk_revert_on_a_changed_file_conflicts_unless_forced(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"f.txt": THIRTY})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: _edit_three_places(folder / "f.txt"))
    header = store.changes(before, after)["files"][0]["hunks"][0]["header"]
    with open(folder / "f.txt", "a") as handle:
        handle.write("later\n")
    with pytest.raises(CheckpointConflict):
        store.revert(before, after, hunks=[{"path": "f.txt", "header": header}])
    store.revert(before, after, hunks=[{"path": "f.txt", "header": header}], force=True)
    # forced: the hunk is reverted on the turn's content, the later line is lost (that is what force means)
    assert (folder / "f.txt").read_text() == THIRTY.replace("line 15\n", "fifteen\n").replace("line 29\n", "29!\n")


def test_a_revert_can_name_a_ref_for_its_new_after_and_forget_drops_a_chats_refs(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"a.txt": "a\n"})
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: write(folder, {"a.txt": "b\n"}))
    result = store.revert(before, after, ref="c1/t1/after")
    assert store.git.git("rev-parse", "refs/devhostd/c1/t1/after").decode().strip() == result["after"]
    assert sorted(store.forget("c1", index="chat-c1")) == ["refs/devhostd/c1/t1/after", "refs/devhostd/c1/t1/before"]
    assert store.git.git("for-each-ref").strip() == b""
    assert not os.path.exists(store.git.index_path("chat-c1"))


def test_a_folder_replaced_by_a_symlink_is_not_written_through(tmp_path):
    folder, outside = tmp_path / "co", tmp_path / "outside"
    write(folder, {"sub/a.txt": "a\n"})
    outside.mkdir()
    store = store_for(tmp_path, folder)
    before, after = turn(store, lambda: write(folder, {"sub/a.txt": "b\n"}))
    os.rename(folder / "sub", tmp_path / "moved")
    os.symlink(outside, folder / "sub")
    write(outside, {"a.txt": "b\n"})
    with pytest.raises(CheckpointError, match="behind a symlink"):
        store.revert(before, after, force=True)
    assert (outside / "a.txt").read_text() == "b\n"


def test_a_folder_to_recreate_under_a_symlink_is_not_written_through_either(tmp_path):
    folder, outside = tmp_path / "co", tmp_path / "outside"
    write(folder, {"sub/deep/a.txt": "a\n", "other.txt": "o\n"})
    outside.mkdir()
    store = store_for(tmp_path, folder)

    def change():
        os.unlink(folder / "sub" / "deep" / "a.txt")
        os.rmdir(folder / "sub" / "deep")
        os.rmdir(folder / "sub")

    before, after = turn(store, change)
    os.symlink(outside, folder / "sub")  # `sub` is absent in `after`, so this is no conflict
    with pytest.raises(CheckpointError, match="behind a symlink"):
        store.revert(before, after)
    assert os.listdir(outside) == []

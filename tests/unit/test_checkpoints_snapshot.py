"""Snapshots of a checkout into devhostd's own store (storage/checkpoints/snapshot.py)."""
from __future__ import annotations

import os
import subprocess

import pytest

from storage.checkpoints import CheckpointStore
from tests.unit.checkpoint_trees import git, person_repo, repo_state, store_for, write


def _files_of(store: CheckpointStore, commit: str) -> list[str]:
    return sorted(store.git.git("ls-tree", "-r", "--name-only", "-z", commit).decode().split("\0")[:-1])


def test_a_git_checkout_is_snapshot_with_untracked_files_and_without_ignored_ones(tmp_path):
    repo = person_repo(tmp_path / "repo", {"src/app.js": "a\n", ".gitignore": "*.log\nbuild/\n"})
    write(repo, {"new.txt": "n\n", "debug.log": "x\n", "build/out.js": "o\n", "src/also.log": "y\n"})
    (repo / ".git" / "info" / "exclude").write_text("private.txt\n")
    write(repo, {"private.txt": "p\n"})
    store = store_for(tmp_path, repo)
    snap = store.snapshot("chat-c1", "c1/t1/before")
    assert snap.error is None and snap.skipped == () and snap.took > 0
    assert _files_of(store, snap.commit) == [".gitignore", "new.txt", "src/app.js"]
    ref = store.git.git("rev-parse", "refs/devhostd/c1/t1/before").decode().strip()
    assert ref == snap.commit


def test_a_plain_folder_is_snapshot_too(tmp_path):
    folder = tmp_path / "plain"
    write(folder, {"index.html": "<p>\n", "js/main.js": "m\n"})
    store = store_for(tmp_path, folder)
    snap = store.snapshot("chat-c1", "c1/t1/before")
    assert _files_of(store, snap.commit) == ["index.html", "js/main.js"]


def test_the_persons_repository_is_never_touched(tmp_path):
    repo = person_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    write(repo, {"untracked.txt": "u\n", "a.txt": "changed\n"})
    git(repo, "add", "a.txt")  # something staged: the index must keep it
    (tmp_path / "hook-ran").unlink()  # that add ran the person's post-index-change hook; nothing else may
    state = repo_state(repo)
    store = store_for(tmp_path, repo)
    before = store.snapshot("chat-c1", "c1/t1/before").commit
    write(repo, {"b.txt": "agent\n", "c.txt": "new\n"})
    after = store.snapshot("chat-c1", "c1/t1/after").commit
    store.changes(before, after)
    store.revert(before, after)
    store.forget("c1")
    assert repo_state(repo) == state
    assert not (tmp_path / "hook-ran").exists()
    assert not store.path.startswith(str(repo))


def test_git_variables_of_the_environment_do_not_lead_to_the_persons_repository(tmp_path, monkeypatch):
    repo = person_repo(tmp_path / "repo", {"a.txt": "a\n"})
    state = repo_state(repo)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    store = store_for(tmp_path, repo)
    before = store.snapshot("chat-c1", "c1/t1/before").commit
    write(repo, {"a.txt": "b\n"})
    after = store.snapshot("chat-c1", "c1/t1/after").commit
    store.revert(before, after)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert repo_state(repo) == state


def test_the_store_follows_a_worktrees_exclude_file_and_a_monorepos_ignore_lines(tmp_path):
    main = person_repo(tmp_path / "main", {"packages/app/src/a.js": "a\n",
                                           ".gitignore": "node_modules/\n/top-only.txt\n"})
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    (main / ".git" / "info" / "exclude").write_text("secret.env\n")
    app = tmp_path / "wt" / "packages" / "app"
    write(app, {"secret.env": "k\n", "node_modules/dep/i.js": "d\n", "top-only.txt": "t\n", "src/b.js": "b\n"})
    store = store_for(tmp_path, app)
    snap = store.snapshot("chat-c1", "c1/t1/before")
    # top-only.txt is anchored at the repository's top, so it does not apply in the package.
    assert _files_of(store, snap.commit) == ["src/a.js", "src/b.js", "top-only.txt"]


def test_a_file_over_the_limit_is_left_out_listed_and_back_once_it_shrinks(tmp_path):
    folder = tmp_path / "co"
    write(folder, {"small.txt": "s\n", "big.bin": b"x" * 2000, "keep.txt": "k\n", ".gitignore": "!*.bin\n"})
    store = store_for(tmp_path, folder, max_file_bytes=1000)
    first = store.snapshot("chat-c1", "c1/t1/before")
    assert first.skipped == ("big.bin",)
    assert _files_of(store, first.commit) == [".gitignore", "keep.txt", "small.txt"]
    write(folder, {"big.bin": b"x" * 10, "keep.txt": b"y" * 5000})  # one shrank, one grew
    second = store.snapshot("chat-c1", "c1/t1/after")
    assert second.skipped == ("keep.txt",)
    assert _files_of(store, second.commit) == [".gitignore", "big.bin", "small.txt"]
    changes = store.changes(first.commit, second.commit)
    # Left out on either side, a file's change is not known: it is listed, not shown as deleted.
    assert changes["skipped"] == ["big.bin", "keep.txt"] and changes["files"] == []


def test_past_the_deadline_there_is_no_checkpoint_and_no_lock_left(tmp_path):
    folder = tmp_path / "co"
    write(folder, {f"f{n}.txt": f"{n}\n" * 1000 for n in range(300)})
    store = store_for(tmp_path, folder, snapshot_seconds=0.001)
    snap = store.snapshot("chat-c1", "c1/t1/before")
    assert snap.commit is None
    assert snap.error == "the checkout is too large to snapshot in 0.001 s: this turn has no checkpoint"
    assert not os.path.exists(store.git.index_path("chat-c1") + ".lock")
    store.snapshot_seconds = 10
    assert store.snapshot("chat-c1", "c1/t1/before").commit is not None


def test_a_killed_git_leaves_no_index_lock(tmp_path):
    # A deadline long enough for git to start: the kill happens during `git add`.
    folder = tmp_path / "co"
    write(folder, {f"d{n % 50}/f{n}.txt": os.urandom(2048) for n in range(4000)})
    store = store_for(tmp_path, folder, snapshot_seconds=0.15)
    snap = store.snapshot("chat-c1", "c1/t1/before")
    if snap.commit is None:  # a fast machine may finish in time; then nothing is to check
        assert "too large to snapshot" in snap.error
    assert not os.path.exists(store.git.index_path("chat-c1") + ".lock")


def test_the_store_is_one_bare_repository_per_checkout_with_bytes_kept_as_they_are(tmp_path):
    one, other = tmp_path / "one", tmp_path / "other"
    write(one, {"a": "a\n"})
    write(other, {"b": "b\n"})
    first, second = store_for(tmp_path, one), store_for(tmp_path, other)
    assert first.path != second.path and store_for(tmp_path, one / ".." / "one").path == first.path
    plain = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "PATH": os.environ["PATH"]}
    config = subprocess.run(["git", "--git-dir", first.path, "config", "-l"], capture_output=True, env=plain)
    for line in ("core.bare=true", "core.autocrlf=false", "gc.auto=0", "core.fsmonitor=false", "core.quotepath=false"):
        assert line in config.stdout.decode().splitlines()
    attributes = open(os.path.join(first.path, "info", "attributes")).read()
    assert attributes == "* -text -filter -ident -working-tree-encoding\n"


def test_any_chat_id_makes_refs_and_an_index_of_its_own(tmp_path):
    write(tmp_path / "co", {"a": "a\n"})
    store = store_for(tmp_path, tmp_path / "co")
    ids = ["a b", "a%20b", "über:chat?*", "..", ".hidden.lock", "x" * 200, "y" * 199 + "é", "c1"]
    commits = {}
    for chat in ids:
        snap = store.snapshot(f"chat-{chat}", f"{chat}/t1/before")
        assert snap.error is None, chat
        commits[chat] = snap.commit
    refs = store.git.git("for-each-ref", "--format=%(refname)").decode().split()
    assert len(refs) == len(ids) and all(r.startswith("refs/devhostd/") and r.endswith("/t1/before") for r in refs)
    assert len(os.listdir(os.path.join(store.path, "indexes"))) == len(ids)
    assert store.forget("a b", index="chat-a b") == ["refs/devhostd/a%20b/t1/before"]
    assert len(store.git.git("for-each-ref").decode().splitlines()) == len(ids) - 1  # "a%20b" is another chat
    assert not os.path.exists(store.git.index_path("chat-a b")) and os.path.exists(store.git.index_path("chat-a%20b"))


def test_an_empty_name_is_refused(tmp_path):
    from storage.checkpoints import CheckpointError
    write(tmp_path / "co", {"a": "a\n"})
    store = store_for(tmp_path, tmp_path / "co")
    for index, ref in (("", "c/t/before"), ("chat-1", "c//before"), ("chat-1", "/c"), ("chat-1", "")):
        with pytest.raises(CheckpointError):
            store.snapshot(index, ref)
    with pytest.raises(CheckpointError):
        store.forget("")


def test_a_later_snapshot_and_a_second_chats_first_one_hold_the_same_tree_as_a_fresh_store(tmp_path):
    folder = tmp_path / "co"
    write(folder, {f"d{n}/f{n}.txt": f"{n}\n" for n in range(20)})
    store = store_for(tmp_path, folder)
    store.snapshot("chat-c1", "c1/t1/before")
    write(folder, {"d1/f1.txt": "changed\n", "new/deep/x.txt": "x\n"})
    os.unlink(folder / "d2" / "f2.txt")
    os.chmod(folder / "d3" / "f3.txt", 0o755)
    os.unlink(folder / "d4" / "f4.txt")
    os.symlink("../d5/f5.txt", folder / "d4" / "f4.txt")
    later = store.snapshot("chat-c1", "c1/t1/after").commit
    second_chat = store.snapshot("chat-c2", "c2/t1/before").commit  # starts from chat-c1's index
    fresh_store = CheckpointStore(str(tmp_path / "other-state"), str(folder))
    fresh = fresh_store.snapshot("chat-c1", "c1/t1/before").commit

    def tree(of: CheckpointStore, commit: str) -> str:
        return of.git.git("rev-parse", f"{commit}^{{tree}}").decode().strip()
    assert tree(store, later) == tree(store, second_chat) == tree(fresh_store, fresh)

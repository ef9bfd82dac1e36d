"""The files of a checkout the panel's @-mentions complete (storage/checkout_files.py)."""
from __future__ import annotations

import subprocess

from storage.checkout_files import git_names, listed


def _write(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def test_a_git_checkout_lists_what_git_tracks_and_new_files_it_does_not_ignore(tmp_path):
    _write(tmp_path, "src/app.js", "README.md", "debug.log", "new.txt")
    (tmp_path / ".gitignore").write_text("*.log\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "src/app.js", "README.md", ".gitignore"], check=True)
    (tmp_path / "gone.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "gone.txt"], check=True)
    (tmp_path / "gone.txt").unlink()  # still tracked, but no file to mention
    found = listed(str(tmp_path), git_names(str(tmp_path)))
    assert found == {"files": [".gitignore", "README.md", "new.txt", "src/app.js"], "truncated": False,
                     "source": "git"}


def test_a_service_in_a_folder_of_a_git_checkout_lists_what_git_lists_there(tmp_path):
    _write(tmp_path, "packages/app/src/main.js", "packages/app/coverage/junk.html", "packages/other/x.js")
    (tmp_path / ".gitignore").write_text("coverage/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    app = tmp_path / "packages" / "app"
    found = listed(str(app), git_names(str(app)))
    assert found == {"files": ["src/main.js"], "truncated": False, "source": "git"}  # relative to the service


def test_a_plain_folder_is_walked_without_dependency_or_hidden_folders_or_links(tmp_path):
    _write(tmp_path, "a.txt", "docs/b.md", "node_modules/dep/index.js", ".cache/x", ".hidden/y", "__pycache__/z.pyc")
    (tmp_path / "out").symlink_to("/etc", target_is_directory=True)
    (tmp_path / "passwd").symlink_to("/etc/passwd")
    assert git_names(str(tmp_path)) is None
    assert listed(str(tmp_path), None) == {"files": ["a.txt", "docs/b.md"], "truncated": False, "source": "walk"}


def test_more_files_than_the_limit_are_cut_and_say_so(tmp_path):
    _write(tmp_path, *(f"f{n:02}.txt" for n in range(12)))
    found = listed(str(tmp_path), None, limit=10)
    assert found["files"] == [f"f{n:02}.txt" for n in range(10)] and found["truncated"] is True

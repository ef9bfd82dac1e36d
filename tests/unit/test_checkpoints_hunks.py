"""Reverting chosen hunks of a file's bytes (storage/checkpoints/hunks.py), on diffs made by
real git (`git diff --no-index`), read by storage/checkpoints/patch.py."""
from __future__ import annotations

import os
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.checkpoints import hunks
from storage.checkpoints.patch import Hunk, _blocks, _read_block


def _hunks(before: bytes, after: bytes, context: int = 3) -> list[Hunk]:
    with tempfile.TemporaryDirectory() as folder:
        old, new = os.path.join(folder, "old"), os.path.join(folder, "new")
        with open(old, "wb") as handle:
            handle.write(before)
        with open(new, "wb") as handle:
            handle.write(after)
        done = subprocess.run(["git", "diff", "--no-index", "--no-color", f"-U{context}", "--text", old, new],
                              capture_output=True, env={"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1",
                                                        "GIT_CONFIG_GLOBAL": os.devnull})
    assert done.returncode in (0, 1), done.stderr
    blocks = _blocks(done.stdout)
    return _read_block(blocks[0])[1] if blocks else []


# Few distinct lines, so diffs have context, repeats and near hunks; "\r" and missing final newlines too.
_line = st.sampled_from([b"a", b"b", b"c", b"", b"x\r", b"\t y", b"\xff\xfe"])
_content = st.lists(_line, max_size=30).map(lambda lines: b"\n".join(lines)) | \
    st.lists(_line, max_size=30).map(lambda lines: b"".join(line + b"\n" for line in lines))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=_content, after=_content)
def test_reverting_every_hunk_gives_the_before_bytes(before, after):
    assert hunks.revert(after, _hunks(before, after)) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=_content, after=_content, data=st.data())
def test_without_context_lines_any_subset_reverts_too(before, after, data):
    # -U0: hunks that only add (b == 0) or only remove (d == 0) lines, in the middle of a file
    found = _hunks(before, after, context=0)
    chosen = data.draw(st.lists(st.sampled_from(found), unique_by=lambda h: h.header) if found else st.just([]))
    middle = hunks.revert(after, chosen)
    assert hunks.revert(middle, _hunks(before, middle, context=0)) == before


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=_content, after=_content, data=st.data())
def test_reverting_some_hunks_then_the_rest_gives_the_before_bytes(before, after, data):
    found = _hunks(before, after)
    chosen = data.draw(st.lists(st.sampled_from(found), unique_by=lambda h: h.header) if found else st.just([]))
    middle = hunks.revert(after, chosen)
    rest = _hunks(before, middle)
    assert len(rest) <= len(found)
    assert hunks.revert(middle, rest) == before


def test_a_hunk_that_only_removed_lines_is_put_back_after_its_line():
    # d == 0 needs no context around (or an emptied file): "+c,0" means "after line c"
    before, after = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n", b"1\n2\n3\n4\n8\n9\n"
    found = _hunks(before, after, context=0)
    assert [h.header for h in found] == ["@@ -5,3 +4,0 @@"]
    only = _hunks(b"a\nb\n", b"")
    assert [(h.new_start, h.new_count) for h in only] == [(0, 0)]
    assert hunks.revert(b"", only) == b"a\nb\n"
    assert hunks.revert(after, found) == before


def test_a_hunk_that_only_added_lines_is_taken_out():
    found = _hunks(b"", b"new\nfile")
    assert [(h.old_start, h.old_count) for h in found] == [(0, 0)]
    assert hunks.revert(b"new\nfile", found) == b""


def test_a_hunk_on_content_it_was_not_made_from_is_refused():
    found = _hunks(b"a\nb\nc\n", b"a\nB\nc\n")
    with pytest.raises(hunks.Mismatch):
        hunks.revert(b"a\nX\nc\n", found)


def test_lines_are_split_on_newlines_only():
    assert hunks.split_lines(b"a\r\nb\rc\n\nd") == [b"a\r\n", b"b\rc\n", b"\n", b"d"]
    assert hunks.split_lines(b"") == []

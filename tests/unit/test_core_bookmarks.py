"""actors.core.bookmarks and storage.sidecars: marking a message or an answer to find it again."""
import os
import stat

import pytest

from actors.core import bookmarks
from actors.errors import ChatError
from storage.sidecars import bookmarks as bookmark_file

USER = {"id": "user-1", "kind": "user", "text": "  make the\n\nheader   blue  "}
ANSWER = {"id": "g:msg:0", "kind": "assistant", "text": "Done."}


def test_a_message_is_bookmarked_with_its_text_collapsed_and_a_name_cut_at_120():
    [mark] = bookmarks.add([], USER, "user-1", "x" * 200, 5)
    assert mark == {"itemId": "user-1", "excerpt": "make the header blue", "createdAt": 5, "name": "x" * 119 + "…"}


def test_only_the_persons_messages_and_the_agents_own_answers_can_be_bookmarked():
    assert bookmarks.add([], ANSWER, "g:msg:0", None, 1)[0]["excerpt"] == "Done."
    for item in (None, {"id": "t", "kind": "tool"}, {**ANSWER, "parentToolUseId": "toolu_1"}):
        with pytest.raises(ChatError) as refused:
            bookmarks.add([], item, "x", None, 1)
        assert refused.value.code == "item-not-found"


def test_an_excerpt_is_cut_at_160_and_a_message_of_images_only_says_so():
    assert len(bookmarks.excerpt({"kind": "user", "text": "w " * 200})) == 160
    assert bookmarks.excerpt({"kind": "user", "text": "", "images": 2}) == "2 images"


def test_bookmarking_again_replaces_the_mark_and_a_chat_keeps_at_most_200():
    marks = bookmarks.add(bookmarks.add([], USER, "user-1", "one", 1), USER, "user-1", None, 2)
    assert marks == [{"itemId": "user-1", "excerpt": "make the header blue", "createdAt": 2}]
    full = [{"itemId": f"i{n}", "excerpt": "", "createdAt": n} for n in range(200)]
    with pytest.raises(ChatError) as refused:
        bookmarks.add(full, USER, "user-1", None, 1)
    assert refused.value.code == "too-many-bookmarks"


def test_renaming_sets_or_with_an_empty_name_removes_the_name_and_an_absent_one_is_refused():
    marks = bookmarks.add([], USER, "user-1", "first", 1)
    assert bookmarks.rename(marks, "user-1", " better ")[0]["name"] == "better"
    assert "name" not in bookmarks.rename(marks, "user-1", "")[0]
    with pytest.raises(ChatError) as refused:
        bookmarks.rename(marks, "user-9", "x")
    assert refused.value.code == "bookmark-not-found"


def test_removing_a_bookmark_that_is_gone_is_no_error():
    assert bookmarks.remove([], "user-1") == []


def test_the_file_is_private_written_whole_and_deleted_when_empty(tmp_path):
    store = bookmark_file(str(tmp_path))
    marks = bookmarks.add([], USER, "user-1", None, 1)
    store.save("a.b/c", marks)  # any id: its own prefix keeps it apart from chats' records
    path = store.path("a.b/c")
    assert os.path.basename(path).startswith("b-") and os.path.dirname(path) == str(tmp_path / "chats")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.load("a.b/c") == marks and store.load("other") == []
    store.save("a.b/c", [])
    assert not os.path.exists(path)


def test_a_file_that_does_not_parse_reads_as_no_bookmarks_and_is_left_alone(tmp_path):
    store = bookmark_file(str(tmp_path))
    os.makedirs(tmp_path / "chats")
    open(store.path("c1"), "w").write("{not json")
    assert store.load("c1") == [] and open(store.path("c1")).read() == "{not json"

"""actors.core.history: a thread's items a page at a time, newest first."""
import json

import pytest

from actors.core.history import MAX_PAGE_ITEMS, PAGE_BYTES, PAGE_ITEMS, page
from actors.errors import ChatError


def items(count: int, text: str = "x") -> list[dict]:
    return [{"id": f"i{n}", "kind": "note", "level": "info", "text": text} for n in range(count)]


def size(item: dict) -> int:
    return len(json.dumps(item, separators=(",", ":")))


def every_page(all_items: list[dict], reset_seq: int = 0, limit: int = PAGE_ITEMS) -> list[dict]:
    pages, cursor = [], None
    while True:
        answer = page(all_items, reset_seq, cursor, limit)
        pages.append(answer)
        cursor = answer["history"]["cursor"]
        if cursor is None:
            return pages


def test_the_page_constants_are_the_seeds():
    assert (PAGE_ITEMS, MAX_PAGE_ITEMS, PAGE_BYTES) == (60, 100, 512 * 1024)


def test_without_a_cursor_a_page_is_the_newest_sixty_items_in_thread_order():
    answer = page(items(100), 0, None)
    assert [i["id"] for i in answer["items"]] == [f"i{n}" for n in range(40, 100)]
    assert answer["history"] == {"start": 40, "cursor": "0:40"}


def test_a_limit_sets_the_page_size():
    assert [i["id"] for i in page(items(10), 0, None, 3)["items"]] == ["i7", "i8", "i9"]


def test_a_page_never_holds_more_than_a_hundred_items():
    assert len(page(items(300), 0, None, 1000)["items"]) == MAX_PAGE_ITEMS


def test_a_thread_that_fits_in_one_page_has_no_cursor():
    answer = page(items(5), 3, None)
    assert len(answer["items"]) == 5 and answer["history"] == {"start": 0, "cursor": None}


def test_an_empty_thread_is_one_empty_page():
    assert page([], 0, None) == {"items": [], "history": {"start": 0, "cursor": None}}


def test_the_cursor_is_the_last_clears_seq_and_the_start_index():
    assert page(items(70), 7, None)["history"]["cursor"] == "7:10"


def test_following_the_cursors_reads_every_item_once_in_order():
    all_items = items(2871)
    pages = every_page(all_items)
    assert len(pages) == 48  # 2871 items in pages of 60
    assert [i for p in reversed(pages) for i in p["items"]] == all_items


def test_a_page_stops_before_512_kib():
    big = items(60, "y" * 20_000)  # 60 of them are about 1.2 MB
    answer = page(big, 0, None)
    sent = sum(size(i) for i in answer["items"])
    assert sent <= PAGE_BYTES < sent + size(big[0])
    assert answer["items"] == big[-len(answer["items"]):]


def test_every_page_of_large_items_stays_under_512_kib_and_nothing_is_lost():
    big = items(200, "z" * 9_000)
    pages = every_page(big)
    assert all(sum(size(i) for i in p["items"]) <= PAGE_BYTES for p in pages)
    assert [i for p in reversed(pages) for i in p["items"]] == big


def test_an_item_larger_than_a_page_travels_alone():
    huge = {"id": "huge", "kind": "note", "level": "info", "text": "h" * (PAGE_BYTES + 10)}
    thread = items(3)[:2] + [huge] + items(3)[2:]
    thread[-1] = {**thread[-1], "id": "last"}
    pages = every_page(thread)
    assert [[i["id"] for i in p["items"]] for p in pages] == [["last"], ["huge"], ["i0", "i1"]]


def test_an_oversized_newest_item_is_a_page_of_its_own():
    huge = {"id": "huge", "kind": "note", "level": "info", "text": "h" * (PAGE_BYTES * 2)}
    answer = page(items(5) + [huge], 0, None)
    assert [i["id"] for i in answer["items"]] == ["huge"] and answer["history"]["cursor"] == "0:5"


def test_a_cursor_stays_good_while_newer_items_are_added():
    thread = items(100)
    cursor = page(thread, 0, None)["history"]["cursor"]
    thread += items(10, "newer")
    assert [i["id"] for i in page(thread, 0, cursor)["items"]] == [f"i{n}" for n in range(40)]


@pytest.mark.parametrize("cursor", ["0:10", "2:10"])
def test_a_cursor_made_before_the_last_clear_has_expired(cursor):
    with pytest.raises(ChatError) as expired:
        page(items(50), 1, cursor)
    assert expired.value.code == "history-expired"
    assert str(expired.value) == "The conversation changed. Reload its history."


@pytest.mark.parametrize("cursor", ["", "nonsense", "1", "1:", "1:x", "1:-3", "1:+3", "1: 3", "1:3.0", "1:99",
                                    "1:²", "1:٣", ":3", "1:3:4"])
def test_a_malformed_or_impossible_cursor_is_history_expired(cursor):
    with pytest.raises(ChatError) as expired:
        page(items(50), 1, cursor)
    assert expired.value.code == "history-expired"


def test_a_cursor_at_the_thread_end_is_good_and_gives_the_newest_page():
    assert [i["id"] for i in page(items(5), 1, "1:5", 2)["items"]] == ["i3", "i4"]

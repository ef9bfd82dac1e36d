"""actors.durable_record: a chat's record replayed with the log after it, as a chat loads from disk."""
from __future__ import annotations

from actors.core.thread import new_info
from actors.durable_record import replayed


def info() -> dict:
    return new_info("c1", "claude", "/tmp", None, "full-access")


def test_a_record_replayed_with_its_log_holds_every_event_and_names_the_last_and_the_last_clears_seq():
    record = {"info": info(), "items": [{"id": "a", "kind": "user", "text": "first"}], "seq": 3, "resetSeq": 1}
    log = [{"seq": 4, "event": {"type": "item", "item": {"id": "b", "kind": "assistant", "text": "he"}}},
           {"seq": 5, "event": {"type": "delta", "itemId": "b", "text": "llo"}}]
    thread, seq, reset_seq = replayed(record, log, record["info"])
    assert [(item["id"], item["text"]) for item in thread.snapshot()["items"]] == [("a", "first"), ("b", "hello")]
    assert (seq, reset_seq) == (5, 1)


def test_a_clear_in_the_log_after_the_record_leaves_only_what_came_after_it():
    record = {"info": info(), "items": [{"id": "a", "kind": "user", "text": "before"}], "seq": 2}
    log = [{"seq": 3, "event": {"type": "reset", "info": info(), "items": []}},
           {"seq": 4, "event": {"type": "item", "item": {"id": "c", "kind": "user", "text": "after"}}}]
    thread, seq, reset_seq = replayed(record, log, record["info"])
    assert [item["id"] for item in thread.snapshot()["items"]] == ["c"]
    assert (seq, reset_seq) == (4, 3)


def test_a_log_with_no_record_before_it_starts_from_seq_zero():
    log = [{"seq": 1, "event": {"type": "item", "item": {"id": "a", "kind": "user", "text": "hi"}}}]
    thread, seq, reset_seq = replayed(None, log, info())
    assert [item["id"] for item in thread.snapshot()["items"]] == ["a"] and (seq, reset_seq) == (1, 0)

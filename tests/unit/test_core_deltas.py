"""actors.core.deltas: deltas to one item within a tick go out as one event."""
from actors.core.deltas import DeltaJoiner


def delta(item_id: str, text: str) -> dict:
    return {"type": "delta", "itemId": item_id, "text": text}


def test_a_first_delta_is_held_and_asks_for_a_flush_timer():
    joiner = DeltaJoiner()
    assert joiner.add(delta("a", "x")) == ([], True)
    assert joiner.holding


def test_deltas_to_the_same_item_are_joined_into_one():
    joiner = DeltaJoiner()
    joiner.add(delta("a", "Hel"))
    assert joiner.add(delta("a", "lo")) == ([], False)  # no new timer: the first one flushes both
    assert joiner.add(delta("a", " there")) == ([], False)
    assert joiner.flush() == [delta("a", "Hello there")]


def test_a_delta_to_another_item_lets_the_held_one_out_first():
    joiner = DeltaJoiner()
    joiner.add(delta("a", "one"))
    joiner.add(delta("a", " two"))
    out, started = joiner.add(delta("b", "three"))
    assert out == [delta("a", "one two")] and started is True
    assert joiner.flush() == [delta("b", "three")]


def test_alternating_items_keep_their_order():
    joiner = DeltaJoiner()
    sent = []
    for item_id, text in [("a", "1"), ("a", "2"), ("b", "3"), ("a", "4"), ("a", "5")]:
        sent += joiner.add(delta(item_id, text))[0]
    sent += joiner.flush()
    assert sent == [delta("a", "12"), delta("b", "3"), delta("a", "45")]


def test_flush_hands_over_what_is_held_and_holds_nothing_after():
    joiner = DeltaJoiner()
    joiner.add(delta("a", "x"))
    assert joiner.flush() == [delta("a", "x")]
    assert not joiner.holding and joiner.flush() == []


def test_flush_with_nothing_held_is_empty():
    assert DeltaJoiner().flush() == []


def test_after_a_flush_the_next_delta_starts_a_new_hold():
    joiner = DeltaJoiner()
    joiner.add(delta("a", "x"))
    joiner.flush()
    assert joiner.add(delta("a", "y")) == ([], True)
    assert joiner.flush() == [delta("a", "y")]


def test_joining_never_changes_the_event_it_was_given():
    joiner = DeltaJoiner()
    first = delta("a", "x")
    joiner.add(first)
    joiner.add(delta("a", "y"))
    assert first == delta("a", "x")

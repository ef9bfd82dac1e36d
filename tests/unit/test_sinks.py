"""web.sinks: what a socket's writer reads from; pushing never blocks the actor that pushes.

The writer takes what is queued in batches (one write each); batching must never reorder,
drop or hold back a frame.
"""
import gevent

from web import sinks
from web.sinks import BATCH_BYTES, BATCH_FRAMES, SocketSink


def test_a_sink_too_far_behind_closes_with_1013_first_and_cuts_a_page_that_stopped_reading(monkeypatch):
    monkeypatch.setattr(sinks, "TOO_SLOW_GRACE", 0.05)
    cut = []
    sink = SocketSink(limit_bytes=10, abort=lambda: cut.append(True))
    sink.push(b"12345")
    assert sink.take() == ([b"12345"], None)
    sink.push_many([b"123", b"456", b"789"])
    sink.push(b"ab")  # 11 bytes waiting: too slow
    assert sink.closed and sink.queued_bytes == 0
    assert cut == []  # the close frame goes first: the writer has a grace to send it
    assert sink.take() == ([], (1013, "client too slow; reconnect for a snapshot"))
    gevent.sleep(0.1)
    assert cut == [True]  # then the connection is cut, in case the writer was stuck
    sink.push(b"x")
    assert sink.take()[0] == []


def test_one_message_larger_than_the_bound_goes_whole_to_a_page_that_keeps_up():
    sink = SocketSink(limit_bytes=10)
    sink.push(b"x" * 25)  # a CLI frame over the bound: the page gets it, it is not cut
    assert not sink.closed and sink.take() == ([b"x" * 25], None)


def test_the_three_copies_of_a_reply_larger_than_the_bound_reach_a_page_that_keeps_reading():
    # Claude Code writes a long reply's text three times back to back: its delta, its assistant
    # message, its result. The page reads them all; none of them cuts it.
    sink = SocketSink(limit_bytes=10)
    for copy in (b"d" * 25, b"a" * 25, b"r" * 25):
        sink.push(copy)
    assert not sink.closed and sink.queued_bytes == 75
    assert sink.take() == ([b"d" * 25, b"a" * 25, b"r" * 25], None)


def test_a_page_that_stopped_reading_is_still_cut_past_three_of_its_largest_messages():
    sink = SocketSink(limit_bytes=10)
    for _ in range(3):
        sink.push(b"x" * 25)
    sink.push(b"y")  # 76 bytes waiting: more than three of the largest
    assert sink.closed and sink.take() == ([], (1013, "client too slow; reconnect for a snapshot"))


def test_once_a_page_caught_up_the_plain_bound_holds_again():
    sink = SocketSink(limit_bytes=10)
    sink.push(b"x" * 25)
    assert sink.take() == ([b"x" * 25], None)  # caught up
    sink.push_many([b"123", b"456", b"789"])
    sink.push(b"ab")  # 11 small bytes waiting: too slow, the large message long gone
    assert sink.closed


def test_push_many_is_all_or_nothing_against_the_limit():
    sink = SocketSink(limit_bytes=10)
    sink.push_many([b"123", b"456"])
    assert sink.queued_bytes == 6 and not sink.closed
    sink.push_many([b"78", b"9ab"])  # 11 bytes: none of them is queued, and the client is cut
    assert sink.closed and sink.take() == ([], (1013, "client too slow; reconnect for a snapshot"))


def test_closing_a_sink_queues_one_close_after_what_waits():
    sink = SocketSink()
    sink.push(b"last words")
    sink.close(1001, "stopping")
    sink.close(1000)
    assert sink.take() == ([b"last words"], None)
    assert sink.take() == ([], (1001, "stopping"))


def test_a_batch_is_whatever_waits_up_to_its_bounds_in_order():
    sink = SocketSink()
    frames = [b"%05d" % n for n in range(BATCH_FRAMES * 2 + 7)]
    sink.push_many(frames)
    taken = []
    sizes = []
    while sink.queued_bytes:
        batch, close = sink.take()
        assert close is None
        sizes.append(len(batch))
        taken += batch
    assert taken == frames  # nothing reordered, dropped or repeated across batch boundaries
    assert sizes == [BATCH_FRAMES, BATCH_FRAMES, 7]


def test_a_batch_stops_at_its_byte_bound_and_a_larger_frame_goes_alone():
    sink = SocketSink()
    half = b"x" * (BATCH_BYTES // 2)
    huge = b"y" * (BATCH_BYTES * 2)
    sink.push_many([half, half, b"z", huge, b"after"])
    assert sink.take() == ([half, half], None)
    assert sink.take() == ([b"z"], None)
    assert sink.take() == ([huge], None)
    assert sink.take() == ([b"after"], None)


def test_take_waits_for_the_first_frame_and_returns_at_once_with_it():
    sink = SocketSink()
    got = []
    reader = gevent.spawn(lambda: got.append(sink.take()))
    gevent.sleep(0.01)
    assert not got  # nothing queued: the writer waits, it does not spin
    sink.push(b"one")
    reader.join(timeout=1)
    assert got == [([b"one"], None)]  # a lone frame is not held back waiting for a batch

"""web.sinks: what a socket's writer reads from; pushing never blocks the actor that pushes."""
from web.sinks import SocketSink


def test_a_sink_too_far_behind_closes_with_1013_and_drops_what_waits():
    cut = []
    sink = SocketSink(limit_bytes=10, abort=lambda: cut.append(True))
    sink.push(b"12345")
    sink.taken(sink.queue.get_nowait())
    sink.push(b"123456")
    sink.push(b"12345")  # 11 bytes waiting: too slow
    assert sink.closed and cut == [True]
    item = sink.queue.get_nowait()
    assert item[1] == 1013 and sink.queue.empty()
    sink.push(b"x")
    assert sink.queue.empty()


def test_closing_a_sink_queues_one_close():
    sink = SocketSink()
    sink.close(1001, "stopping")
    sink.close(1000)
    assert sink.queue.qsize() == 1 and sink.queue.get_nowait()[1:] == (1001, "stopping")

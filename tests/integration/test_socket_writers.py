"""Socket writers on a real server: batched writes keep every frame, in order, for every
socket, and one socket too slow to keep up is cut (1013) while the others go on.

The server is gevent's WSGIServer with devhostd's own handler and sinks (web/websocket.py,
web/sinks.py); a producer stands in for a chat, pushing numbered frames to every socket the
way Chat pushes events (push_many per batch of CLI lines).
"""
from __future__ import annotations

import json

import gevent
import gevent.event
import pytest
import websocket
from gevent.pywsgi import WSGIServer

from web.sinks import TOO_SLOW, SocketSink, abort, write_live
from web.websocket import DevhostHandler

LIMIT = 512 * 1024  # far below the daemon's 32 MiB, so a client that stops reading is found fast


class Broadcast:
    def __init__(self):
        self.sinks: list[SocketSink] = []
        self.joined = gevent.event.Event()

    def app(self, environ, start_response):
        ws = environ["wsgi.websocket"]
        sink = SocketSink(limit_bytes=LIMIT, abort=lambda: abort(ws))
        self.sinks.append(sink)
        self.joined.set()
        write_live(ws, sink)
        return []

    def produce(self, count: int, batch: int, size: int) -> None:
        padding = "x" * size
        for start in range(0, count, batch):
            frames = [json.dumps({"n": n, "pad": padding}).encode() for n in range(start, min(count, start + batch))]
            for sink in self.sinks:
                sink.push_many(frames)
            gevent.sleep(0)  # as a CLI pump does between reads


@pytest.fixture
def server():
    broadcast = Broadcast()
    http = WSGIServer(("127.0.0.1", 0), broadcast.app, handler_class=DevhostHandler, log=None)
    http.start()
    yield broadcast, http.server_port
    http.stop(timeout=1)


def connect(port, broadcast):
    broadcast.joined.clear()
    client = websocket.create_connection(f"ws://127.0.0.1:{port}/")
    broadcast.joined.wait(timeout=5)
    return client


def read_numbers(client, count):
    numbers = []
    while len(numbers) < count:
        numbers.append(json.loads(client.recv())["n"])
    return numbers


def test_every_socket_gets_every_frame_in_order_across_batch_boundaries(server):
    broadcast, port = server
    clients = [connect(port, broadcast) for _ in range(3)]
    count = 2000
    readers = [gevent.spawn(read_numbers, client, count) for client in clients]
    # Odd batch sizes, so producer batches and writer batches (256 frames) never line up.
    broadcast.produce(count, batch=37, size=40)
    gevent.joinall(readers, timeout=60, raise_error=True)
    for reader in readers:
        assert reader.value == list(range(count))
    for client in clients:
        client.shutdown()  # nobody reads on the server side here: no close handshake to wait for


def test_a_socket_that_stops_reading_is_cut_with_1013_while_the_others_get_everything(server):
    broadcast, port = server
    fast = [connect(port, broadcast) for _ in range(2)]
    stalled = connect(port, broadcast)  # never reads again
    count = 1500
    size = 4000  # 6 MB in all: past what the stalled socket's kernel buffers and sink can hold
    readers = [gevent.spawn(read_numbers, client, count) for client in fast]
    broadcast.produce(count, batch=50, size=size)
    gevent.joinall(readers, timeout=60, raise_error=True)
    for reader in readers:
        assert reader.value == list(range(count))
    slow_sink = broadcast.sinks[2]
    assert slow_sink.closed and slow_sink.take() == ([], TOO_SLOW)
    assert all(not sink.closed for sink in broadcast.sinks[:2])
    # Its connection is cut: what it finally reads ends, it does not hang.
    stalled.settimeout(10)
    with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError, websocket.WebSocketException)):
        while True:
            stalled.recv()
    for client in fast:
        client.shutdown()

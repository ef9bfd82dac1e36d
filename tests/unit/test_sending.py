"""web/sending.py: a write is one send when the kernel takes it whole, and never loses a byte
when it does not."""
from __future__ import annotations

import gevent
from gevent import socket

from web.sending import send_all


class CountingSocket:
    """A gevent socket that counts the calls the writer makes on it."""

    def __init__(self, real):
        self.real = real
        self.calls = []

    def send(self, data):
        self.calls.append("send")
        return self.real.send(data)

    def sendall(self, data):
        self.calls.append("sendall")
        return self.real.sendall(data)


def test_a_small_write_is_one_send_and_no_sendall():
    left, right = socket.socketpair()
    try:
        counting = CountingSocket(left)
        send_all(counting, b"HTTP/1.1 200 OK\r\n\r\nhello")
        assert counting.calls == ["send"]
        assert right.recv(100) == b"HTTP/1.1 200 OK\r\n\r\nhello"
    finally:
        left.close()
        right.close()


def test_a_write_larger_than_the_kernel_takes_at_once_arrives_whole_and_in_order():
    left, right = socket.socketpair()
    left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    data = bytes(range(256)) * 16 * 1024  # 4 MiB: far past what one send takes
    got = bytearray()

    def read():
        while len(got) < len(data):
            piece = right.recv(1 << 16)
            if not piece:
                break
            got.extend(piece)
    try:
        reader = gevent.spawn(read)
        counting = CountingSocket(left)
        send_all(counting, data)
        reader.join(timeout=30)
        assert counting.calls == ["send", "sendall"]  # the rest waited for room
        assert bytes(got) == data
    finally:
        left.close()
        right.close()


def test_a_closed_peer_is_an_oserror_as_with_sendall():
    left, right = socket.socketpair()
    right.close()
    try:
        try:
            for _ in range(100):  # the first writes may land in the buffer before the reset shows
                send_all(left, b"x" * 65536)
        except OSError:
            return
        raise AssertionError("writing to a closed peer never failed")
    finally:
        left.close()

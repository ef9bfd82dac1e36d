"""Who gets a connection (web/connections.py, web/peer_owner.py): the owner of the peer's socket
as the kernel tells it, and a waiting pool where a newcomer pushes out the longest waiting."""
from __future__ import annotations

import os
import socket

import pytest

from web import peer_owner
from web.connections import SameUser, WaitingPool


class Waiting:
    def __init__(self, name):
        self.name, self.out = name, False

    def push_out(self):
        self.out = True


def test_a_newcomer_over_the_limit_pushes_out_the_longest_waiting():
    pool = WaitingPool(limit=3)
    first, second, third, fourth = (Waiting(n) for n in "abcd")
    for connection in (first, second, third):
        pool.enter(connection)
    pool.leave(second)  # its headers came in
    pool.enter(fourth)
    assert len(pool) == 3 and not any(c.out for c in (first, second, third, fourth))
    fifth = Waiting("e")
    pool.enter(fifth)
    assert first.out and not third.out and pool.pushed_out == 1 and len(pool) == 3


@pytest.fixture(params=[(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")], ids=["ipv4", "ipv6"])
def pair(request):
    """An accepted loopback connection and the client end it came from."""
    family, address = request.param
    server = socket.socket(family)
    server.bind((address, 0))
    server.listen()
    client = socket.create_connection((address, server.getsockname()[1]))
    connection, _ = server.accept()
    yield connection, client
    for sock in (client, connection, server):
        sock.close()


@pytest.fixture
def accepted(pair):
    return pair[0]


@pytest.mark.skipif(not peer_owner.SUPPORTED, reason="the owner of a peer socket is told on Linux only")
def test_the_owner_of_a_loopback_peer_is_told_by_netlink_and_by_proc_alike(accepted):
    assert peer_owner.owner_of(accepted) == os.geteuid() == peer_owner.owner_from_proc(accepted)


@pytest.mark.skipif(not peer_owner.SUPPORTED, reason="the owner of a peer socket is told on Linux only")
def test_a_unix_peer_is_told_by_its_credentials():
    left, right = socket.socketpair()
    try:
        assert peer_owner.owner_of(left) == os.geteuid()
    finally:
        left.close()
        right.close()


@pytest.mark.skipif(not peer_owner.SUPPORTED, reason="the owner of a peer socket is told on Linux only")
def test_only_a_connection_of_the_daemons_own_user_is_admitted(accepted):
    assert SameUser().admits(accepted)
    other = SameUser(uid=os.geteuid() + 1)  # as a daemon of another user would see this connection
    assert not other.admits(accepted) and other.refused == 1



@pytest.mark.skipif(not peer_owner.SUPPORTED, reason="the owner of a peer socket is told on Linux only")
def test_a_peer_closed_before_the_lookup_has_no_owner_and_is_refused_even_by_roots_daemon(pair):
    # Its socket lingers (FIN_WAIT, then TIME_WAIT), which the kernel lists as uid 0 whoever
    # opened it: a root daemon would take another account's sent-and-closed request for its own.
    connection, client = pair
    client.sendall(b"GET / HTTP/1.1\r\n\r\n")
    client.close()
    assert peer_owner.owner_of(connection) is None and peer_owner.owner_from_proc(connection) is None
    assert not SameUser().admits(connection) and not SameUser(uid=0).admits(connection)


@pytest.mark.skipif(not peer_owner.SUPPORTED, reason="the owner of a peer socket is told on Linux only")
def test_a_peer_that_only_stopped_sending_is_still_its_owners(pair):
    connection, client = pair
    client.sendall(b"GET / HTTP/1.1\r\n\r\n")
    client.shutdown(socket.SHUT_WR)  # waits for the answer: its socket is open
    assert peer_owner.owner_of(connection) == os.geteuid() == peer_owner.owner_from_proc(connection)
    assert SameUser().admits(connection)

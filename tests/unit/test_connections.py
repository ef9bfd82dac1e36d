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
def accepted(request):
    family, address = request.param
    server = socket.socket(family)
    server.bind((address, 0))
    server.listen()
    client = socket.create_connection((address, server.getsockname()[1]))
    connection, _ = server.accept()
    yield connection
    for sock in (client, connection, server):
        sock.close()


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

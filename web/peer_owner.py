"""Which user owns the other end of a loopback TCP connection (Linux).

Loopback is shared by every account on the machine, so the origin rules hold against browsers
but not against another user's ``curl``. devhostd accepts a connection only when the peer's
socket belongs to its own user. The kernel says who owns a socket through sock_diag netlink
(what ``ss -e`` reads): one exact lookup of the peer's four-tuple, answered in microseconds
whatever the number of sockets on the machine. ``/proc/net/tcp`` holds the same owner but
must be read and parsed whole for every connection (``bench/peer_owner.py`` measures both).

``owner_of(sock)`` is the peer's uid, or None when it cannot be told (the peer is already
gone, or this is no Linux): the caller refuses what it cannot tell (``web/websocket.py``).
A peer whose process has closed its socket already is gone too, though the kernel still
lists it: a closed socket lingering in FIN_WAIT or TIME_WAIT has no inode any more and is
reported as uid 0 whoever opened it, so another account's request sent and closed while the
daemon was busy would pass for root's. Only a socket still held open (an inode) has an owner.
Where netlink itself is refused, ``owner_of`` raises ``NetlinkRefused`` and ``owner_from_proc``
is the fallback.
"""
from __future__ import annotations

import errno
import ipaddress
import socket
import struct
import sys

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x01
NLMSG_ERROR = 0x02
INET_DIAG_NOCOOKIE = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # struct nlmsghdr
# struct inet_diag_req_v2: family, protocol, ext, pad, states, then inet_diag_sockid: sport and
# dport (network order), src[4] and dst[4] (network order), if, cookie[2].
_REQUEST = struct.Struct("=BBBxI")
_SOCKID = struct.Struct("!HH16s16s")
_SOCKID_TAIL = struct.Struct("=III")
# struct inet_diag_msg: family, state, timer, retrans, sockid (48 bytes), expires, rqueue,
# wqueue, uid, inode.
_UID_OFFSET = 4 + 48 + 12
_UID_AND_INODE = struct.Struct("=II")

SUPPORTED = sys.platform.startswith("linux")


class NetlinkRefused(Exception):
    """sock_diag cannot be asked here (a locked-down sandbox): /proc/net/tcp is the fallback."""


def owner_of(sock: socket.socket) -> int | None:
    """The uid owning the socket at the other end of ``sock`` (an accepted loopback TCP
    connection), or None when it cannot be told."""
    if not SUPPORTED:
        return None
    try:
        family = sock.family
        if family == socket.AF_UNIX:
            return _unix_peer_uid(sock)
        local, peer = sock.getsockname(), sock.getpeername()
    except OSError:
        return None
    if family not in (socket.AF_INET, socket.AF_INET6):
        return None
    # The peer's socket, as the kernel keys it: its own address first.
    return _diag_uid(family, peer[0], peer[1], local[0], local[1])


def _unix_peer_uid(sock: socket.socket) -> int | None:
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return struct.unpack("3i", credentials)[1]  # pid, uid, gid


def _packed(family: int, address: str) -> bytes:
    packed = ipaddress.ip_address(address.split("%", 1)[0]).packed
    return packed.ljust(16, b"\0") if family == socket.AF_INET else packed


def _diag_uid(family: int, src: str, sport: int, dst: str, dport: int) -> int | None:
    request = (_REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0xFFFFFFFF)
               + _SOCKID.pack(sport, dport, _packed(family, src), _packed(family, dst))
               + _SOCKID_TAIL.pack(0, INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE))
    message = _HEADER.pack(_HEADER.size + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0) + request
    # The stdlib's own socket, not gevent's: the kernel answers a netlink request within the
    # call, so there is nothing to wait for cooperatively.
    import gevent.monkey
    real_socket = gevent.monkey.get_original("socket", "socket")
    try:
        with real_socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as link:
            link.settimeout(1.0)
            link.send(message)
            answer = link.recv(8192)
    except OSError as exc:
        raise NetlinkRefused(str(exc)) from None
    if len(answer) < _HEADER.size:
        return None
    length, kind, _, _, _ = _HEADER.unpack_from(answer)
    if kind == NLMSG_ERROR:
        (code,) = struct.unpack_from("=i", answer, _HEADER.size) if len(answer) >= _HEADER.size + 4 else (0,)
        if -code != errno.ENOENT:
            raise NetlinkRefused(f"sock_diag answered {errno.errorcode.get(-code, -code)}")
        return None  # no such socket (the peer is gone already)
    if len(answer) < _HEADER.size + _UID_OFFSET + _UID_AND_INODE.size:
        return None
    uid, inode = _UID_AND_INODE.unpack_from(answer, _HEADER.size + _UID_OFFSET)
    return uid if inode else None  # no inode: closed by its process, its uid no longer told


def owner_from_proc(sock: socket.socket) -> int | None:
    """The same answer read from /proc/net/tcp{,6}: every socket on the machine, parsed. Kept for
    the benchmark's comparison and as the fallback where netlink is not allowed."""
    try:
        family = sock.family
        local, peer = sock.getsockname(), sock.getpeername()
    except OSError:
        return None
    table = "/proc/net/tcp" if family == socket.AF_INET else "/proc/net/tcp6"
    want_local, want_remote = _proc_address(peer[0], peer[1]), _proc_address(local[0], local[1])
    try:
        with open(table, encoding="ascii") as handle:
            next(handle, None)
            for line in handle:
                fields = line.split()
                if len(fields) > 9 and fields[1] == want_local and fields[2] == want_remote:
                    return int(fields[7]) if fields[9] != "0" else None  # inode 0: closed, as above
    except OSError:
        return None
    return None


def _proc_address(address: str, port: int) -> str:
    """An address as /proc/net/tcp prints it: each 32-bit word of the network-order address
    read as a native integer, in hex, then the port."""
    packed = ipaddress.ip_address(address.split("%", 1)[0]).packed
    words = (int.from_bytes(packed[i:i + 4], sys.byteorder) for i in range(0, len(packed), 4))
    return "".join(f"{word:08X}" for word in words) + f":{port:04X}"

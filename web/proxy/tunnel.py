"""The app's own WebSocket (its hot reload), tunnelled to the upstream byte for byte.

The upgrade request goes to the upstream with devhostd's X-Forwarded-* headers
(web/proxy/heads.py); a 101 opens the tunnel, any other answer is passed on and ends the
connection. With reload holds (web/reload_hold.py) the upstream's side is cut into frames, so
they can be held while the person holds reloads for the hostname.
"""
from __future__ import annotations

import json
import re
import socket

import gevent

from web.proxy.heads import status_code, upgrade_request
from web.proxy.upstream import CHUNK, CONNECT_TIMEOUT, RESPONSE_TIMEOUT, Upstream
from web.reload_hold import FrameSplitter

HEAD_LIMIT = 64 * 1024
REFUSAL_IDLE = 10.0  # seconds a refusal's body may stop coming before the connection ends


def tunnel_websocket(handler, upstream: Upstream, holds=None, hostname: str | None = None) -> None:
    """Relays an upgrade request and then both directions, byte for byte, until one side closes.

    ``handler`` is the gevent-websocket handler of the browser's connection: its ``rfile``
    may already hold bytes the browser sent after the request, so reads go through it.
    With ``holds`` (web/reload_hold.py), what the upstream sends is cut into frames, so it can
    be held while the person holds reloads for ``hostname``; the bytes stay the upstream's.
    """
    try:
        remote = upstream.open_socket(CONNECT_TIMEOUT)
        remote.settimeout(None)
    except OSError as exc:
        answer(handler, "502 Bad Gateway",
               f"devhostd could not reach the upstream {upstream.origin}: {exc.strerror or exc}")
        return
    try:
        remote.sendall(upgrade_request(handler.environ, getattr(handler, "headers", None), upstream))
    except OSError:
        remote.close()  # the upstream hung up at once: the browser sees its socket close
        handler.close_connection = True
        return
    try:
        head, rest = _read_head(remote)
    except (OSError, ValueError) as exc:
        remote.close()
        answer(handler, "502 Bad Gateway", f"devhostd got no WebSocket handshake from the upstream "
                                           f"{upstream.origin}: {exc}")
        return
    client = handler.socket
    if status_code(head) != 101:
        # The upstream refused the upgrade: its answer goes to the browser, and the connection
        # ends with it (nothing the browser sends next may reach the upstream unframed).
        try:
            _relay_refusal(remote, client, head, rest)
        finally:
            remote.close()
            handler.close_connection = True
        return
    tunnel = holds.open(hostname, client) if holds is not None else None
    try:
        try:
            client.sendall(head if tunnel is not None else head + rest)
        except OSError:
            return  # the browser went away meanwhile
        to_remote = gevent.spawn(_pump, handler.rfile.read1, remote)
        to_client = gevent.spawn(_pump, remote.recv, client) if tunnel is None else \
            gevent.spawn(_pump_frames, remote.recv, client, rest, holds, hostname, tunnel)
        gevent.wait([to_remote, to_client], count=1)
        # One side is done: give the other a moment to pass on its close, then cut both.
        gevent.wait([to_remote, to_client], timeout=5)
        gevent.killall([to_remote, to_client], block=False)
    finally:
        if tunnel is not None:
            holds.close(hostname, tunnel)
        remote.close()
        handler.close_connection = True


def _read_head(remote) -> tuple[bytes, bytes]:
    """The upstream's status line and headers, and whatever came after them."""
    remote.settimeout(RESPONSE_TIMEOUT)
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            raise ValueError("its answer's headers are too long")
        more = remote.recv(CHUNK)
        if not more:
            raise ValueError("it closed the connection")
        data += more
    remote.settimeout(None)
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _relay_refusal(remote, client, head: bytes, rest: bytes) -> None:
    """Passes on a non-101 answer: its Content-Length worth of body, else until it ends or idles."""
    match = re.search(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n", head, re.I)
    remaining = int(match.group(1)) - len(rest) if match else None
    try:
        client.sendall(head + (rest if remaining is None or remaining >= 0 else rest[:int(match.group(1))]))
        remote.settimeout(REFUSAL_IDLE)
        while remaining is None or remaining > 0:
            data = remote.recv(CHUNK if remaining is None else min(CHUNK, remaining))
            if not data:
                break
            client.sendall(data)
            if remaining is not None:
                remaining -= len(data)
    except OSError:
        pass


def _pump(read, destination) -> None:
    try:
        while True:
            data = read(CHUNK)
            if not data:
                break
            destination.sendall(data)
    except (OSError, ValueError):
        pass  # a side went away (ValueError: a closed file); the tunnel ends either way
    try:
        destination.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _pump_frames(read, client, first: bytes, holds, hostname: str, tunnel) -> None:
    """The upstream's side of a tunnel whose frames may be held (web/reload_hold.py)."""
    splitter = FrameSplitter()
    try:
        data = first
        while True:
            if data:
                holds.relay(hostname, tunnel, splitter.feed(data))
            data = read(CHUNK)
            if not data:
                break
    except (OSError, ValueError):
        pass  # a side went away; the tunnel ends either way
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def answer(handler, status: str, message: str) -> None:
    """A plain HTTP answer to an upgrade request that will not be tunnelled."""
    body = json.dumps({"error": message}).encode()
    handler.start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                    ("Cache-Control", "no-store")])
    handler.result = [body]
    handler.process_result()
    handler.close_connection = True

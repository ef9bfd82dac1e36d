"""web.reload_hold: a dev server's frames cut by their headers, held while a person holds
reloads, and sent on in order, byte for byte, when the hold ends; bounded, never dropped."""
from __future__ import annotations

import gevent

from web.reload_hold import BIG_FRAME, FrameSplitter, ReloadHolds


def frame(payload: bytes, opcode: int = 1, fin: bool = True) -> bytes:
    """A server's (unmasked) frame."""
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        head = bytes([first, n])
    elif n < 65536:
        head = bytes([first, 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([first, 127]) + n.to_bytes(8, "big")
    return head + payload


class Page:
    """The browser's side of a tunnel: what it was sent, in order."""

    def __init__(self):
        self.received = b""

    def sendall(self, data: bytes) -> None:
        self.received += data


def test_frames_are_cut_whole_however_the_bytes_arrive():
    stream = frame(b"hello") + frame(b"x" * 300) + frame(b"", opcode=9) + frame(b"y" * 70000, opcode=2)
    splitter = FrameSplitter()
    pieces = []
    for at in range(0, len(stream), 7):
        pieces += splitter.feed(stream[at:at + 7])
    assert [(len(p[0]), p[1], p[2], p[3]) for p in pieces] == [(7, 1, True, True), (304, 1, True, True),
                                                                (2, 9, True, True), (70010, 2, True, True)]
    assert b"".join(p[0] for p in pieces) == stream


def test_a_big_frame_streams_through_as_it_comes():
    big = frame(b"z" * (BIG_FRAME + 10), opcode=2)
    splitter = FrameSplitter()
    first = splitter.feed(big[:4096])
    assert first and not first[0][3] and b"".join(p[0] for p in first) == big[:4096]
    rest = splitter.feed(big[4096:] + frame(b"after"))
    assert b"".join(p[0] for p in first + rest) == big + frame(b"after")
    assert rest[-1] == (frame(b"after"), 1, True, True)


def test_held_frames_go_out_in_order_when_applied_and_pings_are_never_held():
    holds, page = ReloadHolds(), Page()
    tunnel = holds.open("app.localhost", page)
    holds.hold("app.localhost", True)
    update, reload_, ping = frame(b'{"type":"update"}'), frame(b'{"type":"full-reload"}'), frame(b"", opcode=9)
    holds.relay("app.localhost", tunnel, FrameSplitter().feed(update + ping + reload_))
    assert page.received == ping
    assert holds.state("app.localhost") == {"held": True, "updates": 2, "bytes": len(update + reload_), "ended": None}
    assert holds.apply("app.localhost")["updates"] == 0
    assert page.received == ping + update + reload_
    holds.relay("app.localhost", tunnel, FrameSplitter().feed(update))  # still held after apply
    assert page.received == ping + update + reload_
    holds.hold("app.localhost", False)
    assert page.received == ping + update + reload_ + update


def test_a_handshake_and_a_keepalive_pass_while_held_and_never_count_as_updates():
    """A page loaded while reloads are held gets Vite's {"type":"connected"} at once (its client
    would stay "connecting…" without it); only a real change counts as an update waiting."""
    holds, page = ReloadHolds(), Page()
    holds.hold("app.localhost", True)
    tunnel = holds.open("app.localhost", page)
    connected, ping, update = frame(b'{"type":"connected"}'), frame(b'{"type":"ping"}'), frame(b'{"type":"update"}')
    holds.relay("app.localhost", tunnel, FrameSplitter().feed(connected + ping))
    assert page.received == connected + ping
    assert holds.state("app.localhost")["updates"] == 0
    holds.relay("app.localhost", tunnel, FrameSplitter().feed(update + ping))
    # Behind a held update a keepalive waits too (order is kept), but it is still no update.
    assert page.received == connected + ping
    assert holds.state("app.localhost")["updates"] == 1
    holds.apply("app.localhost")
    assert page.received == connected + ping + update + ping


def test_a_message_that_is_not_a_known_handshake_is_held_as_an_update():
    holds, page = ReloadHolds(), Page()
    holds.hold("app.localhost", True)
    tunnel = holds.open("app.localhost", page)
    padded = b'{"type":"connected"' + b" " * 300 + b"}"  # past what is read: an update
    for payload in (b'{"type":"custom","event":"x"}', b"not json", b'["connected"]', padded):
        holds.relay("app.localhost", tunnel, FrameSplitter().feed(frame(payload)))
    assert page.received == b""
    assert holds.state("app.localhost")["updates"] == 4


def test_past_its_size_the_hold_ends_by_itself_and_sends_everything_in_order():
    holds, page = ReloadHolds(max_bytes=100), Page()
    tunnel = holds.open("app.localhost", page)
    holds.hold("app.localhost", True)
    frames = [frame(bytes([65 + n]) * 40) for n in range(4)]
    for f in frames:
        holds.relay("app.localhost", tunnel, [(f, 1, True, True)])
    gevent.sleep(0)  # the release runs in a greenlet of its own
    assert page.received == b"".join(frames)
    assert holds.state("app.localhost")["held"] is False and holds.state("app.localhost")["ended"] == "size"


def test_past_its_time_the_hold_ends_by_itself():
    holds, page = ReloadHolds(max_seconds=0.05), Page()
    tunnel = holds.open("app.localhost", page)
    holds.hold("app.localhost", True)
    holds.relay("app.localhost", tunnel, [(frame(b"late"), 1, True, True)])
    gevent.sleep(0.2)
    assert page.received == frame(b"late") and holds.state("app.localhost")["ended"] == "time"


def test_a_hold_is_per_hostname_and_a_closed_page_keeps_nothing():
    holds, app, other = ReloadHolds(), Page(), Page()
    on_app, on_other = holds.open("app.localhost", app), holds.open("other.localhost", other)
    holds.hold("app.localhost", True)
    holds.relay("app.localhost", on_app, [(frame(b"a"), 1, True, True)])
    holds.relay("other.localhost", on_other, [(frame(b"b"), 1, True, True)])
    assert (app.received, other.received) == (b"", frame(b"b"))
    holds.close("app.localhost", on_app)
    assert holds.state("app.localhost")["updates"] == 0

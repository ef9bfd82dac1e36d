"""WebSocket plumbing on top of gevent-websocket.

- ``DevhostHandler`` refuses bad upgrades with a plain HTTP status *before* switching
  protocols (400 / 403 / 404 with a JSON message), using a check the app provides.
- ``BoundedWebSocket`` caps the size of one incoming message (a page cannot make the daemon
  buffer without limit), validates UTF-8 at C speed (the library's validator is pure Python
  and would block the hub on an 8 MiB frame), and sends pre-encoded text, optionally as
  fragments so a long snapshot streams from disk without being built in memory.
"""
from __future__ import annotations

import http.client
import json
import socket
import struct
import time
from urllib.parse import urlsplit

import gevent.lock
from gevent.pywsgi import OldMessage

from geventwebsocket.exceptions import ProtocolError, WebSocketError
from geventwebsocket.handler import WebSocketHandler
from geventwebsocket.websocket import Header, Stream, WebSocket

from actors.chatlog import daemon_log
from web.connections import SameUser, WaitingPool, shut
from web.header_parse import IndexedMessage
from web.sending import send_all

MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # past the 8 MiB send limit, so oversize sends get a clear answer
FRAGMENT_BYTES = 256 * 1024
DRAIN_LIMIT_BYTES = 64 * 1024 * 1024  # past this an oversized frame just drops the connection


# RFC 6455 §7.4: the codes an endpoint may send (1004-1006 and 1015 are reserved).
VALID_CLOSE_CODES = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014})


class MessageTooBig(Exception):
    pass


class AbortResponse(Exception):
    """Raised by a response body that cannot be completed (say an upstream that broke off):
    the connection is cut without the body's proper end, so the browser sees it incomplete."""


class BoundedWebSocket(WebSocket):
    __slots__ = ("_write_lock",)
    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self, environ, stream, handler):
        super().__init__(environ, stream, handler)
        self._write_lock = gevent.lock.RLock()

    def read_message(self):
        opcode = None
        message = bytearray()
        while True:
            header, payload = self.read_frame_bounded(len(message))
            f_opcode = header.opcode
            if f_opcode in (self.OPCODE_TEXT, self.OPCODE_BINARY):
                if opcode:
                    raise ProtocolError("a new message started inside a fragmented one")
                opcode = f_opcode
            elif f_opcode == self.OPCODE_CONTINUATION:
                if not opcode:
                    raise ProtocolError("continuation frame without a message")
            elif f_opcode == self.OPCODE_PING:
                self.handle_ping(header, payload)
                continue
            elif f_opcode == self.OPCODE_PONG:
                continue
            elif f_opcode == self.OPCODE_CLOSE:
                self.handle_close(header, payload)
                return None
            else:
                raise ProtocolError(f"unexpected opcode {f_opcode!r}")
            message += payload
            if header.fin:
                break
        if opcode == self.OPCODE_TEXT:
            return bytes(message).decode("utf-8")  # UnicodeDecodeError -> close 1007 in receive()
        return bytes(message)

    def read_frame_bounded(self, so_far: int):
        header = Header.decode_header(self.stream)
        if header.flags:
            raise ProtocolError("reserved bits set")
        if not header.mask:
            raise ProtocolError("a client's frames must be masked (RFC 6455 §5.1)")
        if so_far + header.length > self.max_message_bytes:
            if header.length <= DRAIN_LIMIT_BYTES:
                # Read past it so the close frame reaches a client that is still sending.
                remaining = header.length
                while remaining:
                    chunk = self.raw_read(min(remaining, 1 << 20))
                    if not chunk:
                        break
                    remaining -= len(chunk)
            raise MessageTooBig()
        payload = self.raw_read(header.length) if header.length else b""
        if len(payload) != header.length:
            raise WebSocketError("unexpected EOF reading a frame")
        if header.mask:
            payload = unmask(payload, header.mask)
        return header, payload

    def handle_close(self, header, payload):
        """A close frame whose code or reason is not valid is a protocol error (1002), never echoed."""
        if len(payload) == 1:
            raise ProtocolError("a close frame's payload is a 2-byte code and a reason, not 1 byte")
        if len(payload) >= 2:
            code = int.from_bytes(payload[:2], "big")
            if code not in VALID_CLOSE_CODES and not 3000 <= code <= 4999:
                raise ProtocolError(f"invalid close code {code}")
            try:
                payload[2:].decode("utf-8")
            except UnicodeError:
                raise ProtocolError("a close frame's reason must be UTF-8") from None
        super().handle_close(header, payload)

    def receive(self):
        """The next message, None when the socket is closed; MessageTooBig propagates."""
        if self.closed:
            return None
        try:
            return self.read_message()
        except MessageTooBig:
            raise
        except UnicodeError:
            self.close(1007)
        except ProtocolError:
            self.close(1002)
        except (WebSocketError, OSError):
            self.closed = True
        return None

    def _locked_write(self, data: bytes) -> None:
        # The reader greenlet answers pings and close frames while the writer streams: one at a time.
        with self._write_lock:
            if self.raw_write is None:
                raise WebSocketError("socket closed")
            self.raw_write(data)

    def send_frame(self, message, opcode):
        self._locked_write(Header.encode_header(True, opcode, b"", len(message), 0) + bytes(message))

    def send_text(self, data: bytes) -> None:
        self._locked_write(text_frame_header(len(data)) + data)

    def send_texts(self, messages) -> None:
        """Sends several text messages with one write (each its own WebSocket frame)."""
        pieces = []
        for data in messages:
            pieces.append(text_frame_header(len(data)))
            pieces.append(data)
        self._locked_write(b"".join(pieces))

    def send_fragments(self, pieces) -> None:
        """Sends one text message made of byte pieces, in fragments of about FRAGMENT_BYTES."""
        opcode = self.OPCODE_TEXT
        buffer = bytearray()
        for piece in pieces:
            buffer += piece
            if len(buffer) >= FRAGMENT_BYTES:
                self._locked_write(Header.encode_header(False, opcode, b"", len(buffer), 0) + bytes(buffer))
                opcode = self.OPCODE_CONTINUATION
                buffer.clear()
        self._locked_write(Header.encode_header(True, opcode, b"", len(buffer), 0) + bytes(buffer))

    def close(self, code=1000, message=b""):
        if self.closed:
            return
        try:
            payload = code.to_bytes(2, "big") + (message.encode() if isinstance(message, str) else message or b"")
            self._locked_write(Header.encode_header(True, self.OPCODE_CLOSE, b"", len(payload), 0) + payload)
        except Exception:  # noqa: BLE001 - the peer may be gone already
            pass
        finally:
            self.closed = True


class FramingError(ValueError):
    """A request whose framing a server behind devhostd could read differently (RFC 9112 §6.3)."""


class RequestHeaders(IndexedMessage, OldMessage):
    """pywsgi's message class for a request's headers, its lookups by name through an index
    (web/header_parse.py)."""


def request_headers_factory(fp, *args):
    """pywsgi's ``headers_factory``, with RequestHeaders."""
    try:
        return http.client.parse_headers(fp, _class=RequestHeaders)  # looked up now: header_parse.install()
    except http.client.LineTooLong:
        message = RequestHeaders()
        message.status = "Line too long"
        return message


def checked_headers(fp, *args):
    """A request's headers as pywsgi parses them, refused (a 400) when they could be framed two
    ways: folded lines (obs-fold), Content-Length given twice with different values or beside
    Transfer-Encoding, or a Content-Length that is not a number."""
    headers = request_headers_factory(fp, *args)
    # The stored values, not items(): those pass each through the email policy, which changes
    # none of a header block decoded as latin-1 (it has no surrogates to wrap), at a cost per header.
    for name, value in headers._headers:
        if "\n" in value or "\r" in value:
            raise FramingError(f"header {name} is folded over lines (obs-fold): send it on one line")
    lengths = {value.strip() for value in headers.get_all("Content-Length") or []}
    if len(lengths) > 1:
        raise FramingError("Content-Length is given twice with different values")
    if lengths and headers.get("Transfer-Encoding") is not None:
        raise FramingError("a request may not have both Transfer-Encoding and Content-Length")
    if lengths and not next(iter(lengths)).isdigit():
        raise FramingError("Content-Length must be a number")
    return headers


class ClientErrors:
    """Malformed requests answered by pywsgi itself: one info line per client address at most
    every RATE seconds (a client cannot flood the log, nor forge a `bug:` line)."""

    RATE = 10.0

    def __init__(self):
        self._last: dict[str, float] = {}

    def note(self, address: str, what: str) -> None:
        now = time.monotonic()
        if now - self._last.get(address, -self.RATE) >= self.RATE:
            self._last[address] = now
            if len(self._last) > 4096:
                self._last.clear()
            daemon_log(f"refused a malformed request from {address}: {what[:200]}")


CLIENT_ERRORS = ClientErrors()


HEADER_TIMEOUT = 10.0  # seconds a client has to send a request's line and headers (and, to
# devhostd's own routes, each piece of its body); a kept-alive connection idle this long is closed


WAITING = WaitingPool()  # connections waiting to send a request's headers (web/connections.py)
SAME_USER = SameUser()


class DevhostHandler(WebSocketHandler):
    """Runs the app's pre-upgrade check; only a request that passes is switched to WebSocket."""

    MessageClass = staticmethod(checked_headers)

    pushed_out = False

    def handle_one_request(self):
        # A half-sent request (or an idle kept-alive connection) is let go after HEADER_TIMEOUT,
        # and waits in the pool, where a newcomer pushes out the longest waiting: hundreds of
        # slow connections of one process cannot keep anybody else out.
        if self.socket is not None:
            self.socket.settimeout(HEADER_TIMEOUT)
            WAITING.enter(self)
        try:
            result = super().handle_one_request()
        finally:
            WAITING.leave(self)
        return None if self.pushed_out else result  # nothing more is said on a connection let go

    def push_out(self) -> None:
        self.pushed_out = True
        shut(self.socket)

    def _headers(self):
        """pywsgi's (HTTP_NAME, value) pairs for the environ, from the parsed pairs themselves:
        pywsgi formats each header as a line and splits it again. A name starting with a blank
        (a line pywsgi would take for a continuation) goes pywsgi's own way."""
        pairs = self.headers._headers
        if any(name[:1] in " \t" for name, _ in pairs):
            yield from super()._headers()
            return
        for name, value in pairs:
            if "_" in name:
                continue  # pywsgi drops a name with an underscore (it would pass for a dash)
            key = name.replace("-", "_").upper()
            if key != "CONTENT_TYPE" and key != "CONTENT_LENGTH":
                yield "HTTP_" + key, value.strip()

    def read_request(self, raw_requestline):
        try:
            return super().read_request(raw_requestline)
        finally:
            WAITING.leave(self)  # its headers are in: no longer waiting

    def _handle_client_error(self, ex):
        if self.pushed_out:
            return None  # let go for a newcomer (web/connections.py): neither a refusal nor a log line
        address = self.client_address[0] if isinstance(self.client_address, tuple) else str(self.client_address)
        CLIENT_ERRORS.note(address, str(ex) or type(ex).__name__)
        if isinstance(ex, (TimeoutError, socket.timeout)):
            return ("408", _client_error("408 Request Timeout", f"the request's headers did not come within "
                                                                f"{HEADER_TIMEOUT:.0f} s"))
        if "header" in str(ex).lower() and ("too many" in str(ex).lower() or "more than" in str(ex).lower()
                                            or "too long" in str(ex).lower()):
            return ("431", _client_error("431 Request Header Fields Too Large", str(ex)))
        return ("400", _client_error("400 Bad Request", str(ex) or "the request could not be read"))

    def handle(self):
        if not SAME_USER.admits(self.socket):
            return None  # another account on this machine: closed before a byte is read
        no_delay(self.socket)  # once per connection, before its first request is read
        return super().handle()

    def run_application(self):
        path = self.environ.get("PATH_INFO", "")
        if "://" in path and not path.startswith("/"):
            # An absolute-form request line ("GET http://host/__devhost__/x"): routing, the
            # /__devhost__/ prefix included, goes by its path alone, as for any other request.
            self.environ["PATH_INFO"] = urlsplit(path).path or "/"
        if _is_upgrade(self.environ) or not self.environ.get("PATH_INFO", "").startswith("/__devhost__/"):
            # Sockets live long and proxied answers stream: no timeout on them (the proxy bounds
            # its own reads); devhostd's own small requests keep it, for their bodies.
            self.socket.settimeout(None)
        raw_upgrade = getattr(self.application, "raw_upgrade", None)
        if raw_upgrade is not None and _is_upgrade(self.environ) \
                and not self.environ.get("PATH_INFO", "").startswith("/__devhost__/"):
            return raw_upgrade(self)  # e.g. the app's own hot-reload socket, passed through
        self.environ["devhost.client_socket"] = self.socket  # lets a proxied body notice the browser leave
        if not _is_upgrade(self.environ) and self.wsgi_input is not None:
            # pywsgi hands the raw socket over as wsgi.input for any "Connection: upgrade";
            # a request that is no WebSocket upgrade reads its body bounded, as any other.
            self.environ["wsgi.input"] = self.wsgi_input
            self.environ["wsgi.input_terminated"] = True
        check = getattr(self.application, "websocket_precheck", None)
        if _is_upgrade(self.environ) and check is not None:
            refusal = check(self.environ)
            if refusal is not None:
                status, message = refusal
                body = json.dumps({"error": message}).encode()
                self.start_response(status, [("Content-Type", "application/json"),
                                             ("Content-Length", str(len(body))),
                                             ("Cache-Control", "no-store")])
                self.result = [body]
                self.process_result()
                return None
        return super().run_application()

    def handle_one_response(self):
        # The app may answer a request itself, without the WSGI round: a page's module through the
        # proxy (web/proxy/direct.py). A bug there is logged and ends the connection, never the server.
        direct = getattr(self.application, "direct", None)
        if direct is not None:
            try:
                if direct(self):
                    return
            except Exception as exc:  # noqa: BLE001
                daemon_log(f"bug: direct answer: {exc!r}")
                self.close_connection = True
                return
        super().handle_one_response()

    def upgrade_connection(self):
        result = super().upgrade_connection()
        plain = getattr(self, "websocket", None)
        if plain is not None:
            plain.closed = True  # retired unused; its destructor must not send a close frame
            self.websocket = BoundedWebSocket(self.environ, Stream(self), self)
            self.environ["wsgi.websocket"] = self.websocket
        return result

    def process_result(self):
        try:
            super().process_result()
        except AbortResponse:
            # No last chunk, no more requests on this connection: the client must not take
            # what it got for the whole body. Headers not sent yet: nothing is sent at all.
            self.response_use_chunked = False
            self.close_connection = True

    def finalize_headers(self):
        super().finalize_headers()
        if self.command == "HEAD" and self.response_use_chunked:
            # An answer to HEAD has no body, so no chunked framing (not even its last chunk).
            self.response_use_chunked = False
            self.response_headers = [(name, value) for name, value in self.response_headers
                                     if name.lower() != b"transfer-encoding"]

    # pywsgi sends an answer's head and its first piece of body with two writes; with Nagle off
    # (no_delay) each is a packet and a wake-up of the browser's network thread of its own, so a
    # small answer (a page's module through the proxy) costs two where one does. They are
    # gathered into one write, up to this many bytes of body (past it pywsgi's own way, to copy
    # no large piece).
    GATHER_LIMIT = 64 * 1024
    _gathering = None  # while the head is written: what is to go out in one write

    def _write_with_headers(self, data):
        self._gathering = bytearray()
        try:
            super()._write_with_headers(data)
        finally:
            gathered, self._gathering = self._gathering, None
        if gathered:
            self._sendall(gathered)

    def _sendall(self, data):
        gathering = self._gathering
        if gathering is None:
            return self._send_now(data)
        if len(gathering) + len(data) <= self.GATHER_LIMIT + 16 * 1024:  # the head's room besides
            gathering += data
            return None
        self._gathering = None  # too big to copy: the head goes out, then the piece as it is
        try:
            if gathering:
                self._send_now(gathering)
            return self._send_now(data)
        finally:
            self._gathering = bytearray()

    def _send_now(self, data):
        # pywsgi's own _sendall, with one send where the kernel takes it all (web/sending.py)
        try:
            send_all(self.socket, data)
        except OSError as ex:
            self.status = f"socket error: {ex}"
            if self.code > 0:
                self.code = -self.code
            raise
        self.response_length += len(data)

    def _write(self, data, *args, **kwargs):
        if self.command == "HEAD":
            return None  # never a body on HEAD, whatever the application returned
        return super()._write(data, *args, **kwargs)

    def log_request(self):
        pass  # the daemon logs what matters itself; access lines would drown the chat log


UNMASK_PIECE = 1 << 20  # a multiple of 4: every piece starts at the mask's first byte
_XOR_TABLES = [bytes(b ^ k for b in range(256)) for k in range(256)]


def unmask(payload: bytes, mask: bytes) -> bytes:
    """A client frame's payload unmasked (RFC 6455 §5.3): each of the mask's four byte lanes
    with one ``bytes.translate``, a MiB at a time with other greenlets let run between
    (geventwebsocket's byte-by-byte loop holds the hub for seconds on a 16 MiB frame)."""
    out = bytearray(payload)
    for start in range(0, len(payload), UNMASK_PIECE):
        piece = payload[start:start + UNMASK_PIECE]
        for lane in range(4):
            out[start + lane:start + len(piece):4] = piece[lane::4].translate(_XOR_TABLES[mask[lane]])
        if len(piece) == UNMASK_PIECE:
            gevent.sleep(0)
    return bytes(out)


def _client_error(status: str, message: str) -> bytes:
    body = json.dumps({"error": f"malformed request: {message[:300]}"}).encode()
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode("latin-1") + body


def text_frame_header(length: int) -> bytes:
    """The header of one unmasked, final text frame (a server's frames are never masked)."""
    if length < 126:
        return bytes((0x81, length))
    if length <= 0xFFFF:
        return struct.pack("!BBH", 0x81, 126, length)
    return struct.pack("!BBQ", 0x81, 127, length)


def no_delay(sock) -> None:
    """Turns Nagle's algorithm off: otherwise every small write after the first on a kept-alive
    connection waits for the peer's delayed ACK (about 40 ms on Linux)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        pass  # not TCP (a Unix socket in a test), or already closed


def _is_upgrade(environ) -> bool:
    return environ.get("HTTP_UPGRADE", "").lower() == "websocket"

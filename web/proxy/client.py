"""A lean HTTP/1.1 client for the proxy's upstream connections: one send of the request's head,
the answer's head read into a buffer and parsed by splitting, its body framed by
Content-Length, chunked or the connection's end.

``http.client`` did this before at about a third of the daemon's CPU per proxied module (a
``putheader`` per header, a buffered file and a readline per header line per answer, the
email-based message for every header lookup). What it checked is checked here too: the request
line and header values it refused are refused (``ValueError``: the caller's 400), and the
errors it raised for a broken answer are raised as its own classes (``RemoteDisconnected``,
``BadStatusLine``, ``IncompleteRead``, ``LineTooLong``, all ``HTTPException`` or ``OSError``:
the caller's 502, or its retry of a stale pooled connection).
"""
from __future__ import annotations

import re
from http.client import BadStatusLine, HTTPException, IncompleteRead, LineTooLong, RemoteDisconnected

from web.sending import send_all

CHUNK = 64 * 1024
MAX_LINE = 65536  # http.client's _MAXLINE
MAX_HEADERS = 100  # http.client's _MAXHEADERS
MAX_HEAD = 1 << 20  # an answer's head (interim ones included) longer than this is no dev server's
_METHODS_EXPECTING_BODY = frozenset({"PATCH", "POST", "PUT"})
# http.client's rules for what it sends: a method without control characters, a target without
# them or spaces, names that are tokens, values whose line breaks are only obsolete folding.
_BAD_METHOD = re.compile(r"[\x00-\x1f]")
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")
_NAMES = re.compile(r"[^:\s][^:\r\n]*(?:\n[^:\s][^:\r\n]*)*")  # names joined by "\n"
_BAD_VALUE = re.compile(r"\n(?![ \t])|\r(?![ \t\n])")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class UpstreamConnection:
    """One connection to an upstream; ``sock`` is None until ``connect`` and after ``close``
    (the pool's test of a connection it may give out again)."""

    def __init__(self, upstream, timeout: float):
        self.upstream = upstream
        self.timeout = timeout
        self.sock = None
        self._buffer = b""  # read from the socket, not yet handed out

    def connect(self) -> None:
        self.sock = self.upstream.open_socket(self.timeout)  # TCP_NODELAY on, TLS for https

    def close(self) -> None:
        sock, self.sock = self.sock, None
        self._buffer = b""
        if sock is not None:
            sock.close()

    # ---- the request ----

    def request(self, method: str, target: str, headers: list[tuple[str, str]], body=None) -> None:
        """Sends the request; ``body`` an iterable of bytes (sent chunked unless the headers
        carry a Content-Length) or None. ValueError for what http.client would not send."""
        if _BAD_METHOD.search(method):
            raise ValueError(f"method can't contain control characters. {method!r}")
        if _BAD_TARGET.search(target):
            raise ValueError(f"URL can't contain control characters. {target!r}")
        names = set()
        lines = [f"{method} {target} HTTP/1.1"]
        for name, value in headers:
            if "\r" in value or "\n" in value:
                if _BAD_VALUE.search(value):
                    raise ValueError(f"Invalid header value {value!r}")
            names.add(name.lower())
            lines.append(f"{name}: {value}")
        if headers and not _NAMES.fullmatch("\n".join(name for name, _ in headers)):
            bad = next(name for name, _ in headers if not _NAMES.fullmatch(name))
            raise ValueError(f"Invalid header name {bad!r}")
        if "host" not in names:
            lines.append(f"Host: {self._host_header()}")
        if "accept-encoding" not in names:
            lines.append("Accept-Encoding: identity")  # as http.client: no encoding asked for, none wanted
        chunked = False
        if "content-length" not in names and "transfer-encoding" not in names:
            if body is not None:
                chunked = True
                lines.append("Transfer-Encoding: chunked")
            elif method.upper() in _METHODS_EXPECTING_BODY:
                lines.append("Content-Length: 0")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")  # UnicodeEncodeError is a ValueError
        sock = self.sock
        if body is None:
            send_all(sock, head)  # one system call, most often (web/sending.py)
            return
        pending = head  # the head goes out with the body's first piece
        for data in body:
            if not data:
                continue
            if chunked:
                data = b"%X\r\n%b\r\n" % (len(data), data)
            send_all(sock, pending + data if pending else data)
            pending = b""
        if chunked:
            send_all(sock, pending + b"0\r\n\r\n")
        elif pending:
            send_all(sock, pending)  # a body of nothing at all

    def _host_header(self) -> str:
        host, port = self.upstream.host, self.upstream.port
        if ":" in host:
            host = f"[{host}]"
        else:
            host = host.encode("idna").decode("ascii")
        default = 443 if self.upstream.scheme == "https" else 80
        return host if port == default else f"{host}:{port}"

    # ---- the answer ----

    def getresponse(self, method: str) -> "Response":
        """The final answer's head (interim 1xx answers, 101 aside, are read past)."""
        while True:
            status, version, reason, headers = self._read_head()
            if not (100 <= status < 200) or status == 101:
                return Response(self, method, status, version, reason, headers)

    def _read_head(self):
        buffer = self._buffer
        searched = 0
        while True:
            end = buffer.find(b"\r\n\r\n", searched)
            if end >= 0:
                head, self._buffer = buffer[:end], buffer[end + 4:]
                break
            match = _HEAD_END.search(buffer, max(0, searched - 3))
            if match is not None:  # bare LF line ends, which http.client reads too
                head, self._buffer = buffer[:match.start()], buffer[match.end():]
                head = head.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
                break
            if len(buffer) > MAX_HEAD:
                raise HTTPException("the upstream's answer has a head longer than 1 MiB")
            searched = max(0, len(buffer) - 3)
            data = self.sock.recv(CHUNK)
            if not data:
                self._buffer = b""
                if not buffer:
                    raise RemoteDisconnected("Remote end closed connection without response")
                raise IncompleteRead(buffer)
            buffer += data
        return parse_head(head)

    def _fill(self, at_least: int = 1) -> bool:
        """Reads once more from the socket into the buffer; False at the connection's end."""
        data = self.sock.recv(max(CHUNK, at_least))
        if not data:
            return False
        self._buffer += data
        return True


def parse_head(head: bytes):
    """(status, version, reason, [(name, value)]) of a response head without its blank line.
    Folded lines are joined with a space; a line that is no header is an HTTPException."""
    text = head.decode("iso-8859-1")
    lines = text.split("\r\n")
    status_line = lines[0]
    if len(status_line) > MAX_LINE:
        raise LineTooLong("status line")
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise BadStatusLine(status_line)
    version, code = parts[0], parts[1]
    if len(code) != 3 or not (code.isascii() and code.isdigit()) or not 100 <= int(code) <= 999:
        raise BadStatusLine(status_line)
    reason = parts[2].strip() if len(parts) > 2 else ""
    if len(lines) > MAX_HEADERS + 1:
        raise HTTPException(f"got more than {MAX_HEADERS} headers")
    headers = []
    for line in lines[1:]:
        if len(line) > MAX_LINE:
            raise LineTooLong("header line")
        if line[:1] in (" ", "\t"):
            if not headers:
                raise HTTPException(f"the upstream's answer starts its headers with a folded line: {line!r}")
            name, value = headers[-1]
            more = line.strip(" \t")
            headers[-1] = (name, f"{value} {more}" if value else more)
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or not name.isprintable():
            raise HTTPException(f"the upstream's answer has a line that is no header: {line!r}")
        headers.append((name, value.lstrip(" \t")))
    return int(code), version, reason, headers


class Response:
    """An answer whose head was read: ``status``, ``reason``, the headers in order, and its body
    read with ``read1``. ``length`` is what the Content-Length still promises (None otherwise:
    chunked or to the connection's end); ``will_close`` whether the connection ends with it."""

    def __init__(self, connection: UpstreamConnection, method: str, status: int, version: str, reason: str,
                 headers: list):
        self._connection = connection
        self.status, self.reason, self.version = status, reason, version
        self._headers = headers
        index: dict[str, list[str]] = {}
        for name, value in headers:
            index.setdefault(name.lower(), []).append(value)
        self._index = index
        transfer = index.get("transfer-encoding")
        self.chunked = bool(transfer) and transfer[0].strip().lower() == "chunked"
        self._chunk_left = None  # bytes left of the current chunk; None: its size line is next
        self.length = None
        if not self.chunked:
            lengths = index.get("content-length")
            if lengths:
                try:
                    length = int(lengths[0])
                except ValueError:
                    length = None
                self.length = length if length is not None and length >= 0 else None
        bodiless = status in (204, 304) or 100 <= status < 200 or method == "HEAD"
        if bodiless:
            self.length = 0
        self.will_close = self._will_close(version) or (not self.chunked and self.length is None and not bodiless)
        self._done = self.length == 0
        if self._done:
            self._finished()

    def _will_close(self, version: str) -> bool:
        connection = self._index.get("connection")
        if connection is None and version == "HTTP/1.1":
            return False  # most answers: kept alive, nothing to look at
        tokens = {t.strip().lower() for v in connection or () for t in v.split(",")}
        if "close" in tokens:
            return True
        if version == "HTTP/1.1":
            return False
        return not ("keep-alive" in tokens or self._index.get("keep-alive")
                    or any(v.strip().lower() == "keep-alive" for v in self._index.get("proxy-connection", ())))

    def getheader(self, name: str, default=None):
        values = self._index.get(name.lower())
        return ", ".join(values) if values else default

    def get_all(self, name: str) -> list[str]:
        return self._index.get(name.lower(), [])

    def getheaders(self) -> list:
        return self._headers

    def read1(self, n: int = CHUNK) -> bytes:
        """Some of the body, at most ``n`` bytes: b"" at its end (with ``length`` still above 0
        when the connection ended short of it). IncompleteRead for a chunked body cut short."""
        if self._done:
            return b""
        connection = self._connection
        if self.chunked:
            return self._read_chunk(n)
        if not connection._buffer and not connection._fill():
            self._done = True
            return b""  # the connection's end: the body's, or short of its length
        buffer = connection._buffer
        take = n if self.length is None else min(n, self.length)
        data, connection._buffer = buffer[:take], buffer[take:]
        if self.length is not None:
            self.length -= len(data)
            if self.length == 0:
                self._done = True
                self._finished()
        return data

    def buffered_body(self) -> bytes | None:
        """The rest of a body of known length when it came with the head (the connection's
        buffer holds all of it), read; else None, and nothing read: never waits for the socket."""
        if self.length is None or self.chunked:
            return None
        if self.length == 0:
            return b""
        if len(self._connection._buffer) < self.length:
            return None
        return self.read1(self.length)

    def _read_chunk(self, n: int) -> bytes:
        connection = self._connection
        if self._chunk_left is None or self._chunk_left == 0:
            if self._chunk_left == 0:  # the CRLF after a chunk's data
                self._line()
            line = self._line()
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise IncompleteRead(b"") from None
            if size < 0:
                raise IncompleteRead(b"")
            if size == 0:
                while self._line():  # the trailers, up to the blank line
                    pass
                self._done = True
                self._finished()
                return b""
            self._chunk_left = size
        if not connection._buffer and not connection._fill():
            raise IncompleteRead(b"", self._chunk_left)
        buffer = connection._buffer
        take = min(n, self._chunk_left)
        data, connection._buffer = buffer[:take], buffer[take:]
        self._chunk_left -= len(data)
        return data

    def _line(self) -> bytes:
        connection = self._connection
        while True:
            end = connection._buffer.find(b"\n")
            if end >= 0:
                line, connection._buffer = connection._buffer[:end], connection._buffer[end + 1:]
                return line.rstrip(b"\r")
            if len(connection._buffer) > MAX_LINE:
                raise LineTooLong("chunk size")
            if not connection._fill():
                raise IncompleteRead(b"")

    def _finished(self) -> None:
        """The body was read whole: bytes after it that nobody asked for make the connection
        one not to use again (the pool only sees what is still in the socket)."""
        if self._connection._buffer:
            self.will_close = True
            self._connection.close()
        elif self.will_close:
            self._connection.close()

    def close(self) -> None:
        self._done = True

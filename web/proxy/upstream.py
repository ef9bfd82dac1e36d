"""The manifest's upstream, the only address the proxy ever contacts, and how it is reached.

The request contributes its path and query (``request_target``), never a host or port.
"""
from __future__ import annotations

import http.client
import re
import socket
import ssl
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, urlsplit

from web.websocket import no_delay

CONNECT_TIMEOUT = 10.0
# A dev server may compile for a long while before it answers; once it has, a body may stream
# for ever (server-sent events), so reading it has no timeout at all.
RESPONSE_TIMEOUT = 300.0
CHUNK = 64 * 1024  # the most read from either side at once
_SAFE = "/:@!$&'()*+,;=-._~%"
_UNQUOTED = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=\-._~%]*")  # what quote(path, safe=_SAFE) gives back as is


@dataclass(frozen=True)
class Upstream:
    """A service's dev server as the manifest names it: the only address the proxy contacts."""

    scheme: str
    host: str
    port: int
    base_path: str  # "" or a prefix such as "/app", without the trailing slash

    @classmethod
    def parse(cls, url: str) -> "Upstream":
        return _parse(cls, url)

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"{self.scheme}://{host}:{self.port}"

    # Dev servers use self-signed certificates; the address comes from the operator's manifest
    # only, so there is nothing a browser could point elsewhere: neither way of reaching the
    # upstream verifies its certificate.

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """An HTTP connection (not connected yet: http.client connects it when a request goes out)."""
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=ssl._create_unverified_context())  # noqa: S323
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def client(self, timeout: float):
        """The proxy's lean HTTP/1.1 connection (web/proxy/client.py), not connected yet."""
        from web.proxy.client import UpstreamConnection
        return UpstreamConnection(self, timeout)

    def open_socket(self, timeout: float) -> socket.socket:
        """A connected socket (TLS for https) with Nagle off, for a tunnel; OSError if unreachable."""
        remote = socket.create_connection((self.host, self.port), timeout=timeout)
        no_delay(remote)
        if self.scheme == "https":
            remote = ssl._create_unverified_context().wrap_socket(remote, server_hostname=self.host)  # noqa: S323
        return remote


@lru_cache(maxsize=64)
def _parse(cls, url: str) -> Upstream:
    """Kept per URL (an Upstream is frozen): the manifest's upstream is parsed once, not per request."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return cls(parts.scheme.lower(), (parts.hostname or "127.0.0.1").lower(), port, parts.path.rstrip("/"))


def request_target(environ, upstream: Upstream) -> str:
    """The upstream path for a request: the base path, then the request's own path and query."""
    path = environ.get("PATH_INFO") or "/"
    if not path.startswith("/"):
        # An absolute-form request line ("GET http://elsewhere/x"): only its path is used.
        path = urlsplit(path).path or "/"
    # pywsgi decoded the path as latin-1; quoting it again gives the bytes the browser sent (a
    # path of only characters quote leaves as they are, most of them, is left without the call).
    target = path if _UNQUOTED.fullmatch(path) else quote(path, safe=_SAFE, encoding="latin-1")
    query = environ.get("QUERY_STRING")
    return upstream.base_path + target + (f"?{query}" if query else "")

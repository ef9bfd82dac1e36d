"""What the proxy changes in the heads it passes on, as pure rules on the request's environ and
the upstream's headers (the relay and the tunnel do the sending).

Hop-by-hop headers are not forwarded, the X-Forwarded-* headers are devhostd's own,
``Location`` headers that name the upstream's own address are pointed back at the routed
hostname, and an answer that gets the panel (a page navigation's HTML, ``is_navigation``) loses
what no longer fits its changed body.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from web.proxy.decoders import DECODABLE, decoder_for
from web.proxy.upstream import Upstream, request_target

# RFC 9110 §7.6.1, plus the non-standard Proxy-Connection browsers still send.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "proxy-connection"})
# Headers of the upstream's body that do not fit the body with the panel: its framing, its
# encoding, its digests and its validator (a cache would pair the upstream's ETag with it).
REWRITTEN = frozenset({"content-length", "content-encoding", "content-md5", "digest", "repr-digest",
                       "content-digest", "etag"})
_SPECIAL = HOP_BY_HOP | {"content-length", "location"}
_SPECIAL_INJECTED = _SPECIAL | REWRITTEN | {"vary"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LINE_BREAKS = re.compile(r"[\r\n]+[ \t]*")


def is_navigation(environ) -> bool:
    """Whether the browser asks for a page a person is going to: only such an answer gets the
    panel. ``Sec-Fetch-Dest: document`` says so (an iframe, a fetch(), an htmx swap do not);
    without it, an ``Accept`` that prefers HTML, unless the request says it is a script's."""
    dest = environ.get("HTTP_SEC_FETCH_DEST")
    if dest is not None:
        return dest.strip().lower() == "document"
    if environ.get("HTTP_X_REQUESTED_WITH") or environ.get("HTTP_HX_REQUEST"):
        return False
    return prefers_html(environ.get("HTTP_ACCEPT", ""))


def prefers_html(accept: str) -> bool:
    """``text/html`` is named in Accept with the highest weight of all it names (``*/*`` alone,
    what fetch() sends, is no preference)."""
    weights = {}
    for part in accept.split(","):
        media, _, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if media.strip():
            weights[media.strip().lower()] = weight
    html = weights.get("text/html", 0.0)
    return html > 0 and html >= max(weights.values())


def _header_name(key: str) -> tuple[str, str]:
    """(name, its lowercase) of an environ key such as HTTP_ACCEPT_ENCODING, kept per key: a
    browser sends the same dozen names on every request."""
    known = _HEADER_NAMES.get(key)
    if known is None:
        name = key[5:].replace("_", "-").title()
        known = (name, name.lower())
        if len(_HEADER_NAMES) < 1024:  # names a client makes up are not kept for ever
            _HEADER_NAMES[key] = known
    return known


_HEADER_NAMES: dict[str, tuple[str, str]] = {}


def request_headers(environ, narrow: bool = False) -> list[tuple[str, str]]:
    """The browser's headers for the upstream. ``narrow`` (an answer devhostd may rewrite):
    ``Accept-Encoding`` keeps only the encodings devhostd can undo; otherwise it passes as is."""
    headers = []
    connection = environ.get("HTTP_CONNECTION")
    listed = _connection_tokens(connection) if connection else ()
    for key, value in environ.items():
        if not key.startswith("HTTP_"):
            continue
        name, lower = _header_name(key)
        if lower in HOP_BY_HOP or lower in listed or lower == "x-forwarded-for" \
                or (narrow and lower == "accept-encoding"):
            continue
        headers.append((name, value))
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers.append((name, environ[key]))
    if narrow:
        # Only encodings devhostd can undo, so the page can always be given the panel.
        accepted = [token.strip() for token in environ.get("HTTP_ACCEPT_ENCODING", "").split(",")]
        kept = [token for token in accepted if token.split(";")[0].strip().lower() in DECODABLE]
        headers.append(("Accept-Encoding", ", ".join(kept) or "identity"))
    return headers + _forwarded(environ)


def upgrade_request(environ, sent_headers, upstream: Upstream) -> bytes:
    """A WebSocket upgrade's request head for the upstream. ``sent_headers``: the header pairs
    as the browser sent them (None: read back from the environ)."""
    lines = [f"GET {request_target(environ, upstream)} HTTP/1.1"]
    pairs = list(sent_headers.items()) if sent_headers is not None else [
        (key[5:].replace("_", "-").title(), value) for key, value in environ.items() if key.startswith("HTTP_")]
    # Everything is passed on as sent, the Upgrade and Connection headers included: they are
    # the handshake itself. The X-Forwarded-* headers are devhostd's own, as on the HTTP path.
    lines += [f"{name}: {value}" for name, value in pairs if not name.lower().startswith("x-forwarded-")]
    lines += [f"{name}: {value}" for name, value in _forwarded(environ)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _forwarded(environ) -> list[tuple[str, str]]:
    forwarded_for = environ.get("HTTP_X_FORWARDED_FOR")
    client = environ.get("REMOTE_ADDR", "")
    return [("X-Forwarded-For", f"{forwarded_for}, {client}" if forwarded_for else client),
            ("X-Forwarded-Host", environ.get("HTTP_HOST", "")),
            ("X-Forwarded-Proto", "http")]


def status_code(head: bytes) -> int:
    """The status of a response head as bytes; 0 when its status line is not HTTP's."""
    parts = head.split(b"\r\n", 1)[0].split(None, 2)
    return int(parts[1]) if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit() else 0


def _connection_tokens(value: str) -> set[str]:
    return {token.strip().lower() for token in value.split(",") if token.strip()}


def clean(value: str) -> str:
    """A header value with its line breaks (obsolete folding, bare CRs) made single spaces."""
    return _LINE_BREAKS.sub(" ", value) if ("\r" in value or "\n" in value) else value


def response_plan(response, method: str, environ, upstream: Upstream):
    """(headers for the browser, whether to inject the script, a decoder or None), from the
    head of the upstream's response (web/proxy/client.py)."""
    connection = response.getheader("Connection")
    listed = _connection_tokens(connection) if connection else ()
    is_html = (response.getheader("Content-Type") or "").split(";")[0].strip().lower() == "text/html"
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    has_body = response.status not in (204, 304) and response.status >= 200
    lengths = response.get_all("Content-Length")
    # A length is only passed on when it frames the body: one valid number, no Transfer-Encoding
    # beside it, and a status that has a body at all.
    first = lengths[0].strip() if lengths else ""
    keep_length = (len(set(v.strip() for v in lengths)) == 1 and first.isascii() and first.isdigit()
                   and not response.chunked and response.getheader("Transfer-Encoding") is None
                   and has_body)
    inject = is_html and _is_page(response.status) and not (keep_length and int(lengths[0]) == 0) \
        and encoding in DECODABLE and method != "HEAD" and response.getheader("Content-Range") is None \
        and is_navigation(environ)
    headers = []
    special = _SPECIAL_INJECTED if inject else _SPECIAL  # the names that need more than passing on
    seen_length = False
    for name, value in response.getheaders():
        lower = name.lower()
        if lower in special or lower in listed:
            if lower in HOP_BY_HOP or lower in listed:
                continue
            if inject and (lower in REWRITTEN or lower == "vary"):
                # The body changes: sent chunked and decoded, without the upstream's validator;
                # Vary is given again below, with what decided the panel.
                continue
            if lower == "content-length":
                if not keep_length or seen_length:
                    continue
                seen_length = True
                value = value.strip()
            elif lower == "location":
                value = rewrite_location(clean(value), upstream, environ.get("HTTP_HOST", ""))
        if "\r" in value or "\n" in value:
            value = _LINE_BREAKS.sub(" ", value)
        headers.append((name, value))
    if inject:
        # A cache must not give this page (with the panel) to a fetch() of the same address.
        varied = [v.strip() for v in ",".join(response.get_all("Vary")).split(",") if v.strip()]
        if not any(v.lower() in ("sec-fetch-dest", "*") for v in varied):
            varied.append("Sec-Fetch-Dest")
        headers.append(("Vary", ", ".join(varied)))
    return headers, inject, decoder_for(encoding) if inject else None


def _is_page(status: int) -> bool:
    """A status whose body a person sees as a page: not 1xx, 204, 206, 304 or another 3xx."""
    return 200 <= status < 300 and status not in (204, 206) or status >= 400


def rewrite_location(url: str, upstream: Upstream, routed_host: str) -> str:
    """A Location on the upstream itself (same scheme, host in any case, effective port) pointed
    at the routed hostname, the upstream's base path taken off; any other left as it is."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if parts.scheme or parts.netloc:
        scheme = parts.scheme.lower()
        if (scheme != upstream.scheme.lower() or (parts.hostname or "") != upstream.host.lower()
                or (port or _DEFAULT_PORTS.get(scheme)) != upstream.port):
            return url
    elif not parts.path.startswith("/"):
        return url  # relative to where the browser is: already right
    path = parts.path
    base = upstream.base_path
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):] or "/"
    if not (parts.scheme or parts.netloc):
        return path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    return (f"http://{routed_host}{path or '/'}" + (f"?{parts.query}" if parts.query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))

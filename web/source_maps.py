"""Source maps: from a position in a module as the browser was served it to a file of the checkout.

Pure: no network (web/module_fetch.py brings the module and its map from the page's upstream).
The map is parsed by ``symbolic`` (Sentry's, kept: its lookups are those Sentry trusts on
every minified stack); its lines and columns are 0-based, a stack's 1-based.

A map's ``sources`` come in three forms (Vite uses each, by version and plugin): an absolute
file path (or a ``file://`` URL, or Vite's ``/@fs/<absolute path>``), a path from the dev
server's root (``/src/App.jsx``), or a path relative to the map's own URL (``App.jsx``). Every
result is a path relative to the page's checkout with ``/`` separators, after symlinks and
``..`` are resolved: anything outside the checkout is None, never a path that escapes it.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import posixpath
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from symbolic.sourcemap import SourceMapView

MAX_POSITIONS = 200
# The last sourceMappingURL comment wins (a bundled module may hold its inputs' own comments).
_MAPPING_URL = re.compile(rb"[#@]\s*sourceMappingURL=([^\s'\"*]+)\s*(?:\*/)?\s*$", re.MULTILINE)


class Invalid(ValueError):
    """A locate body that cannot be read: its message says what to send."""


# --------------------------------------------------------------------------- positions

def parse_positions(body) -> list[dict]:
    """The ``positions`` of a locate body, checked: each ``{file, line, column?}`` or ``{url, line,
    column}`` (1-based). Raises Invalid saying what to change."""
    positions = body.get("positions") if isinstance(body, dict) else None
    if not isinstance(positions, list):
        raise Invalid('the body must be {"positions": [{"url", "line", "column"} or {"file", "line"}, ...]}')
    if len(positions) > MAX_POSITIONS:
        raise Invalid(f"at most {MAX_POSITIONS} positions may be located at once; this body has {len(positions)}")
    return [_position(value, index) for index, value in enumerate(positions)]


def _position(value, index: int) -> dict:
    if not isinstance(value, dict):
        raise Invalid(f"positions[{index}] must be an object with url or file, and line")
    line, column = value.get("line"), value.get("column")
    url, file = value.get("url"), value.get("file")
    if line is not None and not _count(line):
        raise Invalid(f"positions[{index}].line must be a whole number from 1")
    if column is not None and not _count(column):
        raise Invalid(f"positions[{index}].column must be a whole number from 1, or left out")
    if isinstance(url, str) and url and len(url) <= 4096:
        if line is None or column is None:
            raise Invalid(f"positions[{index}] names a url, so it needs its line and column too (1-based, as "
                          "stacks print them)")
        return {"url": url, "line": line, "column": column}
    if isinstance(file, str) and file and len(file) <= 4096 and "\x00" not in file:
        # A file with no line: a dev build that knows a component's file only (Vue's __file).
        return {"file": file, **({"line": line} if line is not None else {}),
                **({"column": column} if column is not None and line is not None else {})}
    raise Invalid(f"positions[{index}] needs a url (a served module's address) or a file (a path of the dev build)")


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10_000_000


# --------------------------------------------------------------------------- paths

def inside(path: str, checkout: str) -> str | None:
    """``path`` (absolute) relative to ``checkout`` with ``/``, after symlinks and ``..``; None
    when it is not inside the checkout."""
    try:
        real, root = os.path.realpath(path), os.path.realpath(checkout)
    except (ValueError, OSError):
        return None
    if real == root or not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(real, root).replace(os.sep, "/")


def file_of(name: str, dev_root: str, checkout: str) -> str | None:
    """A file as the dev build names it (absolute, ``/@fs/…``, ``file://…`` or relative to the
    dev server's root) made relative to the checkout, or None."""
    if name.startswith("file://"):
        name = unquote(urlsplit(name).path)
    elif name.startswith("/@fs/"):
        name = unquote(name[len("/@fs"):])
    if os.path.isabs(name):
        found = inside(name, checkout)
        if found is not None:
            return found
        if os.path.lexists(name):
            return None  # a real file of this machine, outside the checkout
        # No such file on this machine: a path from the dev server's root (Vite's "/src/App.jsx").
        return inside(os.path.join(dev_root, name.lstrip("/")), checkout)
    return inside(os.path.join(dev_root, name), checkout)


def source_file(source: str, map_url: str, dev_root: str, checkout: str) -> str | None:
    """One of a map's ``sources`` (sourceRoot already joined) as a path of the checkout, or None."""
    source = source.split("?", 1)[0]
    if source.startswith(("file://", "/@fs/")) or source.startswith("/"):
        return file_of(source, dev_root, checkout)
    parts = urlsplit(source)
    if parts.scheme or parts.netloc:
        here = urlsplit(map_url)
        if (parts.scheme, parts.netloc) != (here.scheme, here.netloc):
            return None  # another origin's file (a CDN's) is no file of this checkout
        return file_of(unquote(parts.path), dev_root, checkout)
    # Relative to the map: resolved as a URL path from the dev server's root.
    path = posixpath.normpath(posixpath.join(posixpath.dirname(urlsplit(map_url).path), unquote(source)))
    return file_of(path, dev_root, checkout)


# --------------------------------------------------------------------------- modules and maps

def mapping_url(module: bytes) -> str | None:
    """The module's last ``//# sourceMappingURL=`` reference, or None."""
    found = None
    for found in _MAPPING_URL.finditer(module[-1_000_000:] if len(module) > 1_000_000 else module):
        pass
    if found is None:
        return None
    try:
        return found.group(1).decode("ascii")
    except UnicodeDecodeError:
        return None


def data_url_bytes(url: str) -> bytes | None:
    """The bytes of a ``data:`` URL (base64 or percent-encoded), or None if it is none."""
    if not url.startswith("data:") or "," not in url:
        return None
    head, _, data = url[5:].partition(",")
    try:
        if head.split(";")[-1].strip().lower() == "base64":
            return base64.b64decode(data, validate=False)
        return unquote_to_bytes(data)
    except (binascii.Error, ValueError):
        return None


def map_address(module_url: str, reference: str) -> str | None:
    """A relative (or absolute) sourceMappingURL as an address on the module's own origin, or None."""
    address = urljoin(module_url, reference)
    here, there = urlsplit(module_url), urlsplit(address)
    if (there.scheme, there.netloc) != (here.scheme, here.netloc):
        return None  # a map is read only from the page's own upstream
    return address


@dataclass
class ParsedMap:
    view: SourceMapView
    sources: list[str]  # sourceRoot joined
    size: int

    def lookup(self, line: int, column: int) -> tuple[str, int, int] | None:
        """(source, line, column), 1-based, of a 1-based generated position; None when that line
        has no mapping (symbolic would answer the last mapping of an earlier line)."""
        token = self.view.lookup(line - 1, column - 1)
        if token is None or token.dst_line != line - 1 or token.src_id is None:
            return None
        if not 0 <= token.src_id < len(self.sources):
            return None
        return self.sources[token.src_id], token.src_line + 1, token.src_col + 1


def parse_map(data: bytes) -> ParsedMap | None:
    """A source map's JSON parsed, or None when it is not one (a bad map locates nothing; it
    never fails the request)."""
    try:
        raw = json.loads(data)
        if not isinstance(raw, dict) or not isinstance(raw.get("sources"), list) or "sections" in raw:
            return None
        view = SourceMapView.from_json_bytes(data)
    except Exception:  # noqa: BLE001 - symbolic's own errors for a map it cannot read
        return None
    root = raw.get("sourceRoot") if isinstance(raw.get("sourceRoot"), str) else ""
    sources = [_joined(root, s) if isinstance(s, str) else "" for s in raw["sources"]]
    return ParsedMap(view, sources, len(data))


def _joined(root: str, source: str) -> str:
    if not root or source.startswith("/") or "://" in source:
        return source
    return root.rstrip("/") + "/" + source


# --------------------------------------------------------------------------- the cache

FRESH_SECONDS = 2.0  # a map this young is used as it is; older, the module is asked again (HMR edits)
MAX_AGE = 60.0  # however its ETag answers, a map older than this is read again
MAX_MAPS = 64
MAX_BYTES = 48 * 1024 * 1024


@dataclass
class Cached:
    parsed: ParsedMap | None  # None: the module has no usable map
    etag: str | None
    at: float
    size: int


class MapCache:
    """Parsed maps per module URL, bounded by count and by bytes (oldest used go first)."""

    def __init__(self, max_maps: int = MAX_MAPS, max_bytes: int = MAX_BYTES, clock=time.monotonic):
        self._entries: OrderedDict[str, Cached] = OrderedDict()
        self._max_maps, self._max_bytes, self._clock = max_maps, max_bytes, clock
        self.bytes = 0

    def get(self, url: str) -> Cached | None:
        """A cached map young enough to keep (the caller revalidates one past FRESH_SECONDS)."""
        entry = self._entries.get(url)
        if entry is None:
            return None
        if self._clock() - entry.at > MAX_AGE:
            self._drop(url)
            return None
        self._entries.move_to_end(url)
        return entry

    def fresh(self, entry: Cached) -> bool:
        return self._clock() - entry.at <= FRESH_SECONDS

    def put(self, url: str, parsed: ParsedMap | None, etag: str | None, size: int) -> None:
        self._drop(url)
        if size > self._max_bytes:
            return
        self._entries[url] = Cached(parsed, etag, self._clock(), size)
        self.bytes += size
        while len(self._entries) > self._max_maps or self.bytes > self._max_bytes:
            self._drop(next(iter(self._entries)))

    def touch(self, url: str) -> None:
        """The upstream said the module is unchanged (304): its map stays, young again."""
        entry = self._entries.get(url)
        if entry is not None:
            entry.at = self._clock()

    def _drop(self, url: str) -> None:
        entry = self._entries.pop(url, None)
        if entry is not None:
            self.bytes -= entry.size

    def __len__(self) -> int:
        return len(self._entries)

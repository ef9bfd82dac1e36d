"""The page's memory, as plain data: per open page its URL, checkout and a bounded ring of what
its panel reported (errors, failed requests), and per routed hostname the proxy's own failed
answers. actors/page_memory.py is the actor that keeps one of these.

The bounds are the page ring's (web/static/chat/page_errors.js): 100 errors and 100 failed
requests per page, the oldest dropped and counted, messages cut at 2,000 characters, stacks at
20 frames (URLs at 500 characters), and at most 16 pages. Nothing here holds a body or a
header: an entry that names one has it left out.
A page whose socket closed is kept for RELOAD_GRACE seconds: a reload opens the same URL again,
and the new page takes the old one's entries over (what happened before the reload is often
why it was reloaded).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

MAX_ERRORS = 100
MAX_REQUESTS = 100
MAX_MESSAGE = 2000
MAX_FRAMES = 20  # V8 records 10 by default
MAX_FRAME_URL = 500
MAX_PAGES = 16  # pages kept at once (at most ~2 MB each); the longest-open go first
MAX_HOSTNAMES = 32
RELOAD_GRACE = 10.0
ERROR_KINDS = ("console-error", "console-warn", "error", "rejection")


def _cut(value, limit: int) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _number(value) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def clean_error(entry) -> dict | None:
    """An error entry of a page, bounded, or None when it is not one."""
    if not isinstance(entry, dict) or entry.get("kind") not in ERROR_KINDS:
        return None
    stack = []
    for frame in entry.get("stack") if isinstance(entry.get("stack"), list) else []:
        if len(stack) == MAX_FRAMES:
            break
        if not isinstance(frame, dict):
            continue
        kept = {"url": _cut(frame.get("url"), MAX_FRAME_URL) or "", "line": _number(frame.get("line")),
                "column": _number(frame.get("column"))}
        if isinstance(frame.get("fn"), str):
            kept["fn"] = _cut(frame["fn"], 200)
        source = frame.get("source")
        if isinstance(source, dict) and isinstance(source.get("file"), str):  # mapped by the page
            kept["source"] = {"file": _cut(source["file"], MAX_FRAME_URL), "line": _number(source.get("line")),
                              "column": _number(source.get("column"))}
        stack.append(kept)
    cleaned = {"kind": entry["kind"], "message": _cut(entry.get("message"), MAX_MESSAGE) or "", "stack": stack,
               "time": _number(entry.get("time"))}
    if _number(entry.get("count")):
        cleaned["count"] = entry["count"]
    return cleaned


def clean_request(entry, source: str = "page") -> dict | None:
    """A failed request, bounded: method, URL, status or error, time; never a body or header."""
    if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
        return None
    status = _number(entry.get("status"))
    return {"kind": "request", "method": _cut(entry.get("method"), 16) or "GET", "url": _cut(entry["url"], 2000),
            "status": int(status) if status is not None else None,
            "error": _cut(entry.get("error"), MAX_MESSAGE) if entry.get("error") is not None else None,
            "time": _number(entry.get("time")), "source": source}


@dataclass
class Page:
    """One open page: where it is, its socket, and the errors and requests it reported last."""

    page_id: str
    url: str
    directory: str
    hostname: str
    sink: object
    errors: deque = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))
    requests: deque = field(default_factory=lambda: deque(maxlen=MAX_REQUESTS))
    dropped: dict = field(default_factory=lambda: {"errors": 0, "requests": 0})
    closed_at: float | None = None
    mapping: dict | None = None  # what its stacks are source-mapped with (the edge's business)


def _append(ring: deque, entries, dropped: dict, key: str) -> None:
    for entry in entries:
        if len(ring) == ring.maxlen:
            dropped[key] += 1
        ring.append(entry)


class PageBook:
    """Every open page and the proxy's failures per hostname; ``now`` is the caller's clock."""

    def __init__(self, grace: float = RELOAD_GRACE):
        self.grace = grace
        self.pages: dict[str, Page] = {}  # by page id, oldest first
        self.proxy: dict[str, deque] = {}  # hostname -> the proxy's failed answers, oldest first

    def open(self, page_id: str, url: str, directory: str, hostname: str, sink, now: float,
             mapping: dict | None = None) -> Page:
        self.reap(now)
        page = Page(page_id, url, directory, hostname, sink, mapping=mapping)
        reloaded = next((p for p in self.pages.values() if p.closed_at is not None and p.url == url
                         and p.directory == directory), None)
        if reloaded is not None:
            page.errors.extend(reloaded.errors)
            page.requests.extend(reloaded.requests)
            page.dropped = dict(reloaded.dropped)
            del self.pages[reloaded.page_id]
        self.pages[page_id] = page
        while len(self.pages) > MAX_PAGES:
            del self.pages[next(iter(self.pages))]
        return page

    def close(self, page_id: str, now: float) -> None:
        page = self.pages.get(page_id)
        if page is not None:
            page.closed_at = now
            page.sink = None
        self.reap(now)

    def reap(self, now: float) -> None:
        """Forgets the pages closed more than ``grace`` ago."""
        for page_id in [p.page_id for p in self.pages.values()
                        if p.closed_at is not None and now - p.closed_at > self.grace]:
            del self.pages[page_id]

    def add(self, page_id: str, errors, requests) -> None:
        page = self.pages.get(page_id)
        if page is None:
            return
        _append(page.errors, filter(None, map(clean_error, errors if isinstance(errors, list) else [])),
                page.dropped, "errors")
        # The proxy's own failures come back from a page's ring too: they are kept here already.
        mine = [r for r in (requests if isinstance(requests, list) else [])
                if not (isinstance(r, dict) and r.get("source") == "proxy")]
        _append(page.requests, filter(None, map(clean_request, mine)), page.dropped, "requests")

    def add_proxy(self, hostname: str, entry: dict) -> list:
        """Keeps one of the proxy's failed answers; the sinks of that hostname's open pages."""
        ring = self.proxy.get(hostname)
        if ring is None:
            if len(self.proxy) >= MAX_HOSTNAMES:
                del self.proxy[next(iter(self.proxy))]
            ring = self.proxy[hostname] = deque(maxlen=MAX_REQUESTS)
        ring.append(entry)
        return [p.sink for p in self.pages.values() if p.hostname == hostname and p.sink is not None]

    def of(self, directory: str, now: float) -> list[Page]:
        """The pages of a checkout (those just closed too, in their grace), oldest first."""
        self.reap(now)
        return [p for p in self.pages.values() if p.directory == directory]

    def errors(self, directory: str, now: float) -> list[dict]:
        return [{"url": p.url, "open": p.closed_at is None, "errors": list(p.errors),
                 "dropped": p.dropped["errors"], "mapping": p.mapping} for p in self.of(directory, now)]

    def requests(self, directory: str, now: float) -> list[dict]:
        """Each page's failed requests with the proxy's failures of its hostname, in time order."""
        answer = []
        for page in self.of(directory, now):
            merged = list(page.requests) + list(self.proxy.get(page.hostname, ()))
            merged.sort(key=lambda e: e["time"] if isinstance(e.get("time"), (int, float)) else 0)
            answer.append({"url": page.url, "open": page.closed_at is None, "requests": merged[-2 * MAX_REQUESTS:],
                           "dropped": page.dropped["requests"]})
        return answer

"""Reading a served module and its source map from the page's upstream, to locate positions in it.

Only the manifest's upstream of the page's own hostname is ever asked, for the path and query
of a URL on the page's own origin (web/proxy/upstream.py's ``request_target``, as the proxy
builds it): nothing the browser sends chooses a host. Each read is bounded in bytes and time;
it is network I/O of the request's own greenlet, and the map is parsed on the hub's threadpool
so no other greenlet waits for a large one. Parsed maps are cached per module URL
(web/source_maps.MapCache), revalidated with the module's ETag once they are a little old.
"""
from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import gevent

from web.proxy.upstream import Upstream, request_target
from web.source_maps import MapCache, ParsedMap, data_url_bytes, map_address, mapping_url, parse_map

FETCH_TIMEOUT = 5.0  # seconds for one module or map, head to last byte
MAX_MODULE_BYTES = 8 * 1024 * 1024
MAX_MAP_BYTES = 16 * 1024 * 1024
CACHE = MapCache()


class Fetched:
    def __init__(self, status: int, body: bytes, etag: str | None):
        self.status, self.body, self.etag = status, body, etag


def same_origin(url: str, page_origin: str) -> bool:
    """Whether ``url`` is an address on the page's own origin (``http://host:port``)."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and f"{parts.scheme}://{parts.netloc}".lower() == page_origin.lower()
    except ValueError:
        return False


def fetch(upstream: Upstream, url: str, host_header: str, limit: int, etag: str | None = None) -> Fetched | None:
    """GET of ``url``'s path and query on the upstream (the Host the browser used, as the proxy
    sends it); None when it cannot be had in FETCH_TIMEOUT or is over ``limit`` bytes."""
    parts = urlsplit(url)
    try:
        target = request_target({"PATH_INFO": parts.path or "/", "QUERY_STRING": parts.query}, upstream)
    except UnicodeEncodeError:
        return None
    headers = {"Host": host_header, "Accept": "*/*", "Accept-Encoding": "identity"}
    if etag:
        headers["If-None-Match"] = etag
    connection = upstream.connection(FETCH_TIMEOUT)
    try:
        with gevent.Timeout(FETCH_TIMEOUT):
            connection.request("GET", target, headers=headers)
            response = connection.getresponse()
            length = response.getheader("Content-Length")
            if length and length.isdigit() and int(length) > limit:
                return None
            body = response.read(limit + 1)
            if len(body) > limit:
                return None
            return Fetched(response.status, body, response.getheader("ETag"))
    except (OSError, http.client.HTTPException, gevent.Timeout, ValueError):
        return None
    finally:
        connection.close()


def module_map(upstream: Upstream, module_url: str, host_header: str, cache: MapCache = CACHE) -> ParsedMap | None:
    """The parsed source map of a module the page was served (cached), or None."""
    cached = cache.get(module_url)
    if cached is not None and cache.fresh(cached):
        return cached.parsed
    module = fetch(upstream, module_url, host_header, MAX_MODULE_BYTES, cached.etag if cached else None)
    if module is None:
        return cached.parsed if cached is not None else None  # a slow upstream: what was known stands
    if module.status == 304 and cached is not None:
        cache.touch(module_url)
        return cached.parsed
    if module.status != 200:
        cache.put(module_url, None, None, 0)
        return None
    parsed, size = _map_of(upstream, module_url, module.body, host_header)
    cache.put(module_url, parsed, module.etag, size + 256)
    return parsed


def _map_of(upstream: Upstream, module_url: str, body: bytes, host_header: str) -> tuple[ParsedMap | None, int]:
    reference = mapping_url(body)
    if reference is None:
        return None, 0
    data = data_url_bytes(reference)
    if data is None and not reference.startswith("data:"):
        address = map_address(module_url, reference)
        answer = fetch(upstream, address, host_header, MAX_MAP_BYTES) if address else None
        data = answer.body if answer is not None and answer.status == 200 else None
    if not data or len(data) > MAX_MAP_BYTES:
        return None, 0
    parsed = gevent.get_hub().threadpool.apply(parse_map, (data,))
    return parsed, len(data)

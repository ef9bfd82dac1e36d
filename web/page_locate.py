"""``POST /__devhost__/page/locate?pageURL=&chatTarget=``: positions of the page's modules (or of
the dev build's files) as files of its checkout.

On a routed hostname only, for a page of that hostname (edge.page_directory, the Chat API's
scoping), with the exact Origin every state-changing request needs (web/app.py). Body
``{positions: [{url, line, column} | {file, line, column?}, ...]}`` (at most 200); answer
``{positions: [{file, line, column?} | null, ...]}`` in the same order, ``file`` relative to the
checkout. A ``url`` is read only when it is on the page's own origin, and then only from that
hostname's upstream (web/module_fetch.py); any other is null, never fetched. Modules are read
for at most LOCATE_BUDGET seconds a request; those left are null.
"""
from __future__ import annotations

import time

import bottle

from web import edge
from web.edge import Refusal, json_answer, refusals_as_json
# The source maps' reader (symbolic) and the module fetcher are imported at the first locate:
# the daemon's start needs only the route (see install).

LOCATE_BUDGET = 10.0  # seconds of reading modules for one request (each read is bounded too)


def install(app: bottle.Bottle, context) -> None:
    request = bottle.request

    @app.post("/__devhost__/page/locate")
    @refusals_as_json
    def locate_route():
        from web.proxy.upstream import Upstream
        from web.source_maps import Invalid, parse_positions
        hostname = edge.request_hostname(context, request.environ)
        if hostname is None:
            raise Refusal(403, "positions are located for a routed page: ask on the page's own hostname")
        checkout = edge.query_directory(context, request)
        service = context.manifests.current().service_for_host(hostname)
        try:
            positions = parse_positions(edge.json_body(request))
        except Invalid as exc:
            raise Refusal(400, str(exc)) from None
        host = request.environ.get("HTTP_HOST") or ""
        upstream = Upstream.parse(service.upstream) if service is not None and service.upstream else None
        return json_answer({"positions": locate(positions, upstream, f"http://{host}", host,
                                                service.root if service is not None else checkout, checkout)})


def locate(positions: list[dict], upstream, page_origin: str, host_header: str, dev_root: str,
           checkout: str) -> list[dict | None]:
    """Each position as ``{file, line, column?}`` of the checkout, or None. ``dev_root``: the
    folder the dev server serves (the service's root), which root-relative paths start from.
    ``upstream``: the service's (web/proxy/upstream.Upstream), or None."""
    from web.module_fetch import module_map, same_origin
    from web.source_maps import file_of, source_file
    maps: dict[str, object] = {}
    answer = []
    deadline = time.monotonic() + LOCATE_BUDGET
    for position in positions:
        if "file" in position:
            file = file_of(position["file"], dev_root, checkout)
            place = {key: position[key] for key in ("line", "column") if key in position}
            answer.append(None if file is None else {"file": file, **place})
            continue
        url = position["url"]
        if upstream is None or not same_origin(url, page_origin):
            answer.append(None)  # not served by this page's upstream: nothing is fetched
            continue
        if url not in maps:
            # Past the budget, the modules not read yet locate nothing: the answer never waits long.
            maps[url] = module_map(upstream, url, host_header) if time.monotonic() < deadline else None
        parsed = maps[url]
        found = parsed.lookup(position["line"], position["column"]) if parsed is not None else None
        file = source_file(found[0], url, dev_root, checkout) if found else None
        answer.append(None if file is None else {"file": file, "line": found[1], "column": found[2]})
    return answer

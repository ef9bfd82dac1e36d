"""web/route_table.py: bottle's route table, its combined regexes built at the first request, routes as bottle's."""
from __future__ import annotations

import bottle
import pytest

from web.route_table import RouteTable, with_route_table

RULES = [("/__devhost__/config.json", "GET"), ("/__devhost__/chats/<id>", "GET"), ("/__devhost__/chats/<id>", "DELETE"),
         ("/__devhost__/chats/<id>/items/<n:int>", "GET"), ("/__devhost__/files/<path:path>", "GET"),
         ("/__devhost__/<path:path>", "ANY")]
PATHS = [("GET", "/__devhost__/config.json"), ("GET", "/__devhost__/chats/a1"), ("DELETE", "/__devhost__/chats/a1"),
         ("HEAD", "/__devhost__/chats/a1"), ("GET", "/__devhost__/chats/a1/items/7"),
         ("GET", "/__devhost__/files/a/b.js"), ("POST", "/__devhost__/chats/a1"), ("PUT", "/nowhere")]


def matched(router, method, path):
    try:
        target, args = router.match({"REQUEST_METHOD": method, "PATH_INFO": path})
        return target, args
    except bottle.HTTPError as error:
        return error.status_code, error.headers.get("Allow")


def filled(router):
    for i, (rule, method) in enumerate(RULES):
        router.add(rule, method, f"target{i}")
    return router


def test_it_matches_every_request_as_bottle_s_own_router_does():
    ours, bottles = filled(RouteTable()), filled(bottle.Router())
    assert [matched(ours, *request) for request in PATHS] == [matched(bottles, *request) for request in PATHS]
    assert matched(ours, "GET", "/__devhost__/chats/a1/items/7") == ("target3", {"id": "a1", "n": 7})


def test_a_route_added_after_a_request_is_matched_by_the_next():
    router = filled(RouteTable())
    assert matched(router, "GET", "/__devhost__/late/x") == ("target5", {"path": "late/x"})
    router.add("/__devhost__/late/<name>", "GET", "late")
    assert matched(router, "GET", "/__devhost__/late/x") == ("late", {"name": "x"})


def test_a_bad_route_is_refused_when_it_is_added():
    with pytest.raises(bottle.RouteSyntaxError):
        RouteTable().add("/__devhost__/<bad:re:(>", "GET", "bad")


def test_an_app_takes_it_before_its_first_route_only():
    app = with_route_table(bottle.Bottle())
    assert isinstance(app.router, RouteTable)
    app.route("/x/<name>", callback=lambda name: name)
    assert app.router.match({"REQUEST_METHOD": "GET", "PATH_INFO": "/x/y"})[1] == {"name": "y"}
    with pytest.raises(AssertionError):
        with_route_table(app)

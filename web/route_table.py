"""The route table of the daemon's bottle app: bottle's Router, with its combined regexes built
at the first request instead of at every route added.

bottle (0.13) rebuilds and compiles the one regex of all of a method's dynamic routes each time
a route is added: with the ~35 routes devhostd installs that is quadratic, ~5 ms of a ~60 ms
start-up beyond the import floor. Building each method's regex once, when the table is first
matched against, gives the same table: a route's own pattern is still compiled (and a bad one
refused with RouteSyntaxError) when it is added.
"""
from __future__ import annotations

import bottle


class RouteTable(bottle.Router):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stale: set[str] = set()  # methods whose combined regexes are behind their routes

    def _compile(self, method):
        self._stale.add(method)
        self.dyna_regexes.pop(method, None)  # never an outdated one: match builds it first

    def match(self, environ):
        while self._stale:  # re.compile never yields to the hub: no other greenlet sees a partial table
            super()._compile(self._stale.pop())
        return super().match(environ)


def with_route_table(app: bottle.Bottle) -> bottle.Bottle:
    """``app``, routed by a RouteTable (before any route is added to it)."""
    assert not app.routes, "the route table replaces bottle's before the first route"
    # Bottle refuses to set an attribute it already has (its guard against plugins that clash),
    # and its __init__ made the router: this replaces it in place, as that __init__ would have.
    vars(app)["router"] = RouteTable()
    return app

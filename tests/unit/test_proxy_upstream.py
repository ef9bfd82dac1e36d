"""The upstream a request goes to (web/proxy/upstream.py): only ever the manifest's, with the request's path."""
from __future__ import annotations

from web.proxy.upstream import Upstream, request_target


def test_the_upstream_path_is_only_ever_a_path_on_the_manifests_upstream():
    upstream = Upstream.parse("http://127.0.0.1:3000/base/")
    assert (upstream.host, upstream.port, upstream.base_path) == ("127.0.0.1", 3000, "/base")
    assert request_target({"PATH_INFO": "/a b/ü", "QUERY_STRING": "x=%20"}, upstream) == "/base/a%20b/%FC?x=%20"
    # An absolute-form request line names another host: only its path is kept.
    assert request_target({"PATH_INFO": "http://evil.example/steal"}, upstream) == "/base/steal"
    assert Upstream.parse("https://localhost").port == 443

"""Every HTTP route fuzzed from the OpenAPI document (schemathesis: inputs that fit the schema,
and inputs that do not), against a real daemon: never a 5xx, never a `bug:` line (the daemon
fixture fails the test on one), and the daemon still answers afterwards.

The document itself is checked against the code: it names exactly the routes the daemon serves.
"""
from __future__ import annotations

import re

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.openapi import from_dict

from tests.upstream_app import proxied_stack, upstream  # noqa: F401 - fixtures
from web.openapi import UNDOCUMENTED, document

EXAMPLES = 300  # per route and mode in CI (~5,700 requests sent); --long: 3,000


def _rule_pattern(rule: str) -> re.Pattern:
    """A bottle rule as a regex: <name:re:X> is X, <name:path> anything, <name> one segment."""
    pattern = ""
    for literal, wildcard in re.findall(r"([^<]*)(<[^>]+>)?", rule):
        pattern += re.escape(literal)
        if wildcard:
            inner = wildcard[1:-1]
            pattern += inner.split(":re:", 1)[1] if ":re:" in inner else ".+" if inner.endswith(":path") else "[^/]+"
    return re.compile(f"^{pattern}$")


def test_the_document_names_exactly_the_routes_the_daemon_serves():
    from web.app import Context, DevhostApp
    from web.core.extension import CoreExtension
    from web.server import EXTENSIONS
    context = Context(manifests=None, registry=None, catalog=None, panels=None, address="127.0.0.1", port=1,
                      source_root=None)
    app = DevhostApp(context, extensions=[*EXTENSIONS, CoreExtension()])
    served = {(route.rule, route.method.lower()) for route in app.bottle.routes
              if route.rule not in UNDOCUMENTED and route.method != "HEAD"}
    documented = {(path, method) for path, methods in document()["paths"].items() for method in methods}
    samples = {(re.sub(r"\{[^}]+\}", "x", path), method) for path, method in documented}
    for rule, method in served:
        assert any(method == m and _rule_pattern(rule).match(sample) for sample, m in samples), (rule, method)
    for sample, method in samples:
        assert any(method == m and _rule_pattern(rule).match(sample) for rule, m in served), (sample, method)


def test_the_daemon_serves_the_document(daemon):
    answer = requests.get(f"http://127.0.0.1:{daemon.port}/__devhost__/openapi.json",
                          headers={"Host": daemon.host()}, timeout=10)
    assert answer.status_code == 200 and answer.json() == document()


@pytest.fixture
def examples(long_mode) -> int:
    return EXAMPLES * 10 if long_mode else EXAMPLES


def test_every_route_takes_fuzzed_requests_without_a_server_error(daemon, examples):
    schema = from_dict(document())
    session = requests.Session()
    base = f"http://127.0.0.1:{daemon.port}"
    control = daemon.control_origin.split("//")[1]
    sent, failures = [0], []

    for result in schema.get_all_operations():
        operation = result.ok()
        # The core is the control origin's; every other route is tried from a routed page.
        host = control if operation.path == "/__devhost__/core" else daemon.host()
        headers = {"Host": host, "Origin": f"http://{host}", "Authorization": f"Bearer {daemon.core_token}"}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @settings(max_examples=examples, database=None, deadline=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(generation_mode=mode))
            def fuzz(case):
                try:
                    response = case.call(base_url=base, session=session, headers=headers, timeout=30)
                except (requests.ConnectionError, ValueError) as exc:
                    # A request the client library cannot even send (or that devhostd closed on
                    # as malformed) is not a server error; the next one must still be answered.
                    failures.append(("unsendable", operation.label, repr(exc)[:200]))
                    return
                sent[0] += 1
                if response.status_code >= 500:
                    failures.append((response.status_code, operation.label, case.path_parameters, case.query,
                                     str(getattr(case, "body", ""))[:200], response.text[:300]))
            try:
                fuzz()
            except Unsatisfiable:
                pass  # nothing invalid to make of a route that takes no input
    server_errors = [f for f in failures if f[0] != "unsendable"]
    assert not server_errors, server_errors[:5]
    print(f"fuzzed {sent[0]} requests over {len(document()['paths'])} paths; 0 server errors")
    assert sent[0] >= examples * 10  # most cases really went out
    assert requests.get(f"{base}/__devhost__/config.json", headers={"Host": daemon.host()}, timeout=10).ok

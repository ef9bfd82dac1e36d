"""The origin is the only boundary: Host allow-list, exact Origin on state changes and upgrades."""
from __future__ import annotations

import pytest
import websocket


def test_a_foreign_host_header_is_refused_everywhere(daemon):
    # A DNS-rebinding page reaches 127.0.0.1 under a name of its own.
    for path in ("/__devhost__/config.json", f"/__devhost__/chat/sessions?{daemon.query()}", "/"):
        status, body = daemon.request("GET", path, host=f"evil.example:{daemon.port}", origin=None)
        assert status == 403 and "not served here" in body["error"]
    status, _ = daemon.request("GET", "/__devhost__/config.json", host="app.localhost:1", origin=None)
    assert status == 403  # the right name on the wrong port is another origin


def test_the_control_origin_and_routed_hostnames_are_served(daemon):
    status, config = daemon.request("GET", "/__devhost__/config.json",
                                    host=daemon.control_origin.removeprefix("http://"), origin=None)
    assert status == 200 and config["controlOrigin"] == daemon.control_origin
    status, _ = daemon.request("GET", "/__devhost__/config.json", origin=None)
    assert status == 200


@pytest.mark.parametrize("origin", [None, "http://evil.example", "http://other.localhost:{port}",
                                    "https://app.localhost:{port}", "null"])
def test_state_changes_need_exactly_the_pages_own_origin(daemon, origin):
    origin = origin.format(port=daemon.port) if origin else None
    body = {"harness": "claude-code", "pageURL": daemon.page(), "target": "project"}
    status, answer = daemon.request("POST", "/__devhost__/chat/sessions", body, origin=origin)
    assert status == 403 and "Origin" in answer["error"]
    assert daemon.sessions() == []  # nothing was created
    status, _ = daemon.request("PUT", "/__devhost__/chat/panel", {"position": None}, origin=origin)
    assert status == 403


def test_a_websocket_upgrade_needs_the_pages_own_origin(daemon, mock):
    record = daemon.create_session()
    for origin in (None, "http://evil.example", f"http://other.localhost:{daemon.port}"):
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            daemon.connect(record["id"], origin=origin)
        assert refused.value.status_code == 403
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        url = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/chat?sessionId={record['id']}&{daemon.query()}"
        websocket.create_connection(url, host=f"evil.example:{daemon.port}", origin=f"http://evil.example:{daemon.port}")
    assert refused.value.status_code == 403


def test_websocket_refusals_come_before_the_upgrade(daemon, mock):
    record = daemon.create_session()
    base = f"ws://127.0.0.1:{daemon.port}/__devhost__/ws/chat"
    options = {"host": daemon.host(), "origin": f"http://{daemon.host()}"}
    cases = [
        (f"{base}?{daemon.query()}", 400),  # no sessionId
        (f"{base}?sessionId=nope&{daemon.query()}", 404),
        (f"{base}?sessionId={record['id']}&pageURL={daemon.page()}", 400),  # no chatTarget
        (f"{base}?sessionId={record['id']}&pageURL={daemon.page()}&chatTarget=elsewhere", 400),
    ]
    for url, expected in cases:
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(url, **options)
        assert refused.value.status_code == expected, url


def test_a_session_is_invisible_from_another_projects_page(daemon, mock):
    record = daemon.create_session()
    assert daemon.sessions("other.localhost") == []
    status, _ = daemon.close_session(record["id"], hostname="other.localhost")
    assert status == 404
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        daemon.connect(record["id"], hostname="other.localhost")
    assert refused.value.status_code == 404


def test_a_page_cannot_name_another_hostnames_page(daemon):
    body = {"harness": "claude-code", "pageURL": daemon.page("other.localhost"), "target": "project"}
    status, answer = daemon.request("POST", "/__devhost__/chat/sessions", body)  # sent to app.localhost
    assert status == 400 and "app.localhost" in answer["error"]


def test_no_cors_headers_are_ever_sent(daemon):
    connection_headers = _headers(daemon, "/__devhost__/config.json")
    assert not any(name.lower().startswith("access-control-") for name in connection_headers)


def _headers(daemon, path):
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": daemon.host(), "Origin": "http://evil.example"})
        response = connection.getresponse()
        response.read()
        return dict(response.getheaders())
    finally:
        connection.close()

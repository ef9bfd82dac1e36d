"""web.security: loopback binds, the Host allow-list (DNS rebinding) and the Origin rule."""
import pytest

from web.security import allowed_hosts, format_host, host_refusal, is_loopback, origin_refusal

PORT = 7777
CONTROL = "127.0.0.1:7777"
ALLOWED = allowed_hosts(CONTROL, ["app.localhost", "API.localhost"], PORT)


# ---- loopback --------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]"])
def test_every_loopback_address_is_loopback(address):
    assert is_loopback(address)


@pytest.mark.parametrize("address", ["10.0.0.1", "0.0.0.0", "::", "192.168.1.10", "localhost", "127.0.0.1.evil.com",
                                     "127.0.0.1:7777", "", "fe80::1"])
def test_other_addresses_and_names_are_not_loopback(address):
    # Classified as an IP address, never by a string prefix, and a name is never trusted.
    assert not is_loopback(address)


def test_an_ipv6_address_is_written_in_brackets_in_a_host():
    assert format_host("::1", PORT) == "[::1]:7777"
    assert format_host("127.0.0.1", PORT) == "127.0.0.1:7777"


# ---- Host allow-list -------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["127.0.0.1:7777", "app.localhost:7777", "api.localhost:7777", "APP.LOCALHOST:7777"])
def test_the_control_host_and_routed_hostnames_with_the_daemons_port_are_served(host):
    assert host_refusal(host, ALLOWED) is None


@pytest.mark.parametrize("host", [
    "app.localhost:8080",        # another port
    "app.localhost",             # no port
    "127.0.0.1:8080",
    "localhost:7777",            # not routed
    "evil.example:7777",         # a DNS-rebinding page's own name
    "app.localhost.evil.example:7777",
    "xapp.localhost:7777",
    "app.localhost:7777 ",
    "",
    None,
])
def test_any_other_host_is_refused(host):
    message = host_refusal(host, ALLOWED)
    assert message and "is not served here; use the control origin or a routed hostname" in message


def test_the_allow_list_is_exact_names_with_the_port():
    assert ALLOWED == frozenset({"127.0.0.1:7777", "app.localhost:7777", "api.localhost:7777"})


# ---- Origin ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_a_read_needs_no_origin(method):
    assert origin_refusal(method, False, None, "app.localhost:7777") is None


@pytest.mark.parametrize("method, upgrade", [("POST", False), ("PUT", False), ("DELETE", False), ("GET", True)])
def test_a_state_change_or_websocket_upgrade_from_the_pages_own_origin_is_allowed(method, upgrade):
    assert origin_refusal(method, upgrade, "http://app.localhost:7777", "app.localhost:7777") is None
    assert origin_refusal(method, upgrade, "http://127.0.0.1:7777", "127.0.0.1:7777") is None


@pytest.mark.parametrize("method, upgrade", [("POST", False), ("PUT", False), ("GET", True)])
def test_a_state_change_or_websocket_upgrade_without_origin_is_refused(method, upgrade):
    message = origin_refusal(method, upgrade, None, "app.localhost:7777")
    assert message == "this request changes state, so it needs an Origin header equal to http://app.localhost:7777"


@pytest.mark.parametrize("origin", [
    "null",                                # sandboxed frames, file: pages
    "http://app.localhost:8080",           # other port
    "http://app.localhost",                # no port
    "https://app.localhost:7777",          # other scheme
    "http://api.localhost:7777",           # another routed page: a different origin
    "http://127.0.0.1:7777",               # the control origin, from a routed page
    "http://app.localhost:7777/",          # an origin never has a path
    "http://evil.example:7777",
    "",
])
def test_any_origin_other_than_the_requests_own_is_refused(origin):
    for method, upgrade in (("POST", False), ("PUT", False), ("GET", True)):
        message = origin_refusal(method, upgrade, origin, "app.localhost:7777")
        assert message and "may not change state here; only http://app.localhost:7777 may" in message


def test_origin_and_host_compare_without_regard_to_case():
    assert origin_refusal("POST", False, "http://App.Localhost:7777", "APP.localhost:7777") is None


def test_a_rebinding_page_passes_origin_equals_host_so_host_is_checked_first():
    # The attacker's page and its requests share the attacker's name: Origin matches Host.
    host, origin = "evil.example:7777", "http://evil.example:7777"
    assert origin_refusal("POST", False, origin, host) is None
    assert host_refusal(host, ALLOWED) is not None

"""A page's boundary is its origin (pages carry no token): Host and Origin checks, loopback binds.

(Who may connect at all is web/connections.py's: the daemon's own user. The chat core also
needs its secret: web/auth.py.)

- Every request's Host must be the control origin's or a routed hostname's (with the
  daemon's port): a DNS-rebinding page reaches the daemon under a foreign name and is refused.
- Every state-changing request and every WebSocket upgrade must carry an Origin that is
  exactly the origin the request was sent to. Comparing Origin with Host alone would be what
  a rebinding page passes, which is why Host is checked against the allow-list first.
"""
from __future__ import annotations

import ipaddress

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def format_host(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def allowed_hosts(control_host: str, routed_hostnames, port: int) -> frozenset[str]:
    return frozenset({control_host.lower(), *(f"{name.lower()}:{port}" for name in routed_hostnames)})


def host_refusal(host_header: str | None, allowed: frozenset[str]) -> str | None:
    host = (host_header or "").lower()
    if host in allowed:
        return None
    return f"Host {host_header!r} is not served here; use the control origin or a routed hostname"


def origin_refusal(method: str, is_upgrade: bool, origin: str | None, host_header: str) -> str | None:
    if method in SAFE_METHODS and not is_upgrade:
        return None
    expected = f"http://{host_header.lower()}"
    if origin is None:
        return f"this request changes state, so it needs an Origin header equal to {expected}"
    if origin.lower() != expected:
        return f"Origin {origin!r} may not change state here; only {expected} may"
    return None

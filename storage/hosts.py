"""Whether a service's ``host`` leads a browser to devhostd at all.

devhostd listens on loopback only, so a routed hostname works only if the browser resolves it
to this machine. Browsers resolve ``localhost`` and every ``*.localhost`` name to loopback by
themselves (RFC 6761; no DNS, no /etc/hosts entry needed), so those always work. Any other name
works only where the system resolver maps it to loopback (an /etc/hosts line, a local DNS):
``host = "pantry"`` usually resolves nowhere, and the page would never load.
"""
from __future__ import annotations

import ipaddress
import re
import socket


def routability_problem(host: str, service: str = "app") -> str | None:
    """None when a browser on this machine reaches devhostd at ``host``; else what to write instead
    (``service``: the service's name, the suggestion for an address, which has no name to keep)."""
    if host == "localhost" or host.endswith(".localhost"):
        return None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    label = re.sub(r"[^a-z0-9-]+", "-", service.lower()).strip("-") or "app"
    suggestion = f"{label if literal else host.split('.')[0]}.localhost"
    why = (f"write \"{suggestion}\" instead: browsers resolve every *.localhost name to this machine's "
           f"loopback address by themselves, where devhostd listens")
    if literal is not None:
        return None if literal.is_loopback else f"{host} is not a loopback address; {why}"
    try:
        # The system resolver, as the browser asks it (/etc/hosts first). Under gevent this runs on
        # its resolver's threads, so a slow DNS server does not stop the daemon's hub.
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except (socket.gaierror, UnicodeError):
        return f"{host} resolves to no address on this machine; {why}"
    elsewhere = sorted(a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_loopback)
    if elsewhere:
        return f"{host} resolves to {', '.join(elsewhere)}, not to this machine's loopback; {why}"
    return None

"""Whether a service's ``host`` leads a browser to devhostd at all.

devhostd listens on loopback only, so a routed hostname works only if the browser resolves it
to this machine. Browsers resolve ``localhost`` and every ``*.localhost`` name to loopback by
themselves (RFC 6761; no DNS, no /etc/hosts entry needed), so those always work. Any other name
works only where the system resolver maps it to an address devhostd listens on, 127.0.0.1 or
::1 (an /etc/hosts line, a local DNS): ``host = "pantry"`` usually resolves nowhere, and a name
on 127.0.1.1 (Debian's line for the machine's own name) reaches no devhostd; the page would never
load. An address (``127.0.0.2``) never worked either: devhostd listens on one address only.
"""
from __future__ import annotations

import ipaddress
import re
import socket


# Where devhostd listens (``--host`` is 127.0.0.1 or ::1), and so where a page's name must lead.
LISTENING = frozenset({"127.0.0.1", "::1"})
# The resolver's answers that say the name has no address (not that it could not ask).
_NO_SUCH_NAME = frozenset(code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None),
                                            getattr(socket, "EAI_ADDRFAMILY", None)) if code is not None)


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
        return f"{host} is an address, not a name a page can be routed by; {why}"
    try:
        # The system resolver, as the browser asks it (/etc/hosts first). Under gevent this runs on
        # its resolver's threads, so a slow DNS server does not stop the daemon's hub.
        addresses = {info[4][0].split("%")[0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except socket.gaierror as exc:
        if exc.errno not in _NO_SUCH_NAME:
            # The resolver could not answer now (no network, a VPN coming up: EAI_AGAIN): that is
            # no proof the name is wrong, and a name that worked yesterday must not stop the start.
            return None
        return f"{host} resolves to no address on this machine; {why}"
    except UnicodeError:
        return f"{host} resolves to no address on this machine; {why}"
    elsewhere = sorted(addresses - LISTENING)
    if elsewhere:
        # 127.0.1.1 too: Debian's /etc/hosts gives it to the machine's own name, but devhostd is not there
        return f"{host} resolves to {', '.join(elsewhere)}, where devhostd does not listen; {why}"
    return None

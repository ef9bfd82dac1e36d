"""What to say when devhostd cannot listen on its port: is it devhostd already running there?

The usual reason a first start fails is a devhostd started earlier (in another terminal) on the
same port. The port is asked for devhostd's own stack route, which any devhostd answers on its
control origin, with a short timeout: a program that holds the port but never answers must not
hold up the message.
"""
from __future__ import annotations

import errno
import http.client
import json

from web.security import format_host

PROBE_TIMEOUT = 1.0  # seconds; loopback answers in well under a millisecond


def cannot_listen_message(host: str, port: int, exc: OSError) -> str:
    address = format_host(host, port)
    if exc.errno != errno.EADDRINUSE:
        return f"cannot listen on {address}: {exc.strerror or exc}"
    stack = running_devhostd(host, port)
    if stack is not None:
        return (f"devhostd already runs on {address} (stack {stack.get('name')!r}; its page: "
                f"{stack.get('controlOrigin')}/): use that one, stop it, or start this one with --port 0 "
                f"(a free port, printed on start)")
    return (f"port {port} on {host} is taken by another program (it does not answer as a devhostd of yours): "
            f"stop it, or pass --port 0 to pick a free port (printed on start)")


def running_devhostd(host: str, port: int) -> dict | None:
    """The stack of the devhostd answering at host:port (its /__devhost__/config.json), else None."""
    connection = http.client.HTTPConnection(host, port, timeout=PROBE_TIMEOUT)
    try:
        connection.request("GET", "/__devhost__/config.json", headers={"Host": format_host(host, port)})
        response = connection.getresponse()
        if response.status != 200:
            return None
        value = json.loads(response.read(65536))
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    if isinstance(value, dict) and isinstance(value.get("features"), dict) and "controlOrigin" in value:
        return value
    return None

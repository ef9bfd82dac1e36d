"""What the agent-side commands share (``devhostd visual …``, ``devhostd page …``): the chat, the
daemon and the token from the agent's environment, and one request posted to the chat core.

devhostd puts ``DEVHOSTD_URL`` (its control origin), ``DEVHOSTD_CHAT`` (the chat) and
``DEVHOSTD_TOKEN`` (that chat's token, good for its agent-side requests only) in each CLI's
environment. Run by the person without a token, the core's secret is read from
``<state-dir>/core-token`` and sent only to a loopback address.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

from storage import core_token
from web.security import is_loopback


def add_arguments(parser: argparse.ArgumentParser, default_state_dir: str) -> None:
    parser.add_argument("--chat", default=os.environ.get("DEVHOSTD_CHAT"),
                        help="the chat's id (default: $DEVHOSTD_CHAT, set for an agent devhostd started)")
    parser.add_argument("--url", default=os.environ.get("DEVHOSTD_URL"),
                        help="the daemon's control origin (default: $DEVHOSTD_URL)")
    parser.add_argument("--state-dir", metavar="DIR", default=default_state_dir,
                        help="the daemon's state folder, whose core-token is sent when $DEVHOSTD_TOKEN is not set "
                             "(default: the daemon's default)")


def fail(prog: str, message: str) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return 1


def request(args, prog: str, kind: str, payload: dict, what: str):
    """The result of one core request for ``args.chat``, or an int exit status (1) once the
    problem was said on stderr. ``what``: the thing asked, for the messages."""
    if not args.chat or not args.url:
        return fail(prog, f"no chat to {what}: run this from an agent that devhostd started "
                          "(it sets DEVHOSTD_CHAT and DEVHOSTD_URL), or pass --chat and --url")
    token = os.environ.get("DEVHOSTD_TOKEN")
    if token is None:
        host = urllib.parse.urlsplit(args.url).hostname or ""
        if host != "localhost" and not is_loopback(host):
            # The person's secret goes only to a daemon on this machine, whatever the URL says.
            return fail(prog, f"{args.url} is not on this machine: devhostd's secret is sent only to a "
                              "loopback address")
        token = core_token.read(args.state_dir)
    if token is None:
        return fail(prog, "no token to send: run this from an agent that devhostd started (it sets "
                          f"DEVHOSTD_TOKEN), or as the person who runs devhostd, whose secret is read from "
                          f"{core_token.token_path(args.state_dir)} (pass --state-dir for another state folder)")
    body = json.dumps({"id": kind, "type": kind, "payload": {"chatId": args.chat, **payload}}).encode()
    posted = urllib.request.Request(args.url.rstrip("/") + "/__devhost__/core", data=body,
                                    # Not a browser: it names the control origin as its own, as the
                                    # rule for every state-changing request asks.
                                    headers={"Content-Type": "application/json", "Origin": args.url.rstrip("/"),
                                             "Authorization": f"Bearer {token}"},
                                    method="POST")
    try:
        with urllib.request.urlopen(posted, timeout=60) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return fail(prog, f"the daemon refused to {what} ({exc.code}): "
                          f"{exc.read()[:500].decode(errors='replace')}")
    except (OSError, ValueError) as exc:
        return fail(prog, f"could not reach devhostd at {args.url}: {exc} (a sandbox without network "
                          "cannot: run the command outside it)")
    if not answer.get("ok"):
        error = answer.get("error") or {}
        return fail(prog, f"{error.get('code')}: {error.get('message')}")
    return answer["result"]

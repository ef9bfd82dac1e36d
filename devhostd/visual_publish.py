"""``devhostd visual publish``: how an agent shows the person a page, from its own shell.

    devhostd visual publish --title "Benchmark results" page.html [--max-height 600] [--chat ID]

It sends the file to the daemon that started the agent's CLI: that daemon puts its control
origin (``DEVHOSTD_URL``), the chat's id (``DEVHOSTD_CHAT``) and that chat's token
(``DEVHOSTD_TOKEN``, good for its own visuals only) in the CLI's environment, and the command
posts ``chat.publishVisual`` to ``/__devhost__/core`` there. Run by the person, without an
agent's token, it sends the core's secret from ``<state-dir>/core-token``. It prints the visual's
id, or what to change, and exits 0 or 1. The appended prompt tells the agent it exists
(actors/core/visuals.publish_hint).
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


def main(argv: list[str], default_state_dir: str) -> int:
    parser = argparse.ArgumentParser(prog="devhostd visual", description="Publish an HTML page in a devhost chat.")
    sub = parser.add_subparsers(dest="action", required=True)
    publish = sub.add_parser("publish", help="publish FILE as a visual of the chat")
    publish.add_argument("file", help="one self-contained HTML document")
    publish.add_argument("--title", required=True, help="a short title that says what the page shows")
    publish.add_argument("--chat", default=os.environ.get("DEVHOSTD_CHAT"),
                         help="the chat's id (default: $DEVHOSTD_CHAT, set for an agent devhostd started)")
    publish.add_argument("--max-height", type=int, help="the frame's largest height in CSS pixels (80..2000)")
    publish.add_argument("--url", default=os.environ.get("DEVHOSTD_URL"),
                         help="the daemon's control origin (default: $DEVHOSTD_URL)")
    publish.add_argument("--state-dir", metavar="DIR", default=default_state_dir,
                         help="the daemon's state folder, whose core-token is sent when $DEVHOSTD_TOKEN is not set "
                              "(default: the daemon's default)")
    args = parser.parse_args(argv)
    if not args.chat or not args.url:
        print("devhostd visual: no chat to publish in: run this from an agent that devhostd started "
              "(it sets DEVHOSTD_CHAT and DEVHOSTD_URL), or pass --chat and --url", file=sys.stderr)
        return 1
    try:
        with open(args.file, encoding="utf-8") as handle:
            html = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"devhostd visual: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1
    token = os.environ.get("DEVHOSTD_TOKEN")
    if token is None:
        host = urllib.parse.urlsplit(args.url).hostname or ""
        if host != "localhost" and not is_loopback(host):
            # The person's secret goes only to a daemon on this machine, whatever the URL says.
            print(f"devhostd visual: {args.url} is not on this machine: devhostd's secret is sent only to a "
                  "loopback address", file=sys.stderr)
            return 1
        token = core_token.read(args.state_dir)
    if token is None:
        print("devhostd visual: no token to send: run this from an agent that devhostd started (it sets "
              f"DEVHOSTD_TOKEN), or as the person who runs devhostd, whose secret is read from "
              f"{core_token.token_path(args.state_dir)} (pass --state-dir for another state folder)", file=sys.stderr)
        return 1
    payload = {"chatId": args.chat, "title": args.title, "html": html}
    if args.max_height is not None:
        payload["maxHeight"] = args.max_height
    body = json.dumps({"id": "publish", "type": "chat.publishVisual", "payload": payload}).encode()
    request = urllib.request.Request(args.url.rstrip("/") + "/__devhost__/core", data=body,
                                     # Not a browser: it names the control origin as its own, as the
                                     # rule for every state-changing request asks.
                                     headers={"Content-Type": "application/json", "Origin": args.url.rstrip("/"),
                                              "Authorization": f"Bearer {token}"},
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        print(f"devhostd visual: the daemon refused the page ({exc.code}): {exc.read()[:500].decode(errors='replace')}",
              file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"devhostd visual: could not reach devhostd at {args.url}: {exc} (a sandbox without network "
              "cannot: run the command outside it)", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        error = answer.get("error") or {}
        print(f"devhostd visual: {error.get('code')}: {error.get('message')}", file=sys.stderr)
        return 1
    visual = answer["result"]["visual"]
    print(f"published visual {visual['id']} ({visual['size']} bytes): the person sees it in the chat")
    return 0

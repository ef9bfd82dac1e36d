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

from devhostd.agent_request import add_arguments, fail, request

PROG = "devhostd visual"


def main(argv: list[str], default_state_dir: str) -> int:
    parser = argparse.ArgumentParser(prog="devhostd visual", description="Publish an HTML page in a devhost chat.")
    sub = parser.add_subparsers(dest="action", required=True)
    publish = sub.add_parser("publish", help="publish FILE as a visual of the chat")
    publish.add_argument("file", help="one self-contained HTML document")
    publish.add_argument("--title", required=True, help="a short title that says what the page shows")
    publish.add_argument("--max-height", type=int, help="the frame's largest height in CSS pixels (80..2000)")
    add_arguments(publish, default_state_dir)
    args = parser.parse_args(argv)
    if not args.chat or not args.url:
        return request(args, PROG, "chat.publishVisual", {}, "publish in")
    try:
        with open(args.file, encoding="utf-8") as handle:
            html = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        return fail(PROG, f"cannot read {args.file}: {exc}")
    payload = {"title": args.title, "html": html}
    if args.max_height is not None:
        payload["maxHeight"] = args.max_height
    result = request(args, PROG, "chat.publishVisual", payload, "publish the page")
    if isinstance(result, int):
        return result
    visual = result["visual"]
    print(f"published visual {visual['id']} ({visual['size']} bytes): the person sees it in the chat")
    return 0

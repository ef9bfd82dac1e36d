"""``devhostd page errors | requests | element SELECTOR``: what the open pages of the agent's own
checkout report, from the agent's shell.

Same environment and token rules as ``devhostd visual publish`` (devhostd/agent_request.py):
the chat's token reads only the pages of that chat's checkout (web/core/pages.py). Prints plain
text an agent reads well, one entry a group of lines, frames as ``file:line``; exit 0 (also when
no page is open: it says so), 1 with words when the daemon cannot be asked.
"""
from __future__ import annotations

import argparse
import json

from devhostd.agent_request import add_arguments, request

PROG = "devhostd page"
KINDS = {"console-error": "console.error", "console-warn": "console.warn", "error": "uncaught error",
         "rejection": "unhandled rejection"}


def main(argv: list[str], default_state_dir: str) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="What the open pages of this chat's checkout report.")
    sub = parser.add_subparsers(dest="action", required=True)
    for name, words in (("errors", "console errors and warnings, uncaught errors and unhandled rejections"),
                        ("requests", "failed requests: the page's fetch/XHR and the proxy's own 5xx and 502")):
        add_arguments(sub.add_parser(name, help=words), default_state_dir)
    element = sub.add_parser("element", help="the element a CSS selector finds on each open page: its source "
                                              "file and line, component chain, text and HTML")
    element.add_argument("selector", help="a CSS selector, e.g. 'button.checkout'")
    add_arguments(element, default_state_dir)
    args = parser.parse_args(argv)
    payload = {"selector": args.selector} if args.action == "element" else {}
    result = request(args, PROG, f"page.{args.action}", payload, f"read the page's {args.action}")
    if isinstance(result, int):
        return result
    print(render(args.action, result))
    return 0


def render(action: str, result: dict) -> str:
    """The core's answer as plain text."""
    pages = result.get("pages") or []
    if not pages:
        return result.get("note") or "no page of this checkout is open"
    return "\n\n".join({"errors": _errors, "requests": _requests, "element": _element}[action](page)
                       for page in pages)


def _heading(page: dict) -> str:
    return f"page {page['url']}" + ("" if page.get("open", True) else " (closed just now: reloading?)")


def _position(value: dict | None) -> str | None:
    if not isinstance(value, dict) or not value.get("file"):
        return None
    return f"{value['file']}:{value.get('line')}" + (f":{value['column']}" if value.get("column") else "")


def _frame(frame: dict) -> str:
    served = f"{frame.get('url')}:{frame.get('line')}:{frame.get('column')}"
    mapped = _position(frame.get("source"))
    where = f"{mapped} (served as {served})" if mapped else served
    return f"    at {frame['fn']} {where}" if frame.get("fn") else f"    at {where}"


def _errors(page: dict) -> str:
    errors = page.get("errors") or []
    lines = [_heading(page) + f": {len(errors)} error{'s' if len(errors) != 1 else ''}"
             + (f" ({page['dropped']} older dropped)" if page.get("dropped") else "")]
    for error in errors:
        count = f" (x{error['count']})" if error.get("count", 1) > 1 else ""
        lines.append(f"- {KINDS.get(error['kind'], error['kind'])}{count}: {error['message']}")
        lines.extend(_frame(frame) for frame in error.get("stack") or [])
    return "\n".join(lines)


def _requests(page: dict) -> str:
    requests = page.get("requests") or []
    lines = [_heading(page) + f": {len(requests)} failed request{'s' if len(requests) != 1 else ''}"]
    for entry in requests:
        outcome = str(entry["status"]) if entry.get("status") is not None else f"network error: {entry.get('error')}"
        by = " (answered by the devhost proxy)" if entry.get("source") == "proxy" else ""
        lines.append(f"- {entry['method']} {entry['url']} -> {outcome}{by}")
        if entry.get("status") is not None and entry.get("error"):
            lines.append(f"    {entry['error']}")
    return "\n".join(lines)


def _element(page: dict) -> str:
    if page.get("error"):
        return f"{_heading(page)}: {page['error']}"
    element = page.get("element")
    if not element:
        return f"{_heading(page)}: no element matches"
    lines = [f"{_heading(page)}: {page.get('count', 1)} element(s) match; the first:",
             f"  <{element.get('tag')}> selector {element.get('selector')}"]
    if _position(element.get("source")):
        lines.append(f"  created at {_position(element['source'])}")
    for component in element.get("components") or []:
        where = _position(component)
        lines.append(f"  in component {component.get('name')}" + (f" ({where})" if where else ""))
    for key in ("id", "role", "name"):
        if element.get(key):
            lines.append(f"  {key}: {element[key]}")
    if element.get("classes"):
        lines.append(f"  classes: {' '.join(element['classes'])}")
    if element.get("box"):
        lines.append(f"  box: {json.dumps(element['box'])}")
    if element.get("text"):
        lines.append(f"  text: {element['text']}")
    if element.get("html"):
        lines.append("  html: " + element["html"].replace("\n", "\n        "))
    return "\n".join(lines)

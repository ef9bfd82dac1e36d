"""What the daemon serves outside /__devhost__/ when no extension does: on the control origin, the
stack's own page; on a routed hostname, a plain page that names it."""
from __future__ import annotations

from urllib.parse import urlencode

import bottle

from web.edge import request_hostname


def plain_page(context):
    """What the daemon serves outside /__devhost__/ when nothing else does: on the control origin,
    the stack's own page (its routed pages, each with its agents' activity, and the manifest)."""
    def app(environ, start_response):
        manifest = context.manifests.current()
        hostname = request_hostname(context, environ)
        if hostname is None:
            body = control_page_html(manifest, context.port, context.manifests.problems())
        else:
            title = bottle.html_escape(f"{manifest.name}: {hostname}")
            body = (f"<!doctype html><meta charset=utf-8><title>{title}</title>"
                    f"<h1>{title}</h1><p>devhostd serves this stack.</p>")
        data = body.encode()
        start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(data))),
                                  ("Cache-Control", "no-store")])
        return [data]
    return app


def control_page_html(manifest, port: int, problems=()) -> str:
    esc = bottle.html_escape
    rows = []
    for service in manifest.services:
        url = f"http://{service.host}:{port}/"
        activity = "/__devhost__/agents/activity?" + urlencode({"pageURL": url, "chatTarget": "project"})
        rows.append(f"<li><a href=\"{esc(url)}\">{esc(url)}</a> &mdash; {esc(service.name)}, "
                    f"<code>{esc(service.root)}</code>"
                    f"{' (proxied to ' + esc(service.upstream) + ')' if service.upstream else ''}"
                    f" &middot; <a href=\"{esc(activity)}\">agents working there</a></li>")
    where = (f"the manifest <code>{esc(manifest.path)}</code>" if manifest.path else
             "no manifest: the folder devhostd was started in is the one routed page (add a "
             "<code>devhost.toml</code> there, or pass <code>--config</code>, to route more)")
    return (f"<!doctype html><html lang=en><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\"><title>{esc(manifest.name)}</title>"
            f"<body style=\"font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 3rem auto; "
            f"padding: 0 1rem\">"
            f"<h1>{esc(manifest.name)}</h1>{problems_html(problems)}"
            f"<p>devhostd serves this stack from {where}. Open a page to chat with "
            f"the coding agents in its checkout (the round button in its corner):</p>"
            f"<ul>{''.join(rows)}</ul></body></html>")


def problems_html(problems) -> str:
    """The manifest's problems, first on the page: a broken edit (the last good manifest serves on)
    and unknown keys, each saying what to write instead."""
    if not problems:
        return ""
    esc = bottle.html_escape
    items = "".join(f"<li><strong>{'Error' if p['level'] == 'error' else 'Warning'}:</strong> {esc(p['message'])}</li>"
                    for p in problems)
    return (f"<section role=alert aria-label=\"Manifest problems\" class=manifest-problems style=\"border: 1px solid "
            f"#c60; background: #fff4e5; padding: 0 1rem; border-radius: 6px\"><h2>The manifest needs a fix</h2>"
            f"<ul>{items}</ul></section>")

"""Where the chat panel sits on the pages of a manifest, kept across reloads (storage/panel.py)."""
from __future__ import annotations

import bottle
import gevent

from storage.panel import PanelError, validate_position
from web.edge import Refusal, json_answer, json_body, refusals_as_json


def install(app, context) -> None:
    request = bottle.request

    @app.route("/__devhost__/chat/panel", method=["GET", "PUT"])
    @refusals_as_json
    def panel():
        manifest = context.manifests.current()
        if manifest.path is None:
            raise Refusal(404, "panel positions are kept per manifest; this daemon runs without one")
        if request.method == "GET":
            return json_answer({"position": context.panels.load(manifest.path)})
        try:
            position = validate_position(json_body(request))
        except PanelError as exc:
            raise Refusal(400, str(exc)) from None
        # fsync and rename on the hub's threadpool: file work never holds the hub.
        gevent.get_hub().threadpool.apply(context.panels.save, (manifest.path, position))
        return json_answer({"position": position})

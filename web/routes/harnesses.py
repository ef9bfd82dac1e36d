"""The CLIs a page may chat with here, and their models (actors/harness_catalog.py)."""
from __future__ import annotations

import bottle

from web import edge
from web.edge import json_answer, refusals_as_json

MODELS_TIMEOUT = 45.0  # each CLI is started to list its models, at the same time


def install(app, context) -> None:
    request = bottle.request

    @app.get("/__devhost__/chat/harnesses")
    @refusals_as_json
    def harnesses():
        directory = edge.page_directory(context, request.environ, request.query.get("pageURL"),
                                        request.query.get("chatTarget"))
        manifest = context.manifests.current()
        return json_answer({"harnesses": edge.ask(context.catalog.harnesses(manifest.commands, directory),
                                                  MODELS_TIMEOUT)})

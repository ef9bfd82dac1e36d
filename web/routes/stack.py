"""What the stack is: its OpenAPI document and its configuration (the routed pages)."""
from __future__ import annotations

import uuid

from web.edge import json_answer, refusals_as_json
from web.openapi import document as openapi_document


# This run of the daemon: a page that saw a conversation open in another run knows a restart
# closed it (the panel says so, and resumes it with the next message).
RUN = uuid.uuid4().hex


def install(app, context) -> None:
    @app.get("/__devhost__/openapi.json")
    @refusals_as_json
    def openapi():
        return json_answer(openapi_document())

    @app.get("/__devhost__/config.json")
    @refusals_as_json
    def config():
        manifest = context.manifests.current()
        return json_answer({
            "name": manifest.name,
            "controlOrigin": context.control_origin,
            "devhostSourceRootPath": context.source_root,
            "manifestPath": manifest.path or "",
            "services": [{"name": s.name, "host": s.host, "url": f"http://{s.host}:{context.port}/",
                          "projectRootPath": s.root, "proxied": bool(s.upstream)} for s in manifest.services],
            "features": {"chat": True},
            # [{level: "error" | "warning", message}]: the panel shows them as a notice
            "manifestProblems": context.manifests.problems(),
            "run": RUN,
        })

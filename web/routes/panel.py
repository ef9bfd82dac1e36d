"""Where the chat panel sits on the pages of a manifest, kept across reloads (storage/panel.py),
and the runtime mode a new conversation of a page's checkout starts in (storage/panel_modes.py)."""
from __future__ import annotations

import bottle
import gevent

from actors.harness.mode_names import RUNTIME_MODES
from storage.panel import PanelError, validate_position
from web import edge
from web.edge import Refusal, json_answer, json_body, refusals_as_json
from web.routes.sessions import remembered_mode


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

    @app.route("/__devhost__/chat/mode", method=["GET", "PUT"])
    @refusals_as_json
    def mode():
        """The mode picked before any conversation of the page's checkout is open (the socket's
        configure remembers it once one is: web/mode_switch.py)."""
        directory = edge.page_directory(context, request.environ, request.query.get("pageURL"),
                                        request.query.get("chatTarget"))
        if context.panel_modes is None:
            raise Refusal(404, "this daemon keeps no panel modes")
        if request.method == "GET":
            return json_answer({"runtimeMode": remembered_mode(context, directory)})
        body = json_body(request)
        picked = body.get("runtimeMode")
        if set(body) != {"runtimeMode"} or picked not in RUNTIME_MODES:
            raise Refusal(400, f'send {{"runtimeMode": "<mode>"}}, the mode one of: {", ".join(RUNTIME_MODES)}')
        try:
            gevent.get_hub().threadpool.apply(context.panel_modes.save, (directory, picked))
        except OSError as exc:
            raise Refusal(503, f"the mode could not be saved ({exc.strerror or exc}); try again") from None
        return json_answer({"runtimeMode": picked})

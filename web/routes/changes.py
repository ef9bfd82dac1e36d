"""A turn's changes for the panel (the Chat API's face of actors/chat/checkpoints.py): read them,
take back a file, a hunk or the whole turn, rewind files and conversation to before it.

    GET  /__devhost__/chat/sessions/<id>/turns/<turnId>/changes
    POST /__devhost__/chat/sessions/<id>/turns/<turnId>/revert   {paths?, hunks?, force?}
    POST /__devhost__/chat/sessions/<id>/turns/<turnId>/rewind   {force?}

Each takes the page's ``pageURL`` and ``chatTarget`` in its query, like the other session routes:
a page reaches only the sessions of its own folder. A revert of files changed since the turn is
409 ``{error, code: "conflict", paths}`` unless ``force``.
"""
from __future__ import annotations

from bottle import request

from web import command_rules as rules
from web import edge
from web.edge import Refusal, json_answer, json_body, refusals_as_json

REWIND_TIMEOUT = 60.0  # files, then the CLI restarted at the earlier message


def _checked(rule, *args):
    try:
        return rule(*args)
    except rules.Invalid as exc:
        raise Refusal(400, str(exc)) from None


def install(app, context) -> None:
    def chat_of(session_id):
        chat, _record = edge.page_session(context, session_id, edge.query_directory(context, request))
        return chat

    @app.get("/__devhost__/chat/sessions/<session_id>/turns/<turn_id>/changes")
    @refusals_as_json
    def changes(session_id, turn_id):
        return json_answer(edge.ask(chat_of(session_id).changes(_checked(rules.turn_id, {"turnId": turn_id}))))

    @app.post("/__devhost__/chat/sessions/<session_id>/turns/<turn_id>/revert")
    @refusals_as_json
    def revert(session_id, turn_id):
        paths, hunks, force = _checked(rules.revert, json_body(request))
        turn = _checked(rules.turn_id, {"turnId": turn_id})
        return json_answer(edge.ask(chat_of(session_id).revert(turn, paths, hunks, force)))

    @app.post("/__devhost__/chat/sessions/<session_id>/turns/<turn_id>/rewind")
    @refusals_as_json
    def rewind(session_id, turn_id):
        force = _checked(rules.force, json_body(request))
        turn = _checked(rules.turn_id, {"turnId": turn_id})
        return json_answer(edge.ask(chat_of(session_id).rewind(turn, force), REWIND_TIMEOUT))

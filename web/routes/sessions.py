"""The Chat API's sessions: open one (new, or the resume of a CLI's saved conversation), list
and close a page's sessions, and list the saved conversations no session holds."""
from __future__ import annotations

import os
import re

import bottle
import gevent
import gevent.event

from actors.harness import HARNESSES
from actors.harness.mode_names import SESSION_DEFAULT
from actors.harness_catalog import command_for, unavailable
from web import command_rules as rules
from web import edge
from web.edge import Refusal, json_answer, json_body, refusals_as_json

RESUME_TIMEOUT = 120.0  # reading a saved conversation of up to 64 MiB takes seconds on a busy machine
_UUID_CHARS = set("0123456789abcdefABCDEF-")
# An ACP agent names its sessions its own way (OpenCode: "ses_" and mixed-case letters): any
# short id of these characters, kept as given.
_AGENT_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def resume_id_of(harness: str, value) -> str | None:
    """The saved conversation a create names: the CLIs' session ids are UUIDs (compared in lower
    case), an ACP agent's its own; ValueError for anything else."""
    if value is None:
        return None
    if getattr(HARNESSES[harness], "PROTOCOL", None) == "acp":
        if not isinstance(value, str) or not _AGENT_SESSION_ID.fullmatch(value):
            raise ValueError("resumeId must be the agent's session id (its nativeSessionId)")
        return value
    if not isinstance(value, str) or len(value) != 36 or not set(value) <= _UUID_CHARS:
        raise ValueError("resumeId must be the CLI's session id (a UUID)")
    return value.lower()


def remembered_mode(context, directory: str) -> str:
    """The mode a new conversation of ``directory`` starts in: the one last picked for it in the
    panel (storage/panel_modes.py), else supervised."""
    picked = context.panel_modes.load(directory) if context.panel_modes is not None else None
    return picked or SESSION_DEFAULT


def install(app, context) -> None:
    request = bottle.request

    def directory_from_query():
        return edge.query_directory(context, request)

    @app.post("/__devhost__/chat/sessions")
    @refusals_as_json
    def create_session():
        body = json_body(request)
        directory = edge.page_directory(context, request.environ, body.get("pageURL"), body.get("target"))
        harness = body.get("harness")
        # The live table: the two CLIs and the ACP agents the manifest names now.
        if not isinstance(harness, str) or harness not in HARNESSES:
            raise Refusal(400, f"harness must be one of: {', '.join(HARNESSES)}")
        model = body.get("model")
        if model is not None:
            try:
                from web.commands import check_model  # at first use: the sockets' command parser
                model = check_model(model) or None
            except ValueError as exc:
                raise Refusal(400, str(exc)) from None
        try:
            resume_id = resume_id_of(harness, body.get("resumeId"))
        except ValueError as exc:
            raise Refusal(400, str(exc)) from None
        try:  # the page's pick (null: the CLI's default account); else the last picked
            account = rules.account(body)
        except rules.Invalid as exc:
            raise Refusal(400, str(exc)) from None
        choice = {} if account is ... else {"account": account}
        command = command_for(harness, context.manifests.current().commands)
        missing = unavailable(harness, command)
        if missing:
            raise Refusal(400, f"harness {harness} is not available: {missing}")
        record = edge.ask(context.registry.create_session(harness, directory, command, model,
                                                          resume_id,
                                                          remembered_mode(context, directory), choice))
        if isinstance(record, gevent.event.AsyncResult):  # a resume: the CLI's files are read meanwhile
            record = edge.waited(record, RESUME_TIMEOUT,
                                 busy="the daemon is still reading that conversation; try again in a moment")
        return json_answer(record, 201)

    @app.get("/__devhost__/chat/sessions")
    @refusals_as_json
    def list_sessions():
        return json_answer({"sessions": edge.ask(context.registry.sessions(directory_from_query()))})

    @app.get("/__devhost__/chat/saved")
    @refusals_as_json
    def saved():
        """The CLIs' own saved conversations of this page's folder that no session holds:
        resumable with POST /chat/sessions {resumeId}, their transcript kept."""
        directory = directory_from_query()
        held = {record.get("nativeSessionId") for record in edge.ask(context.registry.sessions(directory))}
        # File work on the hub's threadpool: reading many transcripts never holds the hub.
        from actors.harness.saved import saved_conversations  # at first use: the CLIs' transcript readers
        found = gevent.get_hub().threadpool.apply(saved_conversations, (directory, dict(os.environ),
                                                                        context.manifests.current().accounts))
        return json_answer({"conversations": [c for c in found if c["nativeSessionId"] not in held]})

    @app.post("/__devhost__/chat/sessions/<session_id>/close")
    @refusals_as_json
    def close_session(session_id):
        chat, _record = edge.page_session(context, session_id, directory_from_query())
        return json_answer(edge.ask(chat.close(1000)))

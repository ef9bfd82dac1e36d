"""The OpenAPI document of devhostd's HTTP routes, served at ``GET /__devhost__/openapi.json``.

It describes what each route takes and answers, so an integration can read it and the
reliability suite can fuzz every route from it (tests/reliability/). A test checks that it
names exactly the routes the daemon serves. WebSockets are described in the README (OpenAPI
has no words for them).
"""
from __future__ import annotations

PAGE_QUERY = [
    {"name": "pageURL", "in": "query", "required": True, "schema": {"type": "string"},
     "description": "the page's own address (a page of the hostname the request is sent to)"},
    {"name": "chatTarget", "in": "query", "required": True,
     "schema": {"type": "string", "enum": ["project", "devhost"]}},
]
ERROR = {"description": "what to change", "content": {"application/json": {"schema": {
    "type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}}}}
JSON = {"content": {"application/json": {"schema": {"type": "object"}}}}


def _answers(ok: str, *codes: str) -> dict:
    answers = {ok: {"description": "done", **JSON}}
    for code in codes:
        answers[code] = ERROR
    return answers


def _body(properties: dict, required: list[str]) -> dict:
    return {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "properties": properties, "required": required}}}}


SESSION_BODY = _body({
    "harness": {"type": "string", "description": "claude-code, codex, or the id of an ACP agent the manifest names "
                                                 "([devtools.chat.<id>] protocol = \"acp\")"},
    "pageURL": {"type": "string"}, "target": {"type": "string", "enum": ["project", "devhost"]},
    "model": {"type": "string"}, "resumeId": {"type": "string"},
    "account": {"oneOf": [{"type": "string"}, {"type": "null"}]}}, ["harness", "pageURL", "target"])
POSITION_BODY = _body({"position": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
    "left": {"type": "number"}, "top": {"type": "number"}}, "required": ["left", "top"]}]}}, ["position"])
MODE_BODY = _body({"runtimeMode": {"type": "string", "enum": ["supervised", "auto-accept-edits", "auto",
                                                               "full-access"]}}, ["runtimeMode"])
SESSION_PATH = [{"name": "sessionId", "in": "path", "required": True, "schema": {"type": "string"}}, *PAGE_QUERY]
TURN_PATH = [{"name": "sessionId", "in": "path", "required": True, "schema": {"type": "string"}},
             {"name": "turnId", "in": "path", "required": True, "schema": {"type": "string"}}, *PAGE_QUERY]
HUNK = {"type": "object", "properties": {"path": {"type": "string"}, "header": {"type": "string"}},
        "required": ["path", "header"]}
REVERT_BODY = _body({"paths": {"type": "array", "items": {"type": "string"}, "maxItems": 2000},
                     "hunks": {"type": "array", "items": HUNK, "maxItems": 2000},
                     "force": {"type": "boolean"}}, [])
CORE_BODY = _body({"id": {"type": "string"}, "type": {"type": "string"}, "payload": {"type": "object"}}, ["id", "type"])


def document() -> dict:
    paths = {
        "/__devhost__/openapi.json": {"get": {"summary": "this document", "responses": _answers("200")}},
        "/__devhost__/config.json": {"get": {"summary": "the stack: name, control origin, services, manifest problems",
                                             "responses": _answers("200")}},
        "/__devhost__/chat/harnesses": {"get": {"summary": "the CLIs and their models", "parameters": PAGE_QUERY,
                                                "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/chat/sessions": {
            "get": {"summary": "the directory's sessions, newest first", "parameters": PAGE_QUERY,
                    "responses": _answers("200", "400", "403", "404")},
            "post": {"summary": "starts (or resumes) a session", "requestBody": SESSION_BODY,
                     "responses": _answers("201", "400", "403", "404", "409", "413")}},
        "/__devhost__/chat/sessions/{sessionId}/close": {"post": {
            "summary": "closes a session and ends its CLI", "parameters": SESSION_PATH,
            "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/chat/sessions/{sessionId}": {"delete": {
            "summary": "deletes a conversation everywhere (as the core's chat.kill): its CLI ended, its files removed",
            "parameters": SESSION_PATH, "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/chat/sessions/{sessionId}/title": {"put": {
            "summary": "renames a conversation", "parameters": SESSION_PATH,
            "requestBody": _body({"title": {"type": "string"}}, ["title"]),
            "responses": _answers("200", "400", "403", "404", "413")}},
        "/__devhost__/chat/sessions/{sessionId}/compact": {"post": {
            "summary": "folds the conversation into a summary, as a turn of its own (as the core's chat.compact)",
            "parameters": SESSION_PATH, "responses": _answers("200", "400", "403", "404", "409")}},
        "/__devhost__/chat/sessions/{sessionId}/export": {"get": {
            "summary": "the conversation as Markdown (a download)", "parameters": SESSION_PATH,
            "responses": {"200": {"description": "text/markdown"}, "400": ERROR, "403": ERROR, "404": ERROR}}},
        "/__devhost__/chat/sessions/{sessionId}/turns/{turnId}/changes": {"get": {
            "summary": "what a turn changed in the checkout: {turnId, files: [{path, status, oldPath?, added, removed, "
                       "binary?, hunks: [{header, lines}], truncated?}], skipped}", "parameters": TURN_PATH,
            "responses": _answers("200", "400", "403", "404", "409")}},
        "/__devhost__/chat/sessions/{sessionId}/turns/{turnId}/revert": {"post": {
            "summary": "puts files (or hunks) of a turn back as they were before it; 409 {code: conflict, paths} when "
                       "they changed since, unless force", "parameters": TURN_PATH, "requestBody": REVERT_BODY,
            "responses": _answers("200", "400", "403", "404", "409", "413")}},
        "/__devhost__/chat/sessions/{sessionId}/turns/{turnId}/rewind": {"post": {
            "summary": "the files and the conversation back to before a turn: {files, reverted, conversation, note}",
            "parameters": TURN_PATH, "requestBody": _body({"force": {"type": "boolean"}}, []),
            "responses": _answers("200", "400", "403", "404", "409", "413")}},
        "/__devhost__/chat/search": {"get": {
            "summary": "the directory's conversations whose title or text has q, newest first",
            "parameters": [{"name": "q", "in": "query", "required": True, "schema": {"type": "string"}}, *PAGE_QUERY],
            "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/chat/saved": {"get": {"summary": "the CLIs' own saved conversations of the directory",
                                            "parameters": PAGE_QUERY,
                                            "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/chat/files": {"get": {
            "summary": "the files of the page's checkout, relative to it (git ls-files, else a bounded walk; at most "
                       "5,000): what the panel's @-mentions complete", "parameters": PAGE_QUERY,
            "responses": _answers("200", "400", "403", "404", "503")}},
        "/__devhost__/chat/sessions/{sessionId}/skills": {"get": {
            "summary": "the skills the session's CLI offers its folder: {skills: [{name, description, source}]}",
            "parameters": [{"name": "sessionId", "in": "path", "required": True, "schema": {"type": "string"}},
                           *PAGE_QUERY],
            "responses": _answers("200", "400", "403", "404", "503")}},
        "/__devhost__/chat/panel": {
            "get": {"summary": "the panel's saved position", "responses": _answers("200", "404")},
            "put": {"summary": "saves the panel's position", "requestBody": POSITION_BODY,
                    "responses": _answers("200", "400", "403", "404", "413")}},
        "/__devhost__/chat/mode": {
            "get": {"summary": "the runtime mode a new conversation of the directory starts in",
                    "parameters": PAGE_QUERY, "responses": _answers("200", "400", "403", "404")},
            "put": {"summary": "picks the runtime mode new conversations of the directory start in",
                    "parameters": PAGE_QUERY, "requestBody": MODE_BODY,
                    "responses": _answers("200", "400", "403", "404", "413", "503")}},
        "/__devhost__/reloads": {
            "get": {"summary": "whether the page's hot reloads are held", "responses": _answers("200", "404")},
            "put": {"summary": "holds or releases the page's hot reloads",
                    "requestBody": _body({"held": {"type": "boolean"}}, ["held"]),
                    "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/reloads/apply": {"post": {"summary": "sends what is held, and goes on holding",
                                                "responses": _answers("200", "403", "404")}},
        "/__devhost__/page/locate": {"post": {
            "summary": "positions of the page's served modules (or of the dev build's files) as files of its checkout "
                       "(routed hostname only): {positions: [{file, line, column?} | null]} in the same order",
            "parameters": PAGE_QUERY,
            "requestBody": _body({"positions": {"type": "array", "maxItems": 200, "items": {"type": "object"}}},
                                 ["positions"]),
            "responses": _answers("200", "400", "403", "404", "413")}},
        "/__devhost__/core": {"post": {"summary": "one chat-core request (control origin only; the bearer secret of "
                                                  "<state-dir>/core-token, or an agent's DEVHOSTD_TOKEN)",
                                       "security": [{"coreToken": []}], "requestBody": CORE_BODY,
                                       "responses": _answers("200", "400", "401", "403", "413")}},
        "/__devhost__/agents": {"get": {"summary": "the agents working in the directory", "parameters": PAGE_QUERY,
                                        "responses": _answers("200", "400", "403", "404")}},
        "/__devhost__/agents/activity": {"get": {"summary": "the agents' activity page (control origin only)",
                                                 "responses": {"200": {"description": "an HTML page"}, "403": ERROR}}},
        "/__devhost__/static/chat/{path}": {"get": {
            "summary": "the panel's files",
            "parameters": [{"name": "path", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "a file"}, "404": ERROR}}},
    }
    return {"openapi": "3.0.3",
            "info": {"title": "devhostd", "version": "1",
                     "description": "Chat from the page you are developing with the coding-agent CLIs on this "
                                    "machine. Every POST and PUT needs an Origin exactly equal to the origin it is "
                                    "sent to; the Host must be the control origin or a routed hostname."},
            "components": {"securitySchemes": {"coreToken": {"type": "http", "scheme": "bearer"}}},
            "paths": paths}


# Routes the document leaves out on purpose: the agents page's script (a file of the page
# above) and the catch-all that answers every other /__devhost__/ path with a JSON 404.
UNDOCUMENTED = {"/__devhost__/agents/activity.js", "/__devhost__/<path:path>"}

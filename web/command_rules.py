"""The checks of the requests both the chat core (web/core) and the panel's thread socket
(web/thread_socket.py) take: one rule and one message for each, so both edges refuse the same
input the same way. Pure; each edge says a refusal in its own envelope.

The limits are the seed's where it gives one (a task's id and a subagent's 1..256 characters).
"""
from __future__ import annotations

from actors.harness.mode_names import RUNTIME_MODES

MAX_ITEM_ID = 300
MAX_BACKGROUND_ID = 256  # a task's or a subagent's id
MAX_TEXT = 4000  # a bookmark's name (cut at 120 when kept), an approval's message
MAX_ANSWER = 20_000
# A message's references (chat.send): how many of each, and how long one may be.
REFERENCES = {"mentions": (64, 4096, "files of the chat's folder, as paths relative to it"),
              "skills": (16, 200, "skill names, as skills.list gives them"),
              "chats": (16, 200, "chat ids of other chats")}
DECISIONS = ("allow", "allow-always", "deny")


class Invalid(ValueError):
    """A request that cannot be read; ``request_id`` names the approval or question it answers,
    when it names one that could be read (that request is open again)."""

    def __init__(self, message: str, request_id=None):
        super().__init__(message)
        self.request_id = request_id


def _id(value, limit: int) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= limit


def task_id(payload: dict) -> str:
    if not _id(payload.get("taskId"), MAX_BACKGROUND_ID):
        raise Invalid(f"stopTask needs the taskId of what to stop (1..{MAX_BACKGROUND_ID} characters)")
    return payload["taskId"]


def subagent_id(payload: dict) -> str:
    """A delegated agent named by its item's id or task id (``subagentId``), or, in the seed's
    words, by the tool call that started it (``toolUseId``)."""
    key = "toolUseId" if "toolUseId" in payload and "subagentId" not in payload else "subagentId"
    if not _id(payload.get(key), MAX_BACKGROUND_ID):
        raise Invalid(f"a subagent is named by its subagentId (or toolUseId), 1..{MAX_BACKGROUND_ID} characters")
    return payload[key]


def item_id(payload: dict, of: str = "a bookmark") -> str:
    """The item a request is about: ``of`` says whose (a bookmark's, a question's)."""
    if not _id(payload.get("itemId"), MAX_ITEM_ID):
        raise Invalid(f"{of} needs the itemId of the item it is about (1..{MAX_ITEM_ID} characters)")
    return payload["itemId"]


def bookmark_name(payload: dict) -> str | None:
    name = payload.get("name")
    if name is not None and (not isinstance(name, str) or len(name) > MAX_TEXT):
        raise Invalid("a bookmark's name must be text (it is cut at 120 characters)")
    return name


def request_id(payload: dict, kind: str):
    value = payload.get("requestId")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise Invalid(f"{kind} needs the requestId of the approval or question it answers (a string or a number)")
    return value


def approval(payload: dict) -> tuple:
    """(requestId, decision, message, runtimeMode) of an approve; ``runtimeMode``: the mode an
    approved plan goes on in (None: the chat's own)."""
    request = request_id(payload, "approve")
    if payload.get("decision") not in DECISIONS:
        raise Invalid(f"approve needs a decision: one of {', '.join(DECISIONS)}", request)
    said = payload.get("message")
    if said is not None and (not isinstance(said, str) or len(said) > MAX_TEXT):
        raise Invalid(f"an approval's message must be text of at most {MAX_TEXT} characters", request)
    mode = payload.get("runtimeMode")
    if mode is not None and mode not in RUNTIME_MODES:
        raise Invalid(f"an approval's runtimeMode must be one of: {', '.join(RUNTIME_MODES)}", request)
    return request, payload["decision"], said, mode


def answers(payload: dict) -> tuple:
    """(requestId, answers) of an answer to a question."""
    request = request_id(payload, "answer")
    given = payload.get("answers")
    if not isinstance(given, dict) or not all(isinstance(k, str) and isinstance(v, str) and len(v) <= MAX_ANSWER
                                              for k, v in given.items()):
        raise Invalid(f"answer needs answers: {{questionId: the answer's text (at most {MAX_ANSWER} characters)}}",
                      request)
    return request, given


def runtime_mode(payload: dict, request=None) -> str | None:
    """A runtime mode a request names (``runtimeMode``), or None when it names none; ``request``:
    the approval it answers, if any (that one is open again when the mode cannot be read)."""
    value = payload.get("runtimeMode")
    if value is not None and value not in RUNTIME_MODES:
        raise Invalid(f"runtimeMode must be one of: {', '.join(RUNTIME_MODES)}", request)
    return value


def plan(payload: dict) -> bool | None:
    """Whether the chat plans before it acts (``plan``), or None when the request does not say."""
    value = payload.get("plan")
    if value is not None and not isinstance(value, bool):
        raise Invalid("plan must be true (plan first, then ask to go on) or false")
    return value


def account(payload: dict):
    """The account a request names (``account``): a manifest name (never a path), None for the
    CLI's default account, or ``...`` when it names none (the chat keeps its own)."""
    if "account" not in payload:
        return ...
    value = payload["account"]
    if value is not None and not (isinstance(value, str) and 1 <= len(value) <= 64):
        raise Invalid("`account` is the name of one of the manifest's [accounts.<provider>.<name>], "
                      "or null for the CLI's default account")
    return value


def resume_at_reset(payload: dict, required: bool) -> bool | None:
    value = payload.get("resumeAtReset")
    if (value is not None or required) and not isinstance(value, bool):
        raise Invalid("configure takes resumeAtReset: true or false")
    return value


def references(payload: dict) -> dict:
    """A send's ``mentions``, ``skills`` and ``chats``: each, when given, a list of non-empty
    strings (at most 64 mentions, 16 skills, 16 chats), duplicates dropped."""
    found = {}
    for key, (most, longest, what) in REFERENCES.items():
        value = payload.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or len(value) > most or not all(
                isinstance(v, str) and v.strip() and len(v) <= longest and not any(ord(c) < 32 for c in v)
                for v in value):
            raise Invalid(f"`{key}` is a list of at most {most} {what} (each 1..{longest} characters, "
                          "no control characters)")
        if value:
            found[key] = list(dict.fromkeys(value))
    return found


MAX_REVERT_PATHS = 2000  # a turn's files a revert may name at once
MAX_PATH = 4096


def turn_id(payload: dict) -> str:
    value = payload.get("turnId")
    if not _id(value, MAX_ITEM_ID):
        raise Invalid("`turnId` must be the id of one of the chat's turns")
    return value


def _checkout_path(value) -> bool:
    # As the turn's changes name it: relative, '/'-separated, inside the checkout. The store
    # refuses anything else again; this says so before a chat is asked.
    return (isinstance(value, str) and 0 < len(value) <= MAX_PATH and not value.startswith("/")
            and "\0" not in value and ".." not in value.split("/"))


def revert(payload: dict) -> tuple:
    """(paths | None, hunks | None, force) of a revert: ``paths``, files of the turn's changes;
    ``hunks``, ``[{path, header}]`` with a header as the changes give it; neither: the whole turn."""
    paths, hunks = payload.get("paths"), payload.get("hunks")
    if paths is not None and (not isinstance(paths, list) or not paths or len(paths) > MAX_REVERT_PATHS
                              or not all(_checkout_path(p) for p in paths)):
        raise Invalid(f"`paths` must be 1 to {MAX_REVERT_PATHS} paths from the turn's changes")
    if hunks is not None:
        if not isinstance(hunks, list) or not hunks or len(hunks) > MAX_REVERT_PATHS or not all(
                isinstance(h, dict) and _checkout_path(h.get("path")) and isinstance(h.get("header"), str)
                and h["header"].startswith("@@ ") and len(h["header"]) <= 200 for h in hunks):
            raise Invalid("`hunks` must be a list of {path, header} with a header as the turn's changes give it "
                          "(\"@@ -1,3 +1,4 @@\")")
        hunks = [{"path": h["path"], "header": h["header"]} for h in hunks]
    if paths is not None and hunks is not None:
        raise Invalid("give `paths` or `hunks`, not both")
    return paths, hunks, force(payload)


def force(payload: dict) -> bool:
    value = payload.get("force", False)
    if not isinstance(value, bool):
        raise Invalid("`force` must be true or false")
    return value

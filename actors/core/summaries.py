"""The short form of a pending approval or question that ``info.requests`` carries, so a client
that is not attached (a list of chats, a notification) can say what waits without the thread.

Lengths are cut points, not schema maxima (UTF-16 units, as a browser counts them; a cut never
splits a surrogate pair): a subject 200, a description 300, a command 1000 characters or 12
lines, a diff 1500 characters or 12 lines, a question 500, a header 100, a choice's description
200. Labels and ids are never cut.
"""
from __future__ import annotations

import re
from itertools import islice

from actors.core.cuts import clip, first_line, first_lines, over

LIMITS = {"perChat": 8, "subject": 200, "description": 300, "command": 1000, "commandLines": 12,
          "diff": 1500, "diffLines": 12, "question": 500, "header": 100, "choiceDescription": 200}
SUBJECT_KEYS = ("file_path", "notebook_path", "path", "url", "query", "pattern", "skill", "description")
FILE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch")


def _lines(text: str, chars: int, lines: int) -> tuple[str, bool]:
    text, cut = first_lines(text, lines)
    if over(text, chars):
        return clip(text, chars), True
    return text, cut


def summary(item: dict) -> dict:
    """One pending request's summary: ``{requestId, itemId, kind, createdAt}`` and its
    ``approval`` or ``question`` part."""
    found = {"requestId": item["requestId"], "itemId": item["id"], "kind": item["kind"],
             "createdAt": item.get("createdAt")}
    if item["kind"] == "approval":
        found["approval"] = approval(item)
    else:
        found["question"] = question(item)
    return found


def approval(item: dict) -> dict:
    tool_input = item.get("input") if isinstance(item.get("input"), dict) else {}
    part: dict = {"toolName": item.get("toolName")}
    command = tool_input.get("command")
    changes = tool_input.get("changes") if isinstance(tool_input.get("changes"), list) else None
    if isinstance(command, str) and command:
        part["command"], cut = _lines(command, LIMITS["command"], LIMITS["commandLines"])
        if cut:
            part["truncated"] = True
    elif changes or item.get("toolName") in FILE_TOOLS:
        paths = [c.get("path") for c in changes or [] if isinstance(c, dict) and isinstance(c.get("path"), str)] \
            or [tool_input[k] for k in ("file_path", "notebook_path", "path") if isinstance(tool_input.get(k), str)][:1]
        if paths:
            part["path"] = clip(paths[0], LIMITS["subject"], front=True)
        if len(paths) > 1:
            part["files"] = len(paths)
        diff = _diff(tool_input, changes)
        if diff:
            part["diff"], cut = _lines(diff, LIMITS["diff"], LIMITS["diffLines"])
            if cut:
                part["truncated"] = True
    else:
        subject = next((tool_input[k] for k in SUBJECT_KEYS if isinstance(tool_input.get(k), str) and tool_input[k]),
                       next((v for v in tool_input.values() if isinstance(v, str) and v), None))
        if subject:
            part["subject"] = clip(first_line(subject), LIMITS["subject"])
    if isinstance(item.get("description"), str) and item["description"]:
        part["description"] = clip(item["description"], LIMITS["description"])
    return part


# A changed line of a diff: removed or added, not a file header ("---", "+++"); empty ones too.
_CHANGED = re.compile(r"^(?:-(?!--)|\+(?!\+\+)|$).*$", re.M)


def _diff(tool_input: dict, changes: list | None) -> str:
    """Only the removed and added lines of what would change: the first DIFF_LINES + 1 of them
    (enough to say it is cut), found without splitting the whole of a large edit."""
    wanted = LIMITS["diffLines"] + 1
    if changes:
        found = (m.group() for c in changes if isinstance(c, dict)
                 for m in _CHANGED.finditer(c.get("diff") if isinstance(c.get("diff"), str) else ""))
        return "\n".join(islice(found, wanted))
    removed = tool_input.get("old_string") if isinstance(tool_input.get("old_string"), str) else ""
    added = tool_input.get("new_string") if isinstance(tool_input.get("new_string"), str) else \
        tool_input.get("content") if isinstance(tool_input.get("content"), str) else ""
    return "\n".join(islice((*_marked("-", removed, wanted), *_marked("+", added, wanted)), wanted))


def _marked(mark: str, text: str, lines: int) -> list[str]:
    if not text:
        return []
    head, _ = first_lines(text, lines)
    return [mark + line for line in head.split("\n")]


def question(item: dict) -> dict:
    part: dict = {"questions": [
        {"id": q.get("id"), "header": clip(q.get("header") or "", LIMITS["header"]),
         "question": clip(q.get("question") or "", LIMITS["question"]), "multiSelect": bool(q.get("multiSelect")),
         "choices": [{"label": c.get("label"), "description": clip(c.get("description") or "",
                                                                    LIMITS["choiceDescription"])}
                     for c in q.get("choices") or []]}
        for q in item.get("questions") or []]}
    if item.get("async"):
        part["async"] = True
    return part

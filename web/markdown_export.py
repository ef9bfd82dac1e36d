"""A conversation as Markdown, for a person to keep or share (GET /chat/sessions/<id>/export):
the title, the harness and folder, then each message of the person's and the agent's text in
order, tool calls summarized to one line each (name, subject, how it ended: their input and
output are the agent's working, not the conversation), notes and errors as quotes. Thinking,
turns and requests' bookkeeping are left out. Plain functions over the chat's items."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from actors.harness import HARNESSES

SUBJECT_KEYS = ("command", "file_path", "path", "pattern", "url", "description")
SUBJECT_CHARS = 120


def _one_line(text: str, limit: int = SUBJECT_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _code(text: str) -> str:
    """Inline code that holds any backticks the text has (CommonMark: a longer fence)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if text.startswith("`") or text.endswith("`") else f"{fence}{text}{fence}"


def tool_summary(item: dict) -> str:
    """One line for a tool call: "**Bash** `ls -la` — done"."""
    tool_input = item.get("input")
    subject = ""
    if isinstance(tool_input, dict):
        subject = next((tool_input[key] for key in SUBJECT_KEYS if isinstance(tool_input.get(key), str)), "")
        if not subject and isinstance(item.get("changes"), list):
            subject = ", ".join(str(c.get("path", "")) for c in item["changes"] if isinstance(c, dict))
        if not subject and tool_input:
            subject = json.dumps(tool_input, ensure_ascii=False)
    elif isinstance(tool_input, str):
        subject = tool_input
    state = item.get("state") or "running"
    if item.get("exitCode") not in (None, 0):
        state = f"{state} (exit {item['exitCode']})"
    name = str(item.get("name") or "tool")
    return f"- **{name}**" + (f" {_code(_one_line(subject))}" if subject else "") + f" — {state}"


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def conversation_markdown(record: dict, items: list[dict], older_left_out: bool = False) -> str:
    """``record``: the session's (title, harness, folder, start); ``items``: oldest first;
    ``older_left_out``: the conversation began before them (the export says so, first)."""
    face = HARNESSES.get(record.get("harness"))
    harness = face.LABEL if face is not None else record.get("harness") or "the agent"
    lines = [f"# {record.get('title') or 'Untitled conversation'}", ""]
    about = [harness, f"in `{record.get('projectRootPath')}`"]
    if record.get("createdAt"):
        started = datetime.fromtimestamp(record["createdAt"] / 1000, tz=timezone.utc)
        about.append(f"started {started.strftime('%Y-%m-%d %H:%M UTC')}")
    lines += [" · ".join(about), ""]
    if older_left_out:
        lines += [f"> *The start of this conversation is left out: an export holds its newest {len(items):,} "
                  "items.*", ""]
    speaker = None  # tool calls in a row are one list under the agent's heading
    for item in items:
        kind = item.get("kind")
        if item.get("parentToolUseId"):
            continue  # a delegated agent's own work: its card's summary line stands for it
        if kind == "user":
            lines += ["## You", "", item.get("text") or "", ""]
            speaker = "user"
        elif kind in ("assistant", "tool", "subagent"):
            if speaker != "agent":
                lines += [f"## {harness}", ""]
                speaker = "agent"
            if kind == "assistant":
                lines += [item.get("text") or "", ""]
            elif kind == "tool":
                lines += [tool_summary(item), ""]
            else:
                lines += [f"- **Agent** {_one_line(item.get('description') or 'a delegated agent')} — "
                          f"{item.get('status') or 'running'}", ""]
        elif kind == "note" and item.get("text"):
            label = "Error" if item.get("level") == "error" else "Note"
            lines += [_quoted(f"**{label}:** {item['text']}"), ""]
        elif kind == "compaction":
            lines += ["> *The conversation was compacted.*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def file_name(record: dict) -> str:
    """A safe download name from the title: letters, digits and dashes only."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", record.get("title") or "conversation").strip("-").lower()[:60]
    return f"{stem or 'conversation'}.md"

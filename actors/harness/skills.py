"""The skills a CLI offers a chat's folder: read from what the running CLI reports, or from disk.

A skill is ``{name, description, source}`` (source: ``user``, ``project`` or ``plugin``), and,
kept inside devhostd only, the ``path`` of its SKILL.md where one is known (Codex's ``skill``
input item names it). Measured on the pinned CLIs (tests/fixtures/modes/README.md, "Accounts and
skills"):

- Claude Code reads ``<folder>/.claude/skills/<name>/SKILL.md`` (project) and
  ``<config home>/skills/<name>/SKILL.md`` (user). Its ``initialize`` answer lists every command
  (a skill's description ends "(project)" or "(user)"; the CLI's own are ``builtin``) without
  saying which are skills; ``system/init`` names the skills (built-in ones too).
- Codex's ``skills/list {cwds}`` reports ``<folder>/.agents/skills`` and ``<folder>/.codex/skills``
  (scope ``repo``), ``<CODEX_HOME>/skills`` (``user``) and its bundled ones (``system``).

What a CLI ships itself (Claude Code's built-in skills, Codex's system ones, a plugin's) is listed
as ``plugin``: neither the person's nor the project's. From disk only the person's and the
project's are found (a CLI's own live in its install). The disk reader follows no link out of the
folder it reads, reads at most MAX_FILE bytes of a SKILL.md and lists at most MAX_SKILLS a folder;
its front matter is read by a small reader of ``name:`` and ``description:`` only (no YAML parser
is a dependency, and these two keys are all a CLI lists).

Plain file work: an actor calls ``on_disk`` on the hub's threadpool (actors/guard.py).
"""
from __future__ import annotations

import os

from actors.harness.paths import inside

MAX_SKILLS = 200  # a folder's skills listed at most
MAX_FILE = 64 * 1024  # bytes of a SKILL.md read: its front matter comes first
MAX_NAME = 200
MAX_DESCRIPTION = 2000
SOURCES = ("user", "project", "plugin")

# Where each CLI reads skills: (folder relative to the chat's folder, or to the CLI's home).
CLAUDE_FOLDERS = {"project": (".claude/skills",), "user": ("skills",)}
CODEX_FOLDERS = {"project": (".agents/skills", ".codex/skills"), "user": ("skills",)}


def public(skills: list[dict]) -> list[dict]:
    """What a client is told of a skill: never its path on this machine."""
    return [{"name": s["name"], "description": s["description"], "source": s["source"]} for s in skills]


def front_matter(text: str) -> dict:
    """``name`` and ``description`` of a SKILL.md's front matter (``---`` lines around
    ``key: value`` lines); a value may be quoted, or a ``>``/``|`` block of indented lines."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    key, block = None, []
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if key is not None and (line.startswith((" ", "\t")) or not line.strip()):
            block.append(line.strip())
            continue
        if key is not None:
            found[key], key, block = " ".join(b for b in block if b), None, []
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or name not in ("name", "description"):
            continue
        if value in (">", "|", ">-", "|-", ">+", "|+"):
            key, block = name, []
        else:
            found[name] = _scalar(value)
    else:
        return {}  # never closed: not front matter
    if key is not None:
        found[key] = " ".join(b for b in block if b)
    return found


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner.replace('\\"', '"').replace("\\\\", "\\")
    return value.split(" #", 1)[0].strip()


def read_folder(folder: str, top: str, source: str) -> list[dict]:
    """The skills of one folder (``<folder>/<name>/SKILL.md``), none of which may resolve outside
    ``top`` (the chat's folder, or the CLI's home)."""
    top = os.path.realpath(top)
    real = os.path.realpath(folder)
    if not inside(real, top) or not os.path.isdir(real):
        return []
    found = []
    try:
        names = sorted(os.listdir(real))
    except OSError:
        return []
    for entry in names:
        if len(found) >= MAX_SKILLS:
            break
        if entry.startswith("."):
            continue  # a CLI's own (Codex's .system) or nothing anyone put there as a skill
        path = os.path.realpath(os.path.join(real, entry, "SKILL.md"))
        if not inside(path, top) or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as file:
                text = file.read(MAX_FILE).decode("utf-8", "replace")
        except OSError:
            continue
        meta = front_matter(text)
        name = (meta.get("name") or entry).strip()[:MAX_NAME]
        if name:
            found.append({"name": name, "description": (meta.get("description") or "")[:MAX_DESCRIPTION],
                          "source": source, "path": path})
    return found


def on_disk(folders: dict, cwd: str, home: str) -> list[dict]:
    """The project's skills (under ``cwd``), then the person's (under ``home``), each name once
    (the project's first, as both CLIs prefer it)."""
    found = []
    for folder in folders["project"]:
        found += read_folder(os.path.join(cwd, folder), cwd, "project")
    for folder in folders["user"]:
        found += read_folder(os.path.join(home, folder), home, "user")
    return unique(found)


def unique(skills: list[dict]) -> list[dict]:
    seen, kept = set(), []
    for skill in skills:
        if skill["name"] not in seen:
            seen.add(skill["name"])
            kept.append(skill)
    return kept


def _clip(value) -> str:
    return value[:MAX_DESCRIPTION] if isinstance(value, str) else ""


# ---- what the running CLIs report ------------------------------------------------------------

_CLAUDE_SUFFIX = {" (project)": "project", " (user)": "user"}


def claude_reported(commands: list, skills: list) -> list[dict]:
    """Claude Code's skills: the names ``system/init`` lists, described by the ``initialize``
    answer's command of that name ("… (project)" / "… (user)"; a built-in or plugin one: plugin)."""
    described = {c["name"]: c for c in commands if isinstance(c, dict) and isinstance(c.get("name"), str)}
    found = []
    for name in skills:
        if not isinstance(name, str) or not name:
            continue
        command = described.get(name, {})
        description, source = _clip(command.get("description")), "plugin"
        for suffix, named in _CLAUDE_SUFFIX.items():
            if not command.get("builtin") and description.endswith(suffix):
                description, source = description[:-len(suffix)], named
        found.append({"name": name[:MAX_NAME], "description": description, "source": source})
    return unique(found)


_CODEX_SCOPES = {"repo": "project", "user": "user", "admin": "user"}


def codex_reported(result: dict) -> list[dict]:
    """Codex's ``skills/list`` answer: its enabled skills, for every folder it was asked about."""
    found = []
    for entry in result.get("data") or []:
        for skill in (entry.get("skills") if isinstance(entry, dict) else None) or []:
            if not isinstance(skill, dict) or not isinstance(skill.get("name"), str) or skill.get("enabled") is False:
                continue
            source = "plugin" if skill.get("pluginId") else _CODEX_SCOPES.get(skill.get("scope"), "plugin")
            kept = {"name": skill["name"][:MAX_NAME], "description": _clip(skill.get("description")),
                    "source": source}
            if isinstance(skill.get("path"), str):
                kept["path"] = skill["path"]
            found.append(kept)
    return unique(found)

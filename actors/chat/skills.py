"""The skills of a chat's folder: asked of the running CLI where it can say, else read from disk
(actors/chat/actor.py's controller; the rules are actors/harness/skills.py's).

Owns the ``skills.list`` answers waiting for Codex's ``skills/list`` reply. Claude Code is not
asked: it names its skills in every turn's ``system/init``, which its driver keeps.
"""
from __future__ import annotations

import os

import gevent.event

from actors.errors import ChatError
from actors.guard import on_threadpool
from actors.harness import skills as skill_rules
from actors.harness.claude.files import claude_dir
from actors.harness.codex.files import codex_dir


class Skills:
    def __init__(self, chat):
        self._chat = chat
        self._waiting: list[gevent.event.AsyncResult] = []

    def listed(self) -> gevent.event.AsyncResult:
        """The folder's skills (with their paths: the edge makes them public), once known."""
        answer = gevent.event.AsyncResult()
        link = self._chat.link
        driver = link.driver if link.running and not link.starting else None
        if driver is not None and hasattr(driver, "skills_frames"):
            self._waiting.append(answer)  # answered by the Skills effect of its reply (or its deadline)
            link.write(driver.skills_frames())
        elif driver is not None and getattr(driver, "skills", None) is not None:
            answer.set(list(driver.skills))
        else:
            answer.set(self.on_disk())
        return answer

    def reported(self, listed: tuple | None) -> None:
        """The CLI answered (None: it would not say, and the disk answers instead)."""
        waiting, self._waiting = self._waiting, []
        if waiting:
            found = list(listed) if listed is not None else self.on_disk()
            for answer in waiting:
                answer.set(found)

    def on_disk(self) -> list[dict]:
        chat = self._chat
        env = {**os.environ, **chat.link.home_env()}  # the chat's account's config home
        if chat.harness.HARNESS_ID == "codex":
            folders, home = skill_rules.CODEX_FOLDERS, codex_dir(env)
        else:
            folders, home = skill_rules.CLAUDE_FOLDERS, claude_dir(env)
        return on_threadpool(skill_rules.on_disk, folders, chat.link.root, home)

    def pick(self, names: list[str]) -> tuple[tuple[str, str | None], ...]:
        """The skills a message names, as (name, SKILL.md) from what the CLI last reported or the
        disk; a name neither knows is refused, saying where skills are looked for."""
        if not names:
            return ()
        link = self._chat.link
        known = {s["name"]: s for s in (getattr(link.driver, "skills", None) or []) if link.driver is not None}
        missing = [n for n in names if n not in known]
        if missing:
            known = {**{s["name"]: s for s in self.on_disk()}, **known}
            missing = [n for n in names if n not in known]
        if missing:
            raise ChatError("bad-request", f"No skill named {missing[0]!r} in this chat's folder or the CLI's "
                                           "home: skills.list names the skills this chat can use")
        return tuple((n, known[n].get("path")) for n in dict.fromkeys(names))

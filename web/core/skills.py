"""skills.list: the skills a chat's CLI offers its folder (actors/chat/skills.py says where from)."""
from __future__ import annotations

from actors.harness import skills as skill_rules
from web.core.later import Later
from web.core.payload import chat_of, get


def list_skills(service, payload, client):
    """``{chatId}`` → ``{skills: [{name, description, source}]}``; waits for a running Codex's
    skills/list answer (at most its 10 s deadline, then the disk answers)."""
    listed = get(chat_of(service, payload).skills_listed())
    return Later(_Public(listed), {"skills": []})


class _Public:
    """The AsyncResult's answer as the client is told it: without the SKILL.md paths."""

    def __init__(self, listed):
        self._listed = listed

    def wait(self, timeout):
        return self._listed.wait(timeout)

    def get(self):
        return {"skills": skill_rules.public(self._listed.get())}


REQUESTS = {"skills.list": list_skills}

"""A conversation's own name, as the person gives it (the panel's rename, the core's
chat.rename): one line, trimmed, at most TITLE_CHARS characters."""
from __future__ import annotations

import re

TITLE_CHARS = 120
ASK = f'send {{"title": "<name>"}}: the new name, 1..{TITLE_CHARS} characters'
# Control characters and line breaks: a title is one line of a list.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def checked_title(value) -> tuple[str | None, str | None]:
    """(title, None) with its whitespace collapsed, or (None, what to change)."""
    if not isinstance(value, str) or not value.strip():
        return None, ASK
    title = " ".join(value.split())
    if len(title) > TITLE_CHARS:
        return None, f"the title is {len(title)} characters; make it at most {TITLE_CHARS}"
    if _UNPRINTABLE.search(title):
        return None, "the title may not hold control characters"
    return title, None

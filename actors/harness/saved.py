"""The CLIs' own saved conversations, across harnesses: listed per folder, read as items.

devhostd lists those of a page's folder that no chat of its own holds, so a conversation begun
in a terminal can be continued from the page; resuming one reads its transcript into the chat's
items. Each harness package reads its own CLI's files (``claude/saved.py``, ``codex/saved.py``).

Plain file reading, no actor: callers run it on the hub's threadpool. Nothing here trusts a
path from a request: files are found from the CLI's own folders and an id that names a file.
"""
from __future__ import annotations

import os

from actors.harness.claude.saved import claude_items, claude_transcript, list_claude
from actors.harness.codex.saved import codex_items, codex_transcript, list_codex
from actors.harness.transcripts import inside
from storage.accounts import HOME_VARIABLES


def resume_folder(recorded_cwd: str | None, root: str) -> str | None:
    """Where to resume a saved conversation of ``root``'s: the folder it was begun in, as the
    CLI's own transcript recorded it, when that folder exists and is, by its real path (no link
    leads out), ``root`` or a folder in it; None (run in ``root``) otherwise."""
    if not recorded_cwd or not os.path.isabs(recorded_cwd):
        return None
    folder = os.path.realpath(recorded_cwd)
    return folder if inside(folder, root) and os.path.isdir(folder) else None


LISTERS = {"claude-code": list_claude, "codex": list_codex}
PROVIDER_OF = {"claude-code": "claude", "codex": "codex"}  # the manifest's [accounts.<provider>] names
TRANSCRIPTS = {"claude-code": (claude_transcript, claude_items), "codex": (codex_transcript, codex_items)}


def saved_conversations(root: str, env: dict, accounts: dict | None = None) -> list[dict]:
    """The CLIs' saved conversations of ``root`` (and folders in it), newest first, under the
    CLI's default home and each of the manifest's ``accounts`` ({provider: {name: home}}); each
    says its ``account`` (None: the default), so resuming it reads the home it is kept in. A home
    two names share lists its conversations once, under the first."""
    found, seen = [], set()
    for harness_id, lister in LISTERS.items():
        provider = PROVIDER_OF[harness_id]
        homes = [(None, {})] + [(name, {HOME_VARIABLES[provider]: home})
                                for name, home in sorted(((accounts or {}).get(provider) or {}).items())]
        for name, home_env in homes:
            for conversation in lister(root, {**env, **home_env}):
                if conversation["nativeSessionId"] not in seen:
                    seen.add(conversation["nativeSessionId"])
                    found.append({**conversation, "account": name})
    return sorted(found, key=lambda c: c.get("updatedAt") or 0, reverse=True)


def transcript_items(harness_id: str, native_id: str, env: dict) -> list[dict]:
    """A saved conversation's items, read from the CLI's own file ([] when there is none)."""
    find, read = TRANSCRIPTS.get(harness_id, (None, None))
    path = find(native_id, env) if find else None
    return read(path) if path else []

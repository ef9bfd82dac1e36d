"""Where a CLI's conversation goes back to when a turn is rewound: pure, from the thread's turns.

Each turn item keeps the CLI's own ids of it under ``native`` (the projections' ``("native",
…)`` operation, applied by actors/durable_face.py):

- Claude Code: ``lastUuid``, the uuid of the turn's last frame of the conversation's chain (its
  replayed prompt, an assistant message, a tool result). A rewind of turn N resumes the
  conversation at the last entry of the turns before N (``--resume-session-at``); a rewind of the
  first turn keeps nothing, so the next message starts a new conversation.
- Codex: ``turnId``, its id from ``turn/started``. A rewind of turn N is ``thread/revert`` with
  ``beforeTurnId`` N's own id (N and every later turn leave the thread's history).

A turn a rewind took out leaves the thread with every later one (actors/chat/session.py
``rewind``: the conversation the person reads is the one the CLI goes on with); a turn marked
``rewound: true`` is never an anchor.

Measured on the pinned CLIs: docs/rewind.md. A turn with no native ids (one read back from a
saved conversation, or run before devhostd kept them) cannot anchor a rewind: ``NoAnchor`` says
so, and the files can still be put back.
"""
from __future__ import annotations

from dataclasses import dataclass


class NoAnchor(Exception):
    """The conversation cannot be rewound to before that turn; the text says why."""


@dataclass(frozen=True)
class Anchor:
    """What the link needs to rewind its CLI's conversation (actors/cli_link.py ``rewind``)."""
    resume_at: str | None = None  # Claude Code: the chain entry to resume at (--resume-session-at)
    before_turn: str | None = None  # Codex: thread/revert's beforeTurnId
    fresh: bool = False  # nothing before the turn is kept: the next message starts a new conversation


def anchor_for(provider: str, turns: list[dict], turn_id: str) -> Anchor:
    """The anchor to rewind the conversation to before ``turn_id``; ``turns``: the thread's turn
    items in order (``Thread.turns()``); ``provider``: "claude" or "codex". Raises NoAnchor."""
    index = next((i for i, turn in enumerate(turns) if turn.get("id") == turn_id), None)
    if index is None:
        raise NoAnchor(f"the chat has no turn {turn_id!r}")
    if turns[index].get("rewound"):
        raise NoAnchor("that turn was rewound already: it is no longer in the conversation")
    if provider == "codex":
        before = (turns[index].get("native") or {}).get("turnId")
        if not before:
            raise NoAnchor("Codex never named that turn to devhostd (it ran before devhostd kept turn ids, "
                           "or it never started), so its conversation cannot be rewound")
        return Anchor(before_turn=before)
    if provider == "claude":
        kept = [turn for turn in turns[:index] if not turn.get("rewound")]
        for turn in reversed(kept):
            last = (turn.get("native") or {}).get("lastUuid")
            if last:
                return Anchor(resume_at=last)
        if any(turn.get("origin") != "cli" and not (turn.get("native") or {}) for turn in kept):
            # Turns whose entries devhostd never saw (a saved conversation read back): resuming
            # anywhere could keep the wrong ones.
            raise NoAnchor("the turns before that one were not run by this devhostd, so Claude Code's "
                           "conversation cannot be rewound to before it")
        return Anchor(fresh=True)
    raise NoAnchor(f"{provider} conversations cannot be rewound")

"""A ``session/load``'s replay as a chat's items, for a chat that never held the conversation.

An ACP agent keeps its conversations in its own store, which devhostd does not read; when a
conversation is resumed by its id, the agent replays it (``user_message_chunk``,
``agent_message_chunk``, ``tool_call`` …) before it answers ``session/load``. A chat that holds
the conversation already drops that replay (it would show everything twice); one made for the
resume takes these items as its first (actors/durable_face.py ``earlier``), as a Claude Code or
Codex conversation's transcript is read into a new chat's items (actors/harness/saved.py).

The person's messages open turns, as in a transcript (actors/harness/transcripts.Builder); the
agent's part goes through the same projection as a live turn, with ids of its own (``saved:``).
What the replay left unfinished (a stretch of text, a tool call whose end it did not replay) is
settled as after a restart: nothing replayed is still running.

Pure: fed the updates, no I/O.
"""
from __future__ import annotations

from actors.clock import now_ms
from actors.harness.acp.projection import AcpProjector
from actors.harness.transcripts import PROMPT_MARKER, Builder

__all__ = ["Replay"]


class Replay:
    def __init__(self):
        self._builder = Builder()
        self._projector = AcpProjector("saved")
        self._user: list[str] = []  # the text of the person's message being replayed
        self._user_ref: str | None = None  # its messageId (None: the agent gives none)
        self._user_open = False  # a user chunk came since the last update of another kind

    def update(self, update: dict) -> None:
        """One replayed ``session/update`` (its ``update`` object)."""
        self._builder.at = now_ms()
        kind = update.get("sessionUpdate")
        if kind == "user_message_chunk":
            content = update.get("content") if isinstance(update.get("content"), dict) else {}
            ref = update.get("messageId") if isinstance(update.get("messageId"), str) else None
            if self._user_open and ref is not None and ref != self._user_ref:
                self._end_user()  # the next message of the person, right after the last
            self._user_open, self._user_ref = True, ref
            if content.get("type") == "text" and isinstance(content.get("text"), str):
                self._user.append(content["text"])
            return
        self._end_user()
        if self._builder.turn is None:
            return  # the agent's part before any message of the person's: no turn to hold it
        for op in self._projector.update(update):
            if op[0] == "upsert":
                self._builder.item(op[1])
            elif op[0] == "append":
                _, item_id, text, skeleton = op
                if not self._builder.thread.has(item_id):
                    self._builder.item(skeleton)
                self._builder.thread.append_text(item_id, text)

    def _end_user(self) -> None:
        if self._user_open:
            # The person's own words: what devhostd added to a page's message is not theirs.
            self._builder.user("".join(self._user).split(PROMPT_MARKER, 1)[0])
            self._user, self._user_ref, self._user_open = [], None, False

    def items(self) -> list[dict]:
        """The conversation so far as items (turns, the person's messages, the agent's)."""
        self._end_user()
        self._builder.thread.settle_after_restart()
        return self._builder.done()

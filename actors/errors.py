"""The one refusal type of the chat runtime: a code and a message that says what to change.

The codes are the chat core's plus two of the Chat API's; each
surface renders them its own way at the web edge: the core answers the code itself, the Chat
API an HTTP status (web/app.py, ``HTTP_STATUS``).
"""
from __future__ import annotations

CODES = (
    "bad-request",        # the request itself is wrong
    "chat-not-found",     # no such chat (or session)
    "chat-busy",          # a turn runs; the request waits for it or needs force
    "chat-unreadable",    # the chat's record on disk cannot be read; left as it is
    "chat-unsupported",   # this CLI cannot do that
    "request-not-found",  # nothing waits for that answer (any more)
    "subagent-not-found",  # no delegated agent of that id in the chat
    "task-not-found",     # the chat runs no such background task
    "item-not-found",     # no such item (or not one that can be bookmarked), no such attachment
    "invalid-attachments",  # an upload breaks a rule; the message says which
    "visual-invalid",     # a visual breaks a rule; the message tells the agent what to change
    "visual-too-large",   # a visual's page is over 16 MiB
    "bookmark-not-found",  # no bookmark on that item
    "too-many-bookmarks",  # a chat keeps at most 200
    "not-found",          # the CLI has no saved conversation of that id
    "conflict",           # the conversation is open already elsewhere; files changed since the turn (details.paths)
    "account-incompatible",  # the chat's conversation is kept by an account the asked one cannot read
    "forbidden",          # this caller may not make this request (an agent's token: web/auth.py)
    "storage-full",       # the disk holding devhostd's state folder is full: free space, then send again
    "storage-failed",     # the state folder could not be written for another reason (EIO, read-only)
    "internal",
)


class ChatError(Exception):
    def __init__(self, code: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        # What a caller needs beyond the words (a conflict's paths): the core answers them in the
        # error, the Chat API beside ``error`` in its JSON.
        self.details = details or {}

"""What a failed write to devhostd's state folder is called, and what a person is told to do.

A full disk (or quota) is the case a person can fix by freeing space; any other write failure
(EIO, a read-only remount, ...) is named by what the system said.
"""
from __future__ import annotations

import errno
import os

FULL = (errno.ENOSPC, errno.EDQUOT)


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL


def code(exc: OSError) -> str:
    """The chat core's code for it (web/app.py maps each to an HTTP status)."""
    return "storage-full" if is_full(exc) else "storage-failed"


def _what(folder: str, exc: OSError) -> str:
    if is_full(exc):
        return f"the disk holding devhostd's state folder ({folder}) is full"
    return f"writing devhostd's state folder ({folder}) failed: {exc.strerror or exc}"


def chat_not_saved(folder: str, exc: OSError) -> str:
    """A chat's record and log could not be written: its turn was stopped, its items are kept."""
    fix, when = ("Free space on that disk", "there is room") if is_full(exc) else \
        ("Check that disk", "the disk takes writes again")
    return (f"devhost could not save this chat: {_what(folder, exc)}. The turn was stopped; nothing the agent "
            f"said is lost, devhost keeps it until it can write it. {fix}, then send again (or reload the page): "
            f"the chat is saved whole as soon as {when}.")


def attachments_not_saved(folder: str, exc: OSError) -> str:
    """A message's attachments could not be written: nothing of the message was queued or sent."""
    fix = "Free space on that disk" if is_full(exc) else "Check that disk"
    return f"The message was not sent: its attachments could not be saved, {_what(folder, exc)}. " \
           f"{fix}, then send it again."


def not_done(exc: OSError) -> str:
    """Any other request whose write the disk refused (a visual's page, a bookmark list)."""
    folder = os.path.dirname(exc.filename) if isinstance(exc.filename, str) else "?"
    fix = "Free space on that disk" if is_full(exc) else "Check that disk"
    return f"Not done: {_what(folder, exc)}. {fix}, then try again."


SAVED_AGAIN = "devhost could write its state folder again: this chat is saved whole. Send again to go on."

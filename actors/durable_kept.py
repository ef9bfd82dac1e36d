"""What a chat keeps beside its thread (actors/durable_face.py): bookmarks, visuals, attachments.

A plain part of the DurableFace. It owns the chat's bookmarks and visuals lists (on disk beside
the chat's record: storage/sidecars.py; the visuals' pages are the VisualStore's, which saves
their list) and the store of its messages' attachments. The rules of the lists are plain
(actors/core/bookmarks.py); telling the attached clients is the face's.
"""
from __future__ import annotations

from storage import sidecars
from storage.attachments import AttachmentStore


class KeptLists:
    def __init__(self, *, chat_id: str, folder: str):
        self._chat_id = chat_id
        self._bookmark_file = sidecars.bookmarks(folder)
        self.attachments = AttachmentStore(folder)
        self.bookmarks: list[dict] = self._bookmark_file.load(chat_id)
        self.visuals: list[dict] = sidecars.visuals(folder).load(chat_id)  # VisualStore's

    def keep_bookmarks(self, bookmarks: list[dict]) -> None:
        """The new list, on disk first."""
        self._bookmark_file.save(self._chat_id, bookmarks)
        self.bookmarks = bookmarks

    def keep_visuals(self, visuals: list[dict]) -> None:
        self.visuals = visuals

    def remove_attachments(self) -> None:
        """The files of the chat's messages (file work: on the hub's threadpool)."""
        self.attachments.remove_chat(self._chat_id)

    def remove_files(self) -> None:
        """The bookmarks and the attachments (file work: on the hub's threadpool)."""
        self._bookmark_file.remove(self._chat_id)
        self.attachments.remove_chat(self._chat_id)

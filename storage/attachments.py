"""The files of a chat's messages, as sent: one folder per chat, a file per attachment and an
index of them, all private (0600 files in 0700 folders) and written atomically.

    <data>/attachments/<encoded chat id>/<16 hex>.<ext>
    <data>/attachments/<encoded chat id>/index.json   {version: 1, attachments: [{id, name, mime, size, path}]}
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil

from storage.atomic import write_bytes_atomically, write_json_atomically
from storage.chat_store import encode_id

# The stored file's extension by type, when its name gives none.
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
              "image/svg+xml": "svg", "application/pdf": "pdf", "application/json": "json", "text/csv": "csv",
              "text/markdown": "md", "text/plain": "txt"}


def extension(name: str, mime: str) -> str:
    """The stored file's extension: the name's when it is 1..8 letters and digits, else by type."""
    tail = name.rsplit(".", 1)[-1] if "." in name else ""
    if re.fullmatch(r"[A-Za-z0-9]{1,8}", tail):
        return tail.lower()
    if mime in EXTENSIONS:
        return EXTENSIONS[mime]
    subtype = mime.split("/", 1)[-1] if "/" in mime else ""
    return subtype if re.fullmatch(r"[a-z0-9]{1,8}", subtype) else "bin"


def read_file(path: str) -> bytes:
    """A stored file's bytes, whole (an attachment, or a visual's page)."""
    with open(path, "rb") as handle:
        return handle.read()


class AttachmentStore:
    def __init__(self, data_dir: str):
        self.root = os.path.join(data_dir, "attachments")

    def _folder(self, chat_id: str) -> str:
        return os.path.join(self.root, encode_id(chat_id))

    def _index(self, chat_id: str) -> list[dict]:
        try:
            with open(os.path.join(self._folder(chat_id), "index.json"), encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return []
        found = value.get("attachments") if isinstance(value, dict) else None
        return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []

    def save(self, chat_id: str, files: list[tuple[str, str, bytes]]) -> list[dict]:
        """Writes each (name, mime, bytes); answers their records. All or none: OSError (a full
        disk) leaves none of them."""
        folder = self._folder(chat_id)
        os.makedirs(self.root, mode=0o700, exist_ok=True)  # (makedirs gives only the last folder its mode)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        saved = []
        try:
            for name, mime, content in files:
                attachment_id = secrets.token_hex(8)
                path = os.path.join(folder, f"{attachment_id}.{extension(name, mime)}")
                write_bytes_atomically(path, content)
                saved.append({"id": attachment_id, "name": name, "mime": mime, "size": len(content), "path": path})
            write_json_atomically(os.path.join(folder, "index.json"),
                                  {"version": 1, "attachments": self._index(chat_id) + saved})
        except OSError:
            # The message is not sent: none of its files stays to take the space it did not get.
            for attachment in saved:
                try:
                    os.unlink(attachment["path"])
                except OSError:
                    pass
            raise
        return saved

    def page_path(self, chat_id: str, visual_id: str) -> str:
        """Where a visual's page is kept: beside the chat's attachments, as ``<id>.html``."""
        return os.path.join(self._folder(chat_id), f"{visual_id}.html")

    def write_page(self, chat_id: str, visual_id: str, page: bytes) -> str:
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        path = self.page_path(chat_id, visual_id)
        write_bytes_atomically(path, page)
        return path

    def get(self, chat_id: str, attachment_id: str) -> dict | None:
        return next((a for a in self._index(chat_id) if a.get("id") == attachment_id), None)

    def read(self, attachment: dict) -> bytes:
        return read_file(attachment["path"])

    def remove_chat(self, chat_id: str) -> None:
        shutil.rmtree(self._folder(chat_id), ignore_errors=True)

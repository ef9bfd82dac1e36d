"""What a chat keeps beside its record, one JSON file each, atomic and private (0600 in 0700):

    <data>/chats/b-<encoded id>.json   bookmarks {version: 1, bookmarks: [...]}
    <data>/chats/v-<encoded id>.json   visuals {version: 1, visuals: [...]} (their pages: storage/attachments.py)

A prefix of its own per kind (the record is ``c-``), because a chat id may hold dots: a name such
as ``<id>.bookmarks.json`` could be another chat's record. A file that is empty of entries is
deleted; one that does not parse reads as empty and is left for a person to look at.
"""
from __future__ import annotations

import json
import os

from storage.atomic import write_json_atomically
from storage.chat_store import encode_id


class Sidecar:
    def __init__(self, data_dir: str, prefix: str, key: str):
        self.folder = os.path.join(data_dir, "chats")
        self.prefix, self.key = prefix, key

    def path(self, chat_id: str) -> str:
        return os.path.join(self.folder, self.prefix + encode_id(chat_id)[2:] + ".json")

    def load(self, chat_id: str) -> list[dict]:
        try:
            with open(self.path(chat_id), encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return []
        entries = value.get(self.key) if isinstance(value, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    def save(self, chat_id: str, entries: list[dict]) -> None:
        if not entries:
            self.remove(chat_id)
            return
        write_json_atomically(self.path(chat_id), {"version": 1, self.key: entries})

    def remove(self, chat_id: str) -> None:
        try:
            os.unlink(self.path(chat_id))
        except FileNotFoundError:
            pass


def visuals(data_dir: str) -> Sidecar:
    return Sidecar(data_dir, "v-", "visuals")


def bookmarks(data_dir: str) -> Sidecar:
    return Sidecar(data_dir, "b-", "bookmarks")

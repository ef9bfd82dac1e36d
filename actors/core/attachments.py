"""Files a person sends with a message: the upload rules and how each goes to the CLI. Plain
functions; storage/attachments.py keeps the bytes.

An upload is ``{name, mime, data}`` with ``data`` base64 (no ``data:`` prefix): at most 8 a
message, each at most 10 MiB decoded and all of them together too, a name and a mime type of
1..255 characters. A refusal is ``invalid-attachments`` naming the first problem.

Images go to the CLI as images (Claude Code's image blocks, Codex's image inputs); any other file
is named in the message with its path, for the agent to read with its own tools.
"""
from __future__ import annotations

import base64
import binascii
import re

from actors.errors import ChatError

MAX_FILES = 8
MAX_BYTES = 10 * 1024 * 1024
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
              "image/svg+xml": "svg", "application/pdf": "pdf", "application/json": "json", "text/csv": "csv",
              "text/markdown": "md", "text/plain": "txt"}
BY_EXTENSION = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


def _refuse(problem: str) -> ChatError:
    return ChatError("invalid-attachments", problem)


def decode(uploads) -> list[tuple[str, str, bytes]]:
    """The uploads as (name, mime, bytes), or the first problem refused."""
    if not isinstance(uploads, list):
        raise _refuse("`attachments` is a list of {name, mime, data (base64)}")
    if len(uploads) > MAX_FILES:
        raise _refuse(f"At most {MAX_FILES} attachments per message")
    files, total = [], 0
    for upload in uploads:
        if not isinstance(upload, dict):
            raise _refuse("An attachment is {name, mime, data (base64)}")
        name, mime, data = upload.get("name"), upload.get("mime", ""), upload.get("data")
        if not isinstance(name, str) or not 1 <= len(name) <= 255 or "/" in name or "\0" in name:
            raise _refuse("An attachment's name is 1..255 characters, without / (just the file's own name)")
        if not isinstance(mime, str) or len(mime) > 255:
            raise _refuse("An attachment's mime type is at most 255 characters")
        if not isinstance(data, str) or data.startswith("data:"):
            raise _refuse("Invalid attachment base64: send the data itself, without a data: prefix")
        if len(data) > (MAX_BYTES // 3 + 1) * 4:
            raise _refuse("Attachment exceeds 10 MiB")
        try:
            content = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise _refuse("Invalid attachment base64") from None
        if len(content) > MAX_BYTES:
            raise _refuse("Attachment exceeds 10 MiB")
        total += len(content)
        if total > MAX_BYTES:
            raise _refuse("Attachments must total at most 10 MiB per message")
        files.append((name, type_of(name, mime), content))
    return files


def type_of(name: str, mime: str) -> str:
    """The declared type; an empty or generic one is taken from the name's extension for images."""
    if mime and mime != "application/octet-stream":
        return mime
    return BY_EXTENSION.get(name.rsplit(".", 1)[-1].lower(), mime or "application/octet-stream")


def extension(name: str, mime: str) -> str:
    """The stored file's extension: the name's when it is 1..8 letters and digits, else by type."""
    tail = name.rsplit(".", 1)[-1] if "." in name else ""
    if re.fullmatch(r"[A-Za-z0-9]{1,8}", tail):
        return tail.lower()
    if mime in EXTENSIONS:
        return EXTENSIONS[mime]
    subtype = mime.split("/", 1)[-1] if "/" in mime else ""
    return subtype if re.fullmatch(r"[a-z0-9]{1,8}", subtype) else "bin"


def is_image(attachment: dict) -> bool:
    return attachment.get("mime") in IMAGE_MIMES


def message_text(text: str, attachments: list[dict]) -> str:
    """The text the CLI gets: the person's, and each file that is not an image named with its
    path (images go as images)."""
    files = [a for a in attachments if not is_image(a)]
    if not files:
        return text
    listed = "\n".join(f"- {a['name']} ({a['mime']}, {a['size']} bytes): {a['path']}" for a in files)
    return (text + "\n\n" if text else "") + f"[Attached files]\n{listed}"


def public(attachment: dict) -> dict:
    """What a client is told of one: never its path on this machine."""
    return {k: attachment[k] for k in ("id", "name", "mime", "size") if k in attachment}

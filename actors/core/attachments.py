"""Files a person sends with a message: the upload rules and how each goes to the CLI. Plain
functions; storage/attachments.py keeps the bytes.

An upload is ``{name, mime, data}`` with ``data`` base64 (no ``data:`` prefix): at most 8 a
message, each at most 10 MiB decoded and all of them together too, a name and a mime type of
1..255 characters. A refusal is ``invalid-attachments`` naming the first problem.

Both the name and the type are written into the message the agent reads, so neither may hold a
control character or a line break (one could start a line of its own there, forging a file or
an instruction). A file declared as an image must be one by its first bytes: it goes to the
model as that image, and a model refuses the whole turn over an image that is not what it says.

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
BY_EXTENSION = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
# Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def image_type(head: bytes) -> str | None:
    """The image type the first bytes are (at least 12 of them), by their magic; None for none."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


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
        if _UNPRINTABLE.search(name):
            raise _refuse(f"Attachment {clean(name)!r}: a name has no line breaks or control characters "
                          "(send the file's own name)")
        if not isinstance(mime, str) or len(mime) > 255 or _UNPRINTABLE.search(mime):
            raise _refuse("An attachment's mime type is at most 255 characters, without control characters")
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
        files.append((name, _checked_type(name, mime, content), content))
    return files


def _checked_type(name: str, mime: str, content: bytes) -> str:
    """The file's type: a declared image type its bytes must bear out; one guessed from the name
    alone that they do not is a plain file (it goes by its path, not as an image)."""
    typed = type_of(name, mime)
    if typed not in IMAGE_MIMES:
        return typed
    found = image_type(content[:12])
    if found == typed:
        return typed
    if typed != mime:
        return mime or "application/octet-stream"
    really = f"its bytes are a {found.split('/')[1].upper()} image: declare it as {found}" if found else \
        "its bytes are not an image of that type: send the image itself, or the file as application/octet-stream"
    raise _refuse(f"Attachment {name!r} is declared as {mime} but {really}")


def type_of(name: str, mime: str) -> str:
    """The declared type; an empty or generic one is taken from the name's extension for images."""
    if mime and mime != "application/octet-stream":
        return mime
    return BY_EXTENSION.get(name.rsplit(".", 1)[-1].lower(), mime or "application/octet-stream")


def is_image(attachment: dict) -> bool:
    return attachment.get("mime") in IMAGE_MIMES


def clean(value: str) -> str:
    """The value with each control character or line break as a space: what may go on one line."""
    return _UNPRINTABLE.sub(" ", value)


def message_text(text: str, attachments: list[dict]) -> str:
    """The text the CLI gets: the person's, and each file that is not an image named with its
    path (images go as images), one line each."""
    files = [a for a in attachments if not is_image(a)]
    if not files:
        return text
    # (decode() refuses such names; a message queued before that rule is cleaned here)
    listed = "\n".join(f"- {clean(a['name'])} ({clean(a['mime'])}, {a['size']} bytes): {a['path']}" for a in files)
    return (text + "\n\n" if text else "") + f"[Attached files]\n{listed}"


def public(attachment: dict) -> dict:
    """What a client is told of one: never its path on this machine."""
    return {k: attachment[k] for k in ("id", "name", "mime", "size") if k in attachment}

"""Parsing and checking the commands a page sends on the chat socket.

Everything here is pure: a frame comes in as text, a command or a refusal with a message that
says what to change goes out. Nothing reaches a CLI before it passes.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from actors.core.attachments import image_type
from actors.harness.mode_names import RUNTIME_MODES
from actors.messages import Interrupt, Respond, Send, is_lowercase_uuid  # noqa: F401 - parsed into
from web import command_rules as rules

MAX_SEND_FRAME_BYTES = 8 * 1024 * 1024  # a whole send frame, as UTF-8 JSON
MAX_COMMAND_ID = 200
MAX_MODEL_ID = 128
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$")
_DATA_URL = re.compile(r"^data:(image/(?:png|jpeg));base64,(.*)$", re.S)


@dataclass(frozen=True)
class Configure:
    """The session's runtime mode (one of RUNTIME_MODES), and whether it plans first; None: unchanged."""
    runtime_mode: str | None
    plan: bool | None


class CommandError(ValueError):
    def __init__(self, message: str, command_id: str | None = None):
        super().__init__(message)
        self.command_id = command_id


def check_model(model) -> str:
    if not isinstance(model, str):
        raise ValueError("model must be a string (\"\" returns to the CLI's default)")
    if model and (len(model) > MAX_MODEL_ID or not _MODEL.fullmatch(model)):  # `$` alone lets "x\n" pass
        raise ValueError("model must be a model id such as \"sonnet\" or \"gpt-5-codex\" "
                         "(letters, digits, . _ : / @ [ ] -)")
    return model


def parse_command(text: str | bytes):
    raw_size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    try:
        frame = json.loads(text)
    except (ValueError, RecursionError):
        raise CommandError("a command must be one JSON object, e.g. {\"type\": \"send\", ...}") from None
    if not isinstance(frame, dict):
        raise CommandError("a command must be a JSON object with a `type`")
    kind = frame.get("type")
    if kind == "send":
        return _parse_send(frame, raw_size)
    if kind == "interrupt":
        return Interrupt()
    if kind == "respond":
        request_id = frame.get("requestId")
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)) or request_id == "":
            raise CommandError("respond needs `requestId`: the string or number listed in pendingRequestIds")
        result = frame.get("result")
        if not isinstance(result, dict):
            raise CommandError("respond needs `result`: the CLI's own answer object, e.g. {\"behavior\": \"allow\"}")
        return Respond(request_id, result)
    if kind == "configure":
        return _parse_configure(frame)
    raise CommandError(f"unknown command type {kind!r}; use send, interrupt, respond or configure")


def _parse_configure(frame: dict) -> Configure:
    try:
        command = Configure(rules.runtime_mode(frame), rules.plan(frame))
    except rules.Invalid as exc:
        raise CommandError(str(exc)) from None
    if command.runtime_mode is None and command.plan is None:
        raise CommandError(f"configure takes runtimeMode (one of: {', '.join(RUNTIME_MODES)}) "
                           "or plan (true or false)")
    return command


def _parse_send(frame: dict, raw_size: int) -> Send:
    command_id = frame.get("commandId")
    if not isinstance(command_id, str) or not command_id or len(command_id) > MAX_COMMAND_ID:
        raise CommandError(f"send needs `commandId`: a non-empty string of at most {MAX_COMMAND_ID} characters")
    if raw_size > MAX_SEND_FRAME_BYTES:
        raise CommandError(
            f"this send is {raw_size} bytes; a whole send frame must fit in 8 MiB "
            f"({MAX_SEND_FRAME_BYTES} bytes as UTF-8 JSON): send fewer or smaller images", command_id)
    text = frame.get("text", "")
    if not isinstance(text, str):
        raise CommandError("send `text` must be a string", command_id)
    model = frame.get("model")
    if model is not None:
        try:
            model = check_model(model)
        except ValueError as exc:
            raise CommandError(str(exc), command_id) from None
    images = frame.get("images") or []
    if not isinstance(images, list):
        raise CommandError("send `images` must be a list of {dataURL}", command_id)
    decoded = []
    for index, image in enumerate(images):
        try:
            decoded.append(check_image(image))
        except ValueError as exc:
            raise CommandError(f"image {index + 1}: {exc}", command_id) from None
    try:  # files of the session's checkout, relative to it, and skill names (the chat checks each)
        references = rules.references({"mentions": frame.get("mentions"), "skills": frame.get("skills")})
    except rules.Invalid as exc:
        raise CommandError(str(exc), command_id) from None
    if not text.strip() and not decoded and not references.get("skills"):
        raise CommandError("send needs some `text`, at least one image, or a skill", command_id)
    return Send(command_id, text, model, tuple(decoded), skills=tuple((n, None) for n in references.get("skills", [])),
                mentions=tuple(references.get("mentions", [])))


def check_image(image) -> tuple[str, str]:
    """Returns (media type, base64) for a PNG or JPEG ``data:`` URL whose bytes really are one."""
    if not isinstance(image, dict) or not isinstance(image.get("dataURL"), str):
        raise ValueError("each image must be {\"dataURL\": \"data:image/png;base64,...\"}")
    match = _DATA_URL.match(image["dataURL"])
    if not match:
        raise ValueError("only PNG or JPEG data: URLs (data:image/png;base64,… or data:image/jpeg;base64,…) are "
                         "accepted; remote URLs, file paths and other formats are not")
    media_type, data = match.group(1), re.sub(r"\s+", "", match.group(2))
    try:
        head = base64.b64decode(data[:64], validate=True) if data else b""
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the data: URL is not valid base64") from None
    if image_type(head) != media_type:
        raise ValueError(f"the data says {media_type} but its bytes are not a {media_type.split('/')[1].upper()} image")
    return media_type, data

"""What a send may carry: PNG/JPEG data URLs only, a whole frame within 8 MiB, a model for later turns."""
from __future__ import annotations

import base64
import struct
import uuid
import zlib

from tests.mock_anthropic import text_reply

EIGHT_MIB = 8 * 1024 * 1024


def tiny_png() -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def _images_in(request) -> list[dict]:
    blocks = []
    for message in request["messages"]:
        if isinstance(message.get("content"), list):
            blocks += [b for b in message["content"] if b.get("type") == "image"]
    return blocks


def test_a_png_screenshot_reaches_the_model(daemon, mock):
    mock.add(text_reply("I see a pixel."))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    command_id = sock.send_message("what is this?", images=[{"dataURL": data_url("image/png", tiny_png())}])
    assert sock.result_for(command_id)["delivery"] in ("queued", "started")
    sock.wait_event(lambda p: p["type"] == "result")
    [image] = _images_in(mock.requests[0])
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == tiny_png()
    sock.close()


def test_gif_remote_urls_and_lying_data_urls_are_refused_and_nothing_reaches_the_cli(daemon, mock):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    refused = {
        "gif": data_url("image/gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"),
        "remote": "https://example.com/screenshot.png",
        "path": "/etc/passwd",
        "lying": data_url("image/png", b"GIF89a not a png at all"),
    }
    for name, url in refused.items():
        command_id = sock.send_message("look", images=[{"dataURL": url}])
        result = sock.result_for(command_id)
        assert "error" in result and "delivery" not in result, name
        assert "PNG" in result["error"], (name, result["error"])
    assert not [e for e in sock.events() if e["type"] == "command_lifecycle"]
    assert mock.requests == []
    sock.close()


def test_a_send_frame_over_8_mib_is_refused_with_a_clear_error(daemon, mock):
    mock.add(text_reply("small is fine"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    command_id = str(uuid.uuid4())
    big = {"type": "send", "commandId": command_id, "text": "x" * (EIGHT_MIB + 1024)}
    sock.send(big)
    result = sock.result_for(command_id)
    assert "8 MiB" in result["error"]
    assert mock.requests == []
    # The socket stays usable, and a send just under the limit goes through.
    ok_id = sock.send_message("small message")
    assert sock.result_for(ok_id)["delivery"] in ("queued", "started")
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "small is fine")
    sock.close()


def test_a_frame_past_16_mib_closes_the_socket_without_harming_the_session(daemon, mock):
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send({"type": "send", "commandId": "huge", "text": "y" * (17 * 1024 * 1024)})
    assert sock.wait_closed() == 1009
    again = daemon.connect(record["id"])
    assert again.snapshot["session"]["status"] in ("starting", "idle")
    again.close()


def test_malformed_commands_get_an_error_frame_and_the_socket_stays_open(daemon, mock):
    mock.add(text_reply("still here"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    for bad in ("not json", "[1,2]", '{"type":"dance"}', '{"type":"send","text":"no id"}',
                '{"type":"respond","requestId":true,"result":{}}'):
        sock.send(bad)
        frame = sock.wait_for(lambda f, n=len(sock.frames): f["type"] in ("error", "command_result")
                              and sock.frames.index(f) >= n)
        assert frame.get("message") or frame.get("error")
    ok_id = sock.send_message("hello")
    assert sock.result_for(ok_id)["delivery"] in ("queued", "started")
    sock.wait_event(lambda p: p["type"] == "result")
    sock.close()


def test_a_model_chosen_on_send_applies_and_empty_returns_to_the_default(daemon, mock):
    mock.add(text_reply("on sonnet"), text_reply("on default"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    sock.send_message("first", model="sonnet")
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "on sonnet")
    sock.send_message("second", model="")
    sock.wait_event(lambda p: p["type"] == "result" and p["result"] == "on default")
    first_model, second_model = mock.requests[0]["model"], mock.requests[1]["model"]
    assert "sonnet" in first_model and first_model != second_model
    sock.close()


def test_a_reused_command_id_is_refused_because_devhost_never_resends(daemon, mock):
    mock.add(text_reply("once"))
    record = daemon.create_session()
    sock = daemon.connect(record["id"])
    command_id = sock.send_message("only once")
    sock.result_for(command_id)
    sock.wait_event(lambda p: p["type"] == "result")
    sock.send({"type": "send", "commandId": command_id, "text": "only once"})
    second = sock.wait_for(lambda f: f["type"] == "command_result" and f["commandId"] == command_id
                           and "error" in f)
    assert "new commandId" in second["error"]
    assert len(mock.requests) == 1
    sock.close()

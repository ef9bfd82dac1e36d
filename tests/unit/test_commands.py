"""web.commands: what a page may send on the chat socket, and how a refusal says what to change."""
import base64
import json
import struct

import pytest

from web.commands import (MAX_COMMAND_ID, MAX_MODEL_ID, MAX_SEND_FRAME_BYTES, CommandError, Configure, Interrupt,
                          Respond, Send, check_image, check_model, is_lowercase_uuid, parse_command)

# Real file heads: a 1x1 PNG's signature and IHDR chunk; a JFIF JPEG's SOI and APP0 marker.
PNG_BYTES = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
JPEG_BYTES = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
GIF_BYTES = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00"


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def send(**fields) -> str:
    return json.dumps({"type": "send", "commandId": "c-1", **fields})


def refusal(frame) -> CommandError:
    with pytest.raises(CommandError) as caught:
        parse_command(frame)
    return caught.value


# ---- send ------------------------------------------------------------------------------------

def test_a_send_with_text_becomes_a_send_that_keeps_the_sessions_model():
    assert parse_command(send(text="hello")) == Send("c-1", "hello", None, ())


def test_a_send_arriving_as_bytes_is_read_the_same():
    assert parse_command(send(text="hello").encode()) == Send("c-1", "hello", None, ())


def test_an_empty_model_returns_to_the_clis_default_and_a_named_one_is_kept():
    assert parse_command(send(text="hi", model="")).model == ""
    assert parse_command(send(text="hi", model="sonnet")).model == "sonnet"


def test_a_send_needs_text_or_an_image_or_a_skill():
    assert "send needs some `text`, at least one image, or a skill" in str(refusal(send(text="  \n")))
    assert "send needs some `text`, at least one image, or a skill" in str(refusal(send()))
    assert parse_command(send(skills=["greet"])).skills == (("greet", None),)  # a skill alone is a message


def test_a_send_with_only_an_image_is_accepted():
    command = parse_command(send(images=[{"dataURL": data_url("image/png", PNG_BYTES)}]))
    assert command.text == "" and command.images == (("image/png", base64.b64encode(PNG_BYTES).decode()),)


def test_send_text_must_be_a_string():
    error = refusal(send(text=["hello"]))
    assert "`text` must be a string" in str(error) and error.command_id == "c-1"


def test_send_images_must_be_a_list():
    assert "`images` must be a list" in str(refusal(send(text="hi", images={"dataURL": "x"})))


# ---- commandId -------------------------------------------------------------------------------

@pytest.mark.parametrize("command_id", [None, "", 7, ["c-1"], "x" * (MAX_COMMAND_ID + 1)])
def test_a_send_needs_a_non_empty_string_command_id_of_bounded_length(command_id):
    frame = {"type": "send", "text": "hello"}
    if command_id is not None:
        frame["commandId"] = command_id
    error = refusal(json.dumps(frame))
    assert "`commandId`" in str(error)
    assert error.command_id is None  # nothing usable to answer under: reported as a plain error


def test_a_command_id_at_the_length_limit_is_accepted():
    assert parse_command(json.dumps({"type": "send", "commandId": "x" * MAX_COMMAND_ID, "text": "hi"})).command_id \
        == "x" * MAX_COMMAND_ID


def test_a_refused_send_keeps_its_command_id_so_the_page_can_match_the_answer():
    assert refusal(send(text="hi", model="-x")).command_id == "c-1"
    assert refusal(send(text="hi", images=[{"dataURL": "https://example.com/a.png"}])).command_id == "c-1"


# ---- model ids -------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["sonnet", "claude-opus-4-1[1m]", "gpt-5-codex", "openai/gpt-5.1@2025",
                                   "x" * MAX_MODEL_ID, ""])
def test_model_ids_of_letters_digits_and_separators_are_accepted(model):
    assert check_model(model) == model


@pytest.mark.parametrize("model", ["--dangerously-skip-permissions", "-p", "sonnet --verbose", "sonnet\n",
                                   "sonnet;rm", "x" * (MAX_MODEL_ID + 1), ".hidden", "/abs"])
def test_a_model_id_that_could_read_as_a_flag_or_carry_other_text_is_refused(model):
    error = refusal(send(text="hi", model=model))
    assert "model must be a model id such as" in str(error)


def test_a_model_must_be_a_string():
    assert "model must be a string" in str(refusal(send(text="hi", model=3)))


# ---- images ----------------------------------------------------------------------------------

def test_png_and_jpeg_data_urls_whose_bytes_match_are_accepted():
    png, jpeg = data_url("image/png", PNG_BYTES), data_url("image/jpeg", JPEG_BYTES)
    command = parse_command(send(text="look", images=[{"dataURL": png}, {"dataURL": jpeg}]))
    assert command.images == (("image/png", base64.b64encode(PNG_BYTES).decode()),
                              ("image/jpeg", base64.b64encode(JPEG_BYTES).decode()))


def test_line_wrapped_base64_is_accepted_without_its_line_breaks():
    encoded = base64.encodebytes(PNG_BYTES * 4).decode()  # 76-character lines
    assert "\n" in encoded.strip()
    media_type, data = check_image({"dataURL": "data:image/png;base64," + encoded})
    assert media_type == "image/png" and base64.b64decode(data) == PNG_BYTES * 4


@pytest.mark.parametrize("url", [
    data_url("image/gif", GIF_BYTES),
    data_url("image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8 "),
    "https://example.com/screenshot.png",
    "/home/me/screenshot.png",
    "file:///home/me/screenshot.png",
    data_url("image/svg+xml", b"<svg/>"),
])
def test_other_formats_remote_urls_and_file_paths_are_refused_with_what_is_accepted(url):
    error = refusal(send(text="look", images=[{"dataURL": url}]))
    assert str(error).startswith("image 1: only PNG or JPEG data: URLs")
    assert "remote URLs, file paths and other formats are not" in str(error)


def test_a_data_url_whose_bytes_are_not_what_it_claims_is_refused():
    error = refusal(send(text="look", images=[{"dataURL": data_url("image/png", JPEG_BYTES)}]))
    assert "the data says image/png but its bytes are not a PNG image" in str(error)
    error = refusal(send(text="look", images=[{"dataURL": data_url("image/jpeg", GIF_BYTES)}]))
    assert "its bytes are not a JPEG image" in str(error)


@pytest.mark.parametrize("payload", ["@@@@", "iVBORw0KGgo", "iVBORw0KGgoAAAANSUhEUg==AAAA" + "!" * 8])
def test_a_data_url_that_is_not_base64_is_refused(payload):
    error = refusal(send(text="look", images=[{"dataURL": "data:image/png;base64," + payload}]))
    assert "not valid base64" in str(error)


def test_an_empty_data_url_is_refused():
    error = refusal(send(text="x", images=[{"dataURL": "data:image/png;base64,"}]))
    assert "its bytes are not a PNG image" in str(error)


def test_each_image_must_be_an_object_with_a_data_url_and_the_refusal_names_which():
    error = refusal(send(text="look", images=[{"dataURL": data_url("image/png", PNG_BYTES)}, "data:image/png;..."]))
    assert str(error).startswith("image 2: each image must be {\"dataURL\"")


# ---- the 8 MiB frame limit -------------------------------------------------------------------

def frame_of_size(size: int, filler: str = "a") -> str:
    """A send frame of exactly ``size`` bytes as UTF-8 JSON (filler: a 1- or 2-byte character)."""
    bare = send(text="")
    room = size - len(bare.encode())
    width = len(filler.encode())
    text = filler * (room // width) + "a" * (room % width)
    frame = json.dumps({"type": "send", "commandId": "c-1", "text": text}, ensure_ascii=False)
    assert len(frame.encode()) == size
    return frame


def test_a_send_frame_of_exactly_8_mib_is_accepted():
    assert len(parse_command(frame_of_size(MAX_SEND_FRAME_BYTES)).text) > 8_000_000


def test_a_send_frame_one_byte_over_8_mib_is_refused_with_its_command_id():
    assert MAX_SEND_FRAME_BYTES == 8 * 1024 * 1024
    error = refusal(frame_of_size(MAX_SEND_FRAME_BYTES + 1))
    assert error.command_id == "c-1"
    assert "must fit in 8 MiB" in str(error) and "send fewer or smaller images" in str(error)


def test_the_frame_limit_counts_utf8_bytes_not_characters():
    frame = frame_of_size(MAX_SEND_FRAME_BYTES + 1, filler="é")
    assert len(frame) < MAX_SEND_FRAME_BYTES  # under the limit in characters, over it in bytes
    assert refusal(frame).command_id == "c-1"
    assert refusal(frame.encode()).command_id == "c-1"


# ---- interrupt and respond -------------------------------------------------------------------

def test_interrupt_takes_no_fields():
    assert parse_command('{"type": "interrupt"}') == Interrupt()


@pytest.mark.parametrize("request_id", ["3b715175-bc05-4ed0-b98a-9b8b85668f29", 0, 42])
def test_respond_names_a_request_by_string_or_number_and_passes_the_native_result(request_id):
    result = {"behavior": "allow", "updatedInput": {"command": "touch x"}}
    frame = json.dumps({"type": "respond", "requestId": request_id, "result": result})
    assert parse_command(frame) == Respond(request_id, result)


@pytest.mark.parametrize("request_id", [None, "", True, 1.5, ["r"], {"id": 1}])
def test_respond_refuses_a_request_id_that_is_not_a_string_or_number(request_id):
    frame = {"type": "respond", "result": {"behavior": "allow"}}
    if request_id is not None:
        frame["requestId"] = request_id
    assert "respond needs `requestId`" in str(refusal(json.dumps(frame)))


@pytest.mark.parametrize("result", [None, "allow", ["allow"]])
def test_respond_needs_the_clis_answer_as_an_object(result):
    frame = {"type": "respond", "requestId": "r1"}
    if result is not None:
        frame["result"] = result
    assert "respond needs `result`" in str(refusal(json.dumps(frame)))


# ---- framing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["not json", "", "{\"type\": \"send\""])
def test_a_frame_that_is_not_json_is_refused(text):
    assert "one JSON object" in str(refusal(text))


@pytest.mark.parametrize("text", ["[]", "\"send\"", "3", "null"])
def test_a_frame_must_be_an_object(text):
    assert "must be a JSON object with a `type`" in str(refusal(text))


@pytest.mark.parametrize("kind", [None, "Send", "set_model", "close"])
def test_an_unknown_command_type_is_refused_with_the_ones_that_exist(kind):
    assert "use send, interrupt, respond or configure" in str(refusal(json.dumps({"type": kind})))


# ---- the session's runtime mode --------------------------------------------------------------

@pytest.mark.parametrize("mode", ["supervised", "auto-accept-edits", "auto", "full-access"])
def test_configure_sets_one_of_the_runtime_modes(mode):
    assert parse_command(json.dumps({"type": "configure", "runtimeMode": mode, "plan": False})) == \
        Configure(mode, False)


def test_configure_may_ask_for_a_plan_alone():
    assert parse_command(json.dumps({"type": "configure", "plan": True})) == Configure(None, True)


@pytest.mark.parametrize("mode", ["Full access", "yolo", "bypassPermissions", "", 3, True, ["auto"]])
def test_a_mode_that_is_not_one_of_them_is_refused_naming_them(mode):
    assert "runtimeMode must be one of: supervised, auto-accept-edits, auto, full-access" in \
        str(refusal(json.dumps({"type": "configure", "runtimeMode": mode})))


@pytest.mark.parametrize("plan", ["yes", 1, {}])
def test_plan_is_true_or_false(plan):
    assert "plan must be true" in str(refusal(json.dumps({"type": "configure", "plan": plan})))


def test_a_configure_that_changes_nothing_says_what_it_takes():
    words = str(refusal(json.dumps({"type": "configure"})))
    assert "configure takes runtimeMode (one of: supervised, auto-accept-edits, auto, full-access) or plan" in words


# ---- command ids that become native message ids ----------------------------------------------

def test_a_lowercase_uuid_is_recognised():
    assert is_lowercase_uuid("11111111-1111-4111-8111-111111111111")


@pytest.mark.parametrize("value", ["11111111-1111-4111-8111-11111111111A", "AAAAAAAA-1111-4111-8111-111111111111",
                                   "{11111111-1111-4111-8111-111111111111}", "11111111111141118111111111111111",
                                   "urn:uuid:11111111-1111-4111-8111-111111111111", "c-1", "", None, 7])
def test_anything_but_the_canonical_lowercase_form_is_not_a_lowercase_uuid(value):
    assert not is_lowercase_uuid(value)


def test_a_send_may_mention_files_of_the_checkout_as_relative_paths_each_once():
    command = parse_command(send(text="read these", mentions=["docs/a.md", "src/b.js", "docs/a.md"]))
    assert command.mentions == ("docs/a.md", "src/b.js")
    assert parse_command(send(text="none")).mentions == ()


def test_mentions_that_are_not_a_short_list_of_paths_are_refused_saying_what_they_must_be():
    for bad in ("docs/a.md", [""], [7], ["a\nb"], ["x" * 4097], [f"f{n}" for n in range(65)]):
        refused = refusal(send(text="x", mentions=bad))
        assert "`mentions` is a list of at most 64 files" in str(refused) and refused.command_id == "c-1"

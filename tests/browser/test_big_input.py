"""Big input in the panel, on the real Claude Code: a long paste becomes a chip (in the composer
and in the sent bubble) that opens to the whole text, and the whole text reaches the model; a
huge image is scaled down as it is added, so it can be sent; an image that cannot be made
acceptable is refused on add with the whole reason readable."""
from __future__ import annotations

import os
import re
import struct
import zlib

from playwright.sync_api import expect

from tests.browser.panel import Panel, box_of, images_sent, png, png_size
from tests.mock_anthropic import message_text, text_reply

PASTE = "\n".join(f"line {n:03d} " + "x" * 140 for n in range(400))  # 400 lines, 59,999 characters
LONG_EDGE = 1568  # what the panel fits an image to (web/static/chat/images.js)


def noise_png(side: int) -> bytes:
    """A ``side``×``side`` RGB PNG of random pixels: it does not compress, so it is ~3 bytes a pixel."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG or a baseline/progressive JPEG (its SOF segment)."""
    if data.startswith(b"\x89PNG"):
        return png_size(data)
    assert data.startswith(b"\xff\xd8"), data[:8]
    at = 2
    while at < len(data):
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2:at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    raise AssertionError("no SOF segment in the JPEG")


def drop_files(page, *files) -> None:
    """Drops files (name, type, URL to fetch their bytes from) on the conversation, as a person does."""
    page.evaluate("""async (files) => {
        const drop = new DataTransfer();
        for (const [name, type, url] of files) {
            const blob = await (await fetch(url)).blob();
            drop.items.add(new File([blob], name, {type}));
        }
        const log = document.querySelector("devhost-chat").shadowRoot.querySelector(".log");
        log.dispatchEvent(new DragEvent("drop", {dataTransfer: drop, bubbles: true, composed: true}));
    }""", [list(f) for f in files])


def serve(page, path: str, body: bytes, content_type: str) -> str:
    """``body`` at ``path`` of the page's own origin (answered by the browser, not the app)."""
    page.route(f"**{path}", lambda route: route.fulfill(body=body, content_type=content_type))
    return path


def test_a_long_paste_is_a_chip_in_the_composer_and_the_bubble_and_reaches_the_model_whole(
        page, browser, daemon, mock, shots):
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    mock.add(text_reply("Those are 400 lines of x."))
    panel = Panel(page, daemon).open()
    page.evaluate("(text) => navigator.clipboard.writeText(text)", PASTE)
    textarea = panel.find("textarea")
    textarea.click()
    page.keyboard.press("Control+V")
    chip = panel.find(".tray details.pasted")
    expect(chip.locator("summary")).to_have_text("pasted text, 400 lines")
    expect(textarea).to_have_value("")  # the textarea stays small: the paste is the chip
    textarea.fill("what is in this log?")
    shots(page, "30-pasted-text-chip")
    panel.find(".send").click()
    expect(panel.items("assistant")).to_have_text("Those are 400 lines of x.")
    expect(panel.find(".tray details.pasted")).to_have_count(0)
    bubble = panel.items("user").locator(".bubble")
    expect(bubble).to_contain_text("what is in this log?")
    expect(bubble.locator("details.pasted > summary")).to_have_text("pasted text, 400 lines")
    assert box_of(bubble)["height"] < 120, box_of(bubble)
    # Opened, it shows the whole text in a box that scrolls: the bubble stays a few hundred px.
    bubble.locator("details.pasted > summary").click()
    region = bubble.get_by_role("region", name="pasted text, 400 lines")
    expect(region).to_contain_text("line 399 ")
    assert region.evaluate("(node) => node.textContent") == PASTE
    assert box_of(bubble)["height"] < 400, box_of(bubble)
    said = message_text(mock.requests[0])
    assert "what is in this log?" in said and PASTE in said  # every character went to the model
    # After a reload the bubble is drawn from the text devhostd kept: a chip again.
    panel.reload()
    kept = panel.items("user").locator(".bubble")
    expect(kept.locator("details.pasted > summary")).to_have_text("pasted text, 400 lines")
    expect(kept).to_contain_text("what is in this log?")
    assert box_of(kept)["height"] < 120


def test_a_pasted_text_not_sent_yet_is_still_a_chip_after_a_reload(page, browser, daemon, mock):
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    mock.add(text_reply("Read it all."))
    panel = Panel(page, daemon).open()
    page.evaluate("(text) => navigator.clipboard.writeText(text)", PASTE)
    panel.find("textarea").click()
    page.keyboard.press("Control+V")
    panel.find("textarea").fill("kept over a reload")
    expect(panel.find(".tray details.pasted > summary")).to_have_text("pasted text, 400 lines")
    panel.reload()  # a hot reload of the page, say
    expect(panel.find(".tray details.pasted > summary")).to_have_text("pasted text, 400 lines")
    expect(panel.find("textarea")).to_have_value("kept over a reload")
    panel.find(".send").click()
    expect(panel.items("assistant")).to_have_text("Read it all.")
    assert PASTE in message_text(mock.requests[0])
    panel.reload()  # sent: nothing comes back into the composer
    expect(panel.items("assistant")).to_have_text("Read it all.")
    expect(panel.find(".tray details.pasted")).to_have_count(0)


def test_a_pasted_text_can_be_taken_out_of_the_composer_and_short_text_pastes_as_text(page, browser, daemon):
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    panel = Panel(page, daemon).open()
    textarea = panel.find("textarea")
    page.evaluate("(text) => navigator.clipboard.writeText(text)", "one short line")
    textarea.click()
    page.keyboard.press("Control+V")
    expect(textarea).to_have_value("one short line")
    expect(panel.find(".tray details.pasted")).to_have_count(0)
    page.evaluate("(text) => navigator.clipboard.writeText(text)", "y" * 5000)
    page.keyboard.press("Control+V")
    chip = panel.find(".tray details.pasted")
    expect(chip.locator("summary")).to_contain_text("pasted text, 5,000 characters")
    panel.find(".tray").get_by_role("button", name="Remove pasted text, 5,000 characters").click()
    expect(panel.find(".tray details.pasted")).to_have_count(0)
    expect(textarea).to_have_value("one short line")
    # Past what the draft keeps over a reload, a paste is refused, saying what to do instead.
    page.evaluate("(text) => navigator.clipboard.writeText(text)", "z" * 1_000_001)
    textarea.click()
    page.keyboard.press("Control+V")
    expect(panel.find(".hint")).to_contain_text("This paste is 1,000,001 characters; the panel keeps at most 1,000,000")
    expect(panel.find(".tray details.pasted")).to_have_count(0)
    expect(textarea).to_have_value("one short line")


def test_a_24_mb_image_is_scaled_down_as_it_is_added_and_sent_within_the_models_limits(page, daemon, mock, shots):
    mock.add(text_reply("Static, like an old TV."))
    panel = Panel(page, daemon).open()
    huge = noise_png(2830)
    assert len(huge) > 24_000_000
    drop_files(page, ("photo.png", "image/png", serve(page, "/photo.png", huge, "image/png")))
    thumb = panel.find(".tray .thumb")
    expect(thumb).to_have_count(1)
    expect(thumb.locator("figcaption")).to_have_text(f"{LONG_EDGE}×{LONG_EDGE} (scaled)")
    expect(thumb).to_have_attribute("title", re.compile(
        rf"^Scaled down from 2830×2830 \(24\.0 MB\) to {LONG_EDGE}×{LONG_EDGE} \((\d+\.\d MB|\d+ KB)\): "
        "what the models take$"))
    expect(panel.find(".hint")).to_have_text("")
    panel.send("what is in this picture?")
    expect(panel.items("assistant")).to_have_text("Static, like an old TV.")
    [sent] = images_sent(mock.requests[0])
    assert max(image_size(sent)) <= LONG_EDGE
    assert len(sent) * 4 / 3 < 5_000_000  # under Anthropic's 5 MB an image, as base64


def test_an_image_that_cannot_be_read_is_refused_on_add_with_the_whole_reason(page, daemon):
    panel = Panel(page, daemon).open()
    broken = png(40, 30)[:60]  # a PNG's start, and then nothing: no browser can draw it
    fine = png(40, 30)
    drop_files(page, ("broken-screenshot-of-the-settings-page.png", "image/png",
                      serve(page, "/broken.png", broken, "image/png")),
               ("small.png", "image/png", serve(page, "/small.png", fine, "image/png")))
    expect(panel.find(".tray .thumb")).to_have_count(1)  # the one that can be sent is taken
    expect(panel.find(".tray .thumb figcaption")).to_have_text("40×30")
    hint = panel.find(".hint")
    expect(hint).to_have_text("broken-screenshot-of-the-settings-page.png could not be read as an image: its data is "
                              "damaged or is not really a PNG. Save it again as PNG or JPEG and add it again.")
    # All of it is on screen: nothing is cut off by an ellipsis.
    assert hint.evaluate("(node) => node.scrollWidth <= node.clientWidth && node.scrollHeight <= node.clientHeight")
    assert hint.evaluate("(node) => getComputedStyle(node).textOverflow") != "ellipsis"


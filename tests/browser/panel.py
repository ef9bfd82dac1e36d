"""The chat panel as a test sees it: locators into its shadow root and the few moves a person makes.

Playwright's CSS locators pierce open shadow roots, so ``devhost-chat .send`` finds the
panel's own button and nothing of the page.
"""
from __future__ import annotations

import base64
import struct
import subprocess
import time
import zlib

from playwright.sync_api import Page, expect


class Panel:
    def __init__(self, page: Page, daemon, hostname: str = "app.localhost"):
        self.page = page
        self.daemon = daemon
        self.hostname = hostname

    def find(self, selector: str):
        return self.page.locator(f"devhost-chat {selector}")

    @property
    def url(self) -> str:
        return self.daemon.page(self.hostname)

    def load(self, path: str = "/") -> "Panel":
        """Loads the page and its panel (closed, as a fresh page has it): where the page got only
        the launcher (panel.js: the panel loads when first opened), it wakes the panel itself,
        so a test can drive it."""
        self.page.goto(self.url.rstrip("/") + path)
        self.wait_for_panel()
        return self

    def wait_for_panel(self) -> None:
        self.page.wait_for_function("() => window.__devhostChat?.booted === true")
        if self.page.evaluate("() => window.__devhostChat.lite === true"):
            self.page.evaluate("() => window.__devhostChat.wake()")
            self.page.wait_for_function("() => window.__devhostChat?.booted === true && !window.__devhostChat.lite")

    def open(self, path: str = "/") -> "Panel":
        self.load(path)
        if self.find(".launcher").is_visible():
            self.find(".launcher").click()
        expect(self.find(".panel")).to_be_visible()
        self.wait_for_harnesses()
        return self

    def reload(self) -> "Panel":
        """Reloads the page and waits until the panel found its state again (open or not, as
        it was: a launcher still showing before the panel booted must not be clicked)."""
        self.page.reload()
        self.page.wait_for_function("() => window.__devhostChat?.booted === true")
        if self.find(".launcher").is_visible():
            self.find(".launcher").click()
        expect(self.find(".panel")).to_be_visible()
        return self

    def wait_for_harnesses(self) -> None:
        expect(self.find("select.harness option[value=claude-code]")).to_have_count(1)

    def pick_harness(self, harness_id: str) -> None:
        self.find("select.harness").select_option(harness_id)

    def send(self, text: str) -> None:
        self.find("textarea").fill(text)
        self.find(".send").click()

    def items(self, kind: str = ""):
        return self.find(f".items > .item{'.' + kind if kind else ''}")

    def expect_status(self, status: str, timeout: float = 60_000) -> None:
        expect(self.find(".badge")).to_have_attribute("data-status", status, timeout=timeout)

    def texts(self) -> list[str]:
        """Each item as "key|text": keys are stable across resyncs, so a duplicate shows up."""
        return self.items().evaluate_all("(items) => items.map((i) => `${i.dataset.key}|${i.textContent}`)")


def kill_connections_to(port: int) -> None:
    """Kills every established TCP connection of the daemon's listening port, on the daemon's
    side (the kernel's SOCK_DESTROY through `ss -K`): for the browser, the server dropped them."""
    result = subprocess.run(["ss", "-K", "-t", "state", "established", f"( sport = :{port} )"],
                            capture_output=True, text=True, timeout=10)
    if result.returncode != 0:
        raise RuntimeError(f"ss -K could not kill the connections (needs root and a kernel with "
                           f"CONFIG_INET_DIAG_DESTROY): {result.stderr.strip()}")


def png(width: int, height: int, rgb=(200, 30, 30)) -> bytes:
    """A solid-colour RGB PNG of the given size."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = b"\x00" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), data[:16]
    return struct.unpack(">II", data[16:24])


def images_sent(request: dict) -> list[bytes]:
    """The images of the last user message of an Anthropic request, decoded."""
    found = []
    for message in request["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            found = [base64.b64decode(block["source"]["data"]) for block in message["content"]
                     if block.get("type") == "image"] or found
    return found


def drop_image(page, data: bytes) -> None:
    """An image dropped on the panel's log, as a person drags a file in."""
    page.evaluate("""(data) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const drop = new DataTransfer();
        drop.items.add(new File([bytes], "shot.png", {type: "image/png"}));
        const log = document.querySelector("devhost-chat").shadowRoot.querySelector(".log");
        log.dispatchEvent(new DragEvent("drop", {dataTransfer: drop, bubbles: true, composed: true}));
    }""", base64.b64encode(data).decode())



def box_of(locator, timeout: float = 5.0) -> dict:
    """The locator's layout box, waited for: the panel draws its log again as frames arrive, and
    an element read between two drawings has no box for a moment (``bounding_box()`` is None)."""
    deadline = time.monotonic() + timeout
    while (box := locator.bounding_box()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert box is not None, f"{locator} has no layout box after {timeout} s"
    return box

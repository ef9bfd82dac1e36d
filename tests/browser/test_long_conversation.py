"""A long conversation in the panel: it opens with its newest messages at once, and the older
ones come in, in order and each once, as the person scrolls up, what was on screen staying put."""
from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.integration.daemon import Daemon
from tests.integration.test_long_chat_attach import grown
from tests.mock_anthropic import text_reply

TURNS = 150  # 600 items of before: six pages of the thread socket's history


def test_a_long_conversation_shows_its_tail_at_once_and_pages_older_messages_in_when_scrolled_up(
        page, daemon, daemon_env, stack, mock):
    mock.add(text_reply("The newest answer."))
    panel = Panel(page, daemon).open()
    panel.send("the newest question")
    expect(panel.items("assistant")).to_have_text("The newest answer.")
    panel.expect_status("idle")
    assert daemon.stop() == 0
    grown(daemon, TURNS)

    again = Daemon(daemon_env, cwd=stack, config=stack / "devhost.toml", state_dir=stack / "state")
    sent, snapshots = [], []

    def watch(ws):
        if "/__devhost__/ws/thread" not in ws.url:
            return
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))
        ws.on("framereceived", lambda payload: snapshots.append(json.loads(payload))
              if '"type":"snapshot"' in payload[:40] else None)

    page.on("websocket", watch)
    try:
        panel = Panel(page, again).open()
        picker = panel.find("select.session")
        listed = picker.locator("option", has_text="the newest question")
        picker.select_option(listed.get_attribute("value"))
        panel.expect_status("closed")
        expect(panel.items("assistant").last).to_have_text("The newest answer.")
        users = panel.items("user")
        expect(users.first).not_to_have_text("question 0")
        assert users.count() < 60, "only the tail is drawn at first"
        log = panel.find(".log")
        for _ in range(200):  # scrolled up, again and again, until the first message is there
            if users.first.text_content().strip() == "question 0":
                break
            log.evaluate("(log) => { log.scrollTop = 0; log.dispatchEvent(new Event('scroll')); }")
            page.wait_for_timeout(50)
        expect(users.first).to_have_text("question 0")
        texts = [t.strip() for t in users.all_text_contents()]
        assert texts == [f"question {n}" for n in range(TURNS)] + ["the newest question"], \
            "every message of before, in order, each once"
        assert len(snapshots[-1]["items"]) == 100 and snapshots[-1]["history"]["cursor"], "the snapshot held the tail"
        pages = [frame["cursor"] for frame in sent if frame.get("type") == "history"]
        assert len(pages) == len(set(pages)) == TURNS * 4 // 100, "each older page asked once"
    finally:
        assert again.stop() == 0

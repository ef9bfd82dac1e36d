"""A person at the end of the conversation comes back at the end after a page reload mid-turn:
every time, also when the panel's styles, Markdown and the rest of the turn arrive after the
first render (the end moves; the person did not)."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply

# Where the log is once two frames were drawn (a render is one frame's work).
AT_END = """(log) => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve({
  gap: log.scrollHeight - log.scrollTop - log.clientHeight, overflow: log.scrollHeight - log.clientHeight}))))"""


def long_reply(turn: int) -> list[str]:
    """A reply taller than the panel, streamed over a few seconds: paragraphs, a list, code."""
    chunks = [f"Turn {turn}, part {n}.\n\n- a point\n- another point\n\n" for n in range(24)]
    return chunks + [f"```python\nprint({turn})\n```\n\nDone with turn {turn}."]


def test_a_mid_turn_reload_at_the_end_comes_back_scrolled_to_the_end_each_time(page, daemon, mock):
    turns = 3
    for turn in range(1, turns + 1):
        mock.add(text_reply(*long_reply(turn), delay=0.12))
    panel = Panel(page, daemon).open()
    log = panel.find(".log")
    # On a real dev server the panel's style sheets queue behind the app's own modules (a browser
    # opens 6 connections per host): here they are held until the conversation was first drawn.
    held = []
    page.route("**/__devhost__/static/chat/**/*.css", lambda route: held.append(route))
    for turn in range(1, turns + 1):
        panel.send(f"write turn {turn}")
        expect(panel.items("assistant").last).to_contain_text(f"Turn {turn}, part 3.")
        page.reload()  # mid-turn, the person at the end
        expect(panel.items("assistant").last).to_contain_text(f"Turn {turn}, part")  # drawn, unstyled
        page.wait_for_function("() => window.__devhostChat?.booted === true")
        while held:
            held.pop().continue_()
        expect(panel.find(".panel")).to_be_visible()
        expect(panel.items("assistant").last).to_contain_text(f"Done with turn {turn}.")
        panel.expect_status("idle")
        expect(panel.items("assistant").last.locator("pre code")).to_be_visible()  # highlighted code settled
        where = log.evaluate(AT_END)
        assert where["overflow"] > 200, where  # long enough that being off the end could show
        assert where["gap"] <= 2, f"reload {turn}: {where['gap']} px above the end"

"""The agent looks at the page itself: in Chromium, a page with a console error and a failed request is
open with the panel; the real Claude Code CLI runs `devhostd page errors` (and `page requests`)
(and `page element`) in a Bash tool call the person approves, and what the mock model gets back holds the page's
error and the proxy's own 500, as the page's panel reported them over the page socket."""
from __future__ import annotations

from playwright.sync_api import expect

from actors.core.visuals import program_prefix
from tests.browser.panel import Panel
from tests.integration.daemon import wait_until
from tests.mock_anthropic import message_text, text_reply, tool_use_reply

THROWN = "Cart failed to check out"


def test_the_agents_devhostd_page_errors_on_a_real_claude_code_turn(page, daemon, mock):
    command = "; ".join(f"{program_prefix()} page {words}" for words in ("errors", "requests", "element '#box'"))
    mock.add(tool_use_reply("Bash", {"command": command, "description": "Read the page's errors"}),
             text_reply("The cart throws on checkout."))
    panel = Panel(page, daemon).open()
    # (An uncaught error would fail the page fixture, which holds every page to throwing none.)
    page.evaluate(f"""() => {{ console.error(new Error({THROWN!r})); fetch("/status/500").catch(() => {{}}); }}""")
    panel.send("why does the checkout fail?")
    approval = panel.items("tool").first
    approval.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("The cart throws on checkout.")
    result = wait_until(lambda: next((message_text(r) for r in mock.requests if "page http://" in message_text(r)),
                                     None), timeout=30, what="the tool result at the mock")
    assert f"page http://app.localhost:{daemon.port}/" in result
    [error] = [line for line in result.splitlines() if THROWN in line]
    assert error.startswith("- console.error: "), result
    assert "/status/500 -> 500 (answered by the devhost proxy)" in result, result
    # The page itself described the element the selector finds (page_context.js).
    assert "1 element(s) match; the first:" in result and "<div> selector #box" in result, result
    assert '"width": 300' in result and '"height": 120' in result, result  # its box, as the page lays it out
    # The appended prompt's one line told the agent the command.
    assert "page errors (or page requests, or page element" in message_text(mock.requests[0])

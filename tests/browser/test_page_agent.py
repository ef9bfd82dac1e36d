"""The agent looks at the page itself: in Chromium, a page with an error and a failed request is
open with the panel; the real Claude Code CLI runs `devhostd page errors` (and `page requests`)
in a Bash tool call the person approves, and what the mock model gets back holds the page's
error and the proxy's own 500, as the page's panel reported them over the page socket."""
from __future__ import annotations

from playwright.sync_api import expect

from actors.core.visuals import program_prefix
from tests.browser.panel import Panel
from tests.integration.daemon import wait_until
from tests.mock_anthropic import message_text, text_reply, tool_use_reply

THROWN = "Cart failed to check out"


def test_the_agents_devhostd_page_errors_on_a_real_claude_code_turn(page, daemon, mock):
    command = f"{program_prefix()} page errors; {program_prefix()} page requests"
    mock.add(tool_use_reply("Bash", {"command": command, "description": "Read the page's errors"}),
             text_reply("The cart throws on checkout."))
    panel = Panel(page, daemon).open()
    page.evaluate(f"""() => {{ setTimeout(() => {{ throw new Error({THROWN!r}); }});
                             fetch("/status/500").catch(() => {{}}); }}""")
    panel.send("why does the checkout fail?")
    approval = panel.items("tool").first
    approval.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("The cart throws on checkout.")
    result = wait_until(lambda: next((message_text(r) for r in mock.requests if "page http://" in message_text(r)),
                                     None), timeout=30, what="the tool result at the mock")
    assert f"page http://app.localhost:{daemon.port}/" in result
    assert f"uncaught error: Error: {THROWN}" in result or f"uncaught error: {THROWN}" in result, result
    assert "/status/500 -> 500 (answered by the devhost proxy)" in result, result
    system = str(mock.requests[0].get("system"))
    assert "page errors (or page requests, or page element" in system  # the appended prompt's one line

"""Visuals in the panel, in Chromium: a page an agent published is shown inline in the
conversation, sized by what it reports, with open-in-tab; and it is shut in: from its sandboxed
frame on the visuals origin it cannot call devhostd's API, read the page or its storage, or
navigate the page away."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply
from devhostd.core_client import CoreConnection

PROBE = """<!doctype html><html><head><title>probe</title></head><body>
<div id="tall" style="height:420px;background:var(--chart-1)">a chart</div>
<a id="out" href="https://example.com/report">the report</a>
<pre id="results"></pre>
<script>
const results = {};
function done(name, value) { results[name] = value; document.getElementById("results").textContent = JSON.stringify(results); }
try { done("dom", String(window.parent.document.title)); } catch (e) { done("dom", "blocked"); }
try { window.localStorage.setItem("k", "v"); done("storage", "open"); } catch (e) { done("storage", "blocked"); }
try { done("cookie", document.cookie === "" ? "empty" : document.cookie); } catch (e) { done("cookie", "blocked"); }
try { window.top.location.href = "https://example.com/hijacked"; done("navigate", "tried"); } catch (e) { done("navigate", "blocked"); }
fetch(CONTROL + "/__devhost__/core", {method: "POST", body: "{}"}).then(() => done("api", "reached"), () => done("api", "blocked"));
</script></body></html>"""  # noqa: E501 - the page's script


def test_a_published_visual_is_shown_sized_by_its_page_and_cannot_reach_the_page_or_the_api(page, daemon, mock, shots):
    mock.add(text_reply("Here is the chart."))
    panel = Panel(page, daemon).open()
    panel.send("chart it")
    expect(panel.items("assistant").first).to_have_text("Here is the chart.")
    page.evaluate("localStorage.setItem('app-secret', 'do not read')")
    chat_id = daemon.sessions()[0]["chatId"]
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        probe = PROBE.replace("CONTROL", repr(daemon.control_origin))
        visual = core.chats.publish_visual(chat_id, "Sandbox probe", probe)["visual"]
    card = panel.find(".item.visual")
    expect(card).to_contain_text("Sandbox probe")
    frame = page.frame_locator("devhost-chat iframe.visual-frame")
    results = frame.locator("#results")
    expect(results).to_contain_text('"api":"blocked"', timeout=15_000)
    text = results.text_content()
    assert '"dom":"blocked"' in text and '"storage":"blocked"' in text and '"navigate"' in text
    assert page.url.startswith(daemon.page())  # the page was not navigated away
    assert page.evaluate("localStorage.getItem('app-secret')") == "do not read"
    # Sized by its page (420 px of chart and a few lines), not the default.
    expect(panel.find("iframe.visual-frame")).to_have_attribute("style", re.compile(r"height: ?(4[4-9]\d|5\d\d)px"))
    link = card.get_by_role("link", name="Open in a tab")
    assert link.get_attribute("href").endswith(f"/v/{chat_id}/{visual['id']}")
    assert link.get_attribute("href").startswith(f"http://visuals.localhost:{daemon.port}")
    # A link in the page is opened by the panel, in a new tab (the sandbox cannot).
    page.context.route("https://example.com/**",
                       lambda route: route.fulfill(body="the report", content_type="text/html"))
    with page.context.expect_page() as opened:
        frame.locator("#out").click()
    opened.value.wait_for_load_state()
    assert opened.value.url == "https://example.com/report"
    assert opened.value.evaluate("window.opener") is None  # noopener: it cannot reach back
    opened.value.close()
    shots(page, "21-visual")

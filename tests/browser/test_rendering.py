"""Replies rendered as Markdown, safely: the panel lives inside the person's page, so nothing a
model writes may run there."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply

REPLY = """## The plan

1. **Read** the code
2. Change `app.py`

```python
def hello():
    return "hi"
```

| file | lines |
|------|-------|
| app.py | 12 |

See [the docs](https://example.com/docs).

<img src=x onerror="window.__xss = 'img'"> <script>window.__xss = 'script'</script>
[a trap](javascript:window.__xss='link') <a href="#" onclick="window.__xss='click'">click me</a>
"""


def test_a_reply_is_rendered_as_markdown_with_highlighted_code_and_nothing_in_it_runs(page, daemon, mock, shots):
    mock.add(text_reply(REPLY[:40], REPLY[40:]))  # streamed in two pieces, as a reply arrives
    panel = Panel(page, daemon).open()
    panel.send("what is the plan?")
    reply = panel.items("assistant").last
    expect(reply.locator("h2")).to_have_text("The plan")
    expect(reply.locator("ol > li")).to_have_count(2)
    expect(reply.locator("strong")).to_have_text("Read")
    expect(reply.locator("li code")).to_have_text("app.py")
    code = reply.locator("pre.code > code")
    expect(code).to_contain_text('return "hi"')
    expect(code).to_have_attribute("data-highlighted", "yes")
    expect(code.locator(".hljs-keyword").first).to_have_text("def")  # highlighted, not plain text
    expect(reply.locator("pre.code > button.copy")).to_have_text("Copy")
    expect(reply.locator("td")).to_have_text(["app.py", "12"])
    docs = reply.get_by_role("link", name="the docs")
    expect(docs).to_have_attribute("target", "_blank")
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    # Inert: no image, no script, no handler, no javascript: link.
    expect(reply.locator("img, script")).to_have_count(0)
    trap = reply.get_by_text("a trap")
    assert not (trap.get_attribute("href") or "").lower().startswith("javascript:")
    reply.get_by_text("click me").click()
    trap.click()
    panel.expect_status("idle")
    assert page.evaluate("() => window.__xss") is None
    shots(page, "11-markdown")

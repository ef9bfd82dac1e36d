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

<table background="http://leak.localhost/table.png"><tr><td background="http://leak.localhost/td.png">cell</td></tr>
</table> <a href="https://example.com/" ping="http://leak.localhost/ping">pinged</a>
"""


def test_a_reply_is_rendered_as_markdown_with_highlighted_code_and_nothing_in_it_runs(page, daemon, mock, shots):
    mock.add(text_reply(REPLY[:40], REPLY[40:]))  # streamed in two pieces, as a reply arrives
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
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
    expect(reply.locator("table").first.locator("td")).to_have_text(["app.py", "12"])
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
    # Nothing the reply names is fetched: no table background, no link ping.
    expect(reply.get_by_text("cell")).to_be_visible()
    assert reply.get_by_role("link", name="pinged").get_attribute("ping") is None
    assert reply.locator("[background]").count() == 0
    assert not [url for url in fetched if "leak.localhost" in url]
    shots(page, "11-markdown")


def test_an_edit_shows_as_a_diff_and_a_tool_call_as_one_line_that_opens(page, daemon, mock, stack, shots):
    from tests.mock_anthropic import tool_use_reply
    target = stack / "project" / "app.py"
    target.write_text("def hello():\n    return 'hi'\n")
    mock.add(tool_use_reply("Edit", {"file_path": str(target), "old_string": "    return 'hi'",
                                     "new_string": "    return 'hello'\n    # said politely"}),
             text_reply("Changed it."),
             tool_use_reply("Bash", {"command": "touch listed.txt", "description": "Make a file"}),
             text_reply("Listed."))
    panel = Panel(page, daemon).open()
    panel.send("make it polite")
    approval = panel.items("tool").first  # it asks inside the edit's own card, showing the diff once
    expect(approval.locator(".diff .line.add")).to_have_count(2)  # what it asks to change, as a diff
    expect(panel.items("approval")).to_have_count(0)
    approval.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Changed it.")
    edit = panel.items("tool").first
    expect(edit.locator(".diff-head .path")).to_have_text(str(target))
    expect(edit.locator(".diff .line.del")).to_have_text(["-     return 'hi'\n"])
    expect(edit.locator(".diff .line.add")).to_have_text(["+     return 'hello'\n", "+     # said politely\n"])
    expect(edit.locator(".diff-head .added")).to_have_text("+2")
    expect(edit.locator(".diff-head .removed")).to_have_text("−1")
    assert target.read_text() == "def hello():\n    return 'hello'\n    # said politely\n"
    shots(page, "13-edit-diff")
    panel.send("list the files")
    panel.items("tool").last.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Listed.")
    bash = panel.items("tool").last
    expect(bash.locator("summary")).to_contain_text("Bash")
    expect(bash.locator("summary")).to_contain_text("touch listed.txt")
    expect(bash.locator(".block").first).to_be_hidden()  # input and output wait behind the one line
    bash.locator("summary").click()
    expect(bash.locator(".block").first).to_be_visible()

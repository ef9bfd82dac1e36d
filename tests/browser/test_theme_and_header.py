"""Dark and light, the header, and accessibility, as a person sees the panel in Chromium (real
Claude Code behind it, on the mock model server).

- The panel is light or dark as the system prefers (Playwright's color_scheme emulation), or as
  the person picks with the header's theme switch (auto → light → dark), remembered across
  reloads; code is highlighted with the matching GitHub theme of the pinned highlight.js.
- In both, the text of code tokens, diff lines, a notice, an approval and a visual's page reaches
  WCAG AA (4.5:1), measured from the computed styles of the rendered elements.
- The header keeps every control inside the panel at a phone's width and a desktop's, whatever
  the status badge says; a usage warning is coloured as a warning.
- Every control has an accessible name and a tooltip, a disabled one says why, and axe-core finds
  no serious or critical violation in the panel's main states, in both themes; focus goes into
  the panel when it opens and back to the launcher when it closes.
"""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from devhostd.core_client import CoreConnection
from tests.browser.a11y import (assert_all_text_readable, assert_every_control_labelled,
                                assert_no_serious_axe_violation, assert_readable, contrasts)
from tests.browser.panel import Panel, kill_connections_to
from tests.mock_anthropic import text_reply, tool_use_reply, unified_headers, usage_limit_reply

THEMES = ("light", "dark")
GITHUB_LIGHT_PLAIN = "rgb(36, 41, 46)"  # the light theme's code colour: unreadable on a dark panel

CODE_REPLY = """Here it is:

```python
# says hello, politely
def hello(name: str) -> str:
    print(len(name), 42, None)
    return f"hello {name}"
```
"""

VISUAL = """<!doctype html><html><body>
<h1 id="heading">Requests per second</h1>
<p id="body">Measured on the branch, against main.</p>
<p id="caption" style="color: var(--muted-foreground)">Higher is better.</p>
</body></html>"""


def in_theme(page, scheme: str) -> None:
    """The system prefers ``scheme``; the panel (on auto) shows it."""
    page.emulate_media(color_scheme=scheme)
    expect(page.locator("devhost-chat")).to_have_attribute("data-theme", scheme)


def check_state(page, state: str) -> None:
    """One of the panel's main states, in both themes: all its text at AA, labelled, and clean
    for axe-core."""
    for scheme in THEMES:
        in_theme(page, scheme)
        assert_all_text_readable(page, f"{state} ({scheme})")
        assert_every_control_labelled(page, f"{state} ({scheme})")
        assert_no_serious_axe_violation(page, f"{state} ({scheme})")


def test_the_theme_follows_the_system_or_the_persons_pick_and_the_pick_is_remembered(page, daemon):
    panel = Panel(page, daemon).open()
    host, switch = page.locator("devhost-chat"), panel.find("button.theme")
    expect(host).to_have_attribute("data-theme", "light")
    expect(switch).to_have_accessible_name("Theme: Auto (follows the system)")
    expect(switch).to_have_attribute("title", re.compile(r"Click for light"))
    in_theme(page, "dark")  # auto follows the system as it changes
    sheets = panel.find("link[href*=highlight-github]")
    expect(sheets).to_have_count(2)
    assert {s.get_attribute("href").rsplit("/", 1)[1]: s.get_attribute("media") for s in sheets.all()} == {
        "highlight-github.min.css": "not all", "highlight-github-dark.min.css": "all"}
    switch.click()  # auto → light, whatever the system prefers
    expect(host).to_have_attribute("data-theme", "light")
    expect(switch).to_have_accessible_name("Theme: Light")
    panel.reload()
    expect(host).to_have_attribute("data-theme", "light")  # remembered
    assert page.evaluate("localStorage.getItem('devhost:theme')") == "light"
    panel.find("button.theme").click()  # light → dark
    expect(host).to_have_attribute("data-theme", "dark")
    page.emulate_media(color_scheme="light")
    expect(host).to_have_attribute("data-theme", "dark")  # a pick holds against the system
    panel.find("button.theme").click()  # dark → auto: the system's again
    expect(host).to_have_attribute("data-theme", "light")
    expect(panel.find("button.theme")).to_have_accessible_name("Theme: Auto (follows the system)")
    page.evaluate("localStorage.setItem('devhost:theme', 'sepia')")  # another version's word: auto
    panel.reload()
    expect(panel.find("button.theme")).to_have_accessible_name("Theme: Auto (follows the system)")
    expect(host).to_have_attribute("data-theme", "light")


def test_code_a_diff_a_notice_and_a_visual_read_at_aa_in_light_and_dark(page, daemon, mock, stack, shots):
    target = stack / "project" / "app.py"
    target.write_text("def hello():\n    return 'hi'\n")
    mock.add(text_reply(CODE_REPLY),
             tool_use_reply("Edit", {"file_path": str(target), "old_string": "    return 'hi'",
                                     "new_string": "    return 'hello'\n    # said politely"}),
             text_reply("Changed it."),
             text_reply(*["slow "] * 80, delay=0.2))
    panel = Panel(page, daemon).open()
    panel.send("show me the code")
    code = panel.items("assistant").first.locator("pre.code > code")
    expect(code).to_have_attribute("data-highlighted", "yes")
    panel.send("make it polite")
    panel.items("tool").first.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Changed it.")
    panel.send("tell me a long story")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("slow")
    panel.find(".stop").click()
    expect(panel.items("notice")).to_have_text("Interrupted.")
    panel.expect_status("idle")
    with CoreConnection(daemon.control_origin, token=daemon.core_token) as core:
        core.chats.publish_visual(daemon.sessions()[0]["chatId"], "Throughput", VISUAL)
    visual = page.frame_locator("devhost-chat iframe.visual-frame")
    expect(visual.locator("#caption")).to_be_visible()

    for scheme in THEMES:
        in_theme(page, scheme)
        expect(visual.locator("html")).to_have_attribute("data-appearance", scheme)  # the visual follows
        tokens = assert_readable(code.locator("[class^=hljs-]"), f"code tokens ({scheme})")
        assert len({t["fg"] for t in tokens}) >= 4, tokens  # highlighted: keywords, strings, numbers… apart
        assert_readable(code, f"plain code ({scheme})")
        assert_readable(panel.find(".diff .line.add, .diff .line.del"), f"diff lines ({scheme})")
        assert_readable(panel.find(".diff-head :is(.added, .removed, .path)"), f"diff counts ({scheme})")
        assert_readable(panel.items("notice"), f"a notice ({scheme})")
        assert_readable(panel.find(".item.user .bubble, .item.assistant .markdown p"), f"messages ({scheme})")
        shown = assert_readable(visual.locator("#heading, #body, #caption"), f"the visual's text ({scheme})")
        # The visual's page is in the panel's palette: dark on dark, light on light.
        assert (int(shown[0]["bg"][1:3], 16) < 128) == (scheme == "dark"), shown
    assert contrasts(code)[0]["fg"] != "#24292e"  # dark: no longer GitHub light's plain colour
    assert code.evaluate("(c) => getComputedStyle(c).color") != GITHUB_LIGHT_PLAIN
    code.scroll_into_view_if_needed()  # the code, and the diff under it
    shots(page, "22-dark")
    check_state(page, "a conversation with code and a diff")
    # A picked theme reaches the visual too, against the system's preference.
    panel.find("button.theme").click()  # auto → light, on a dark system
    expect(visual.locator("html")).to_have_attribute("data-appearance", "light")
    panel.find("button.theme").click()  # light → dark
    expect(visual.locator("html")).to_have_attribute("data-appearance", "dark")


def test_an_approval_waiting_and_a_closed_session_are_readable_labelled_and_clean_for_axe(page, daemon, mock, stack):
    target = stack / "project" / "app.py"
    target.write_text("def hello():\n    return 'hi'\n")
    mock.add(tool_use_reply("Edit", {"file_path": str(target), "old_string": "    return 'hi'",
                                     "new_string": "    return 'hello'"}),
             text_reply("Changed it."))
    panel = Panel(page, daemon).open()
    panel.send("make it polite")
    approval = panel.items("tool").first
    expect(approval.get_by_role("button", name="Allow", exact=True)).to_be_visible()
    for scheme in THEMES:
        in_theme(page, scheme)
        assert_readable(approval.locator(".tool-head .summary, .tool-head .state, .diff .line, button"),
                        f"an approval waiting ({scheme})")
    check_state(page, "an approval waiting")
    approval.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Changed it.")
    panel.find(".end").click()
    panel.expect_status("closed")
    expect(panel.find(".resume")).to_be_visible()
    for scheme in THEMES:
        in_theme(page, scheme)
        assert_readable(panel.find(".badge"), f"the closed badge ({scheme})")
    check_state(page, "a closed session")


def test_the_empty_panel_is_labelled_and_focus_goes_into_it_and_back_to_the_launcher(page, daemon):
    panel = Panel(page, daemon).load()
    launcher = panel.find(".launcher")
    launcher.focus()
    page.keyboard.press("Enter")
    expect(panel.find(".panel")).to_be_visible()
    expect(panel.find("textarea")).to_be_focused()  # straight to the composer
    panel.wait_for_harnesses()
    # The harness picker is greyed out in a conversation only; here it says what it picks.
    expect(panel.find("select.harness")).to_be_enabled()
    check_state(page, "the panel open, empty")
    panel.find("button[aria-label='Close the chat']").click()
    expect(launcher).to_be_focused()  # back where the person opened it from
    launcher.click()
    expect(panel.find("textarea")).to_be_focused()
    page.keyboard.press("Escape")  # a dialog: Escape closes it
    expect(panel.find(".panel")).to_be_hidden()
    expect(launcher).to_be_focused()


def test_a_conversation_says_why_its_harness_cannot_be_changed_and_its_mode_notice_reads(page, daemon, mock):
    mock.add(text_reply("Hello."))
    panel = Panel(page, daemon).open()
    panel.send("hi")
    panel.expect_status("idle")
    harness = panel.find("select.harness")
    expect(harness).to_be_disabled()
    expect(harness).to_have_attribute("title", re.compile(r"start a New one"))
    panel.find("select.mode").select_option("auto")  # Claude Code runs narrower: the notice says so
    expect(panel.find(".mode-notice")).to_have_text("Claude Code has no automatic mode here: edits go, commands ask.")
    check_state(page, "a conversation with a mode notice")


@pytest.fixture
def subscription(daemon_env):
    """A subscription login: Claude Code reads the plan's usage headers only with an OAuth token."""
    daemon_env.pop("ANTHROPIC_API_KEY")
    daemon_env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-test"


def test_a_turn_stopped_on_the_usage_limit_reads_in_both_themes(subscription, page, daemon, mock):
    mock.add(usage_limit_reply(int(time.time()) + 3600))
    panel = Panel(page, daemon).open()
    panel.send("one")
    limit = panel.find(".item.limit")
    expect(limit).to_contain_text("Usage limit reached")
    for scheme in THEMES:
        in_theme(page, scheme)
        assert_readable(limit.locator(".resets, .countdown, .held, label"), f"the usage limit ({scheme})")
    check_state(page, "a turn stopped on the usage limit")


def test_the_header_keeps_its_controls_inside_at_any_width_with_the_longest_badges(subscription, page, daemon, mock,
                                                                                   shots):
    reply = text_reply("Done.")
    reply.headers.update(unified_headers("allowed_warning", int(time.time()) + 3600, 0.92))
    mock.add(reply)
    panel = Panel(page, daemon).open()
    panel.send("hi")
    badge, link = panel.find(".badge"), panel.find(".link")
    expect(badge).to_have_text("idle · 92% of the 5-hour limit used")
    # A warning looks like one, not like the green of a session that is fine.
    expect(badge).to_have_attribute("data-warning", "usage")
    for scheme in THEMES:
        in_theme(page, scheme)
        colours = badge.evaluate("""(b) => { const host = b.getRootNode().host, probe = document.createElement('i');
          const resolve = (name) => { probe.style.color = getComputedStyle(host).getPropertyValue(name);
            host.shadowRoot.append(probe); const c = getComputedStyle(probe).color; probe.remove(); return c; };
          return { bg: getComputedStyle(b).backgroundColor, warn: resolve('--warn-bg'), ok: resolve('--ok-bg') }; }""")
        assert colours["bg"] == colours["warn"] != colours["ok"], colours
        assert_readable(badge, f"the usage warning ({scheme})")
    # The thread socket cannot come back: the panel counts up its waits to the longest.
    page.route_web_socket(re.compile(r"/__devhost__/ws/thread"), lambda socket: socket.close(code=1011))
    kill_connections_to(daemon.port)
    expect(link).to_have_text(re.compile(r"reconnecting in (8|10) s"), timeout=30_000)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        box = panel.find(".panel").bounding_box()
        controls = panel.find("header.bar :is(button, select):not([hidden])")
        assert controls.count() >= 4, "reload hold, target, theme, side and close"
        for control in controls.all():
            expect(control).to_be_visible()
            inside = control.bounding_box()
            assert box["x"] <= inside["x"] and inside["x"] + inside["width"] <= box["x"] + box["width"] + 0.5, \
                (width, control.evaluate("(c) => c.outerHTML.slice(0, 80)"), inside, box)
            assert box["y"] <= inside["y"] and inside["y"] + inside["height"] <= box["y"] + box["height"]
        header = panel.find("header.bar").evaluate("(h) => ({ scroll: h.scrollWidth, client: h.clientWidth })")
        assert header["scroll"] <= header["client"], (width, header)  # nothing hangs out of the header
        if width == 1280:  # room enough: the controls wrap under the status, which is shown whole
            assert badge.evaluate("(b) => b.scrollWidth <= b.clientWidth"), badge.bounding_box()
        # Cut short where it must be, the badge keeps its whole text as its tooltip.
        expect(badge).to_have_attribute("title", "idle · 92% of the 5-hour limit used")
        expect(link).to_have_attribute("title", re.compile(r"reconnecting in (8|10) s"))
    shots(page, "23-header-narrow")
    check_state(page, "reconnecting")

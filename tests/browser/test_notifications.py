"""Notifications, on the real Claude Code: while the person looks at another tab, an approval
that waits and a turn that ends put a count in the tab's title (gone when they are back), and,
once they opted in with the bell, a system notification says what happened. The browser's
permission is asked for on that click only.

Hidden is emulated in the page (document.visibilityState and a visibilitychange event, as the
browser does when another tab comes to the front); window.Notification is wrapped by a spy that
records what the panel constructs and still builds the real one."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply, tool_use_reply

SPY = """
(() => {
  window.__visibility = "visible";
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => window.__visibility });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => window.__visibility === "hidden" });
  const Real = window.Notification;
  window.__notes = [];
  window.__asked = 0;
  class Spy extends Real {
    constructor(title, options) { super(title, options); window.__notes.push({ title, body: options?.body || "" }); }
    static get permission() { return Real.permission; }
    static requestPermission(...args) { window.__asked += 1; return Real.requestPermission(...args); }
  }
  window.Notification = Spy;
})();
"""


def set_visibility(page, state: str) -> None:
    page.evaluate("(state) => { window.__visibility = state; document.dispatchEvent(new Event('visibilitychange')); }",
                  state)


def notes(page) -> list[dict]:
    return page.evaluate("() => window.__notes")


def spied_panel(browser, page, daemon, *, granted: bool) -> Panel:
    if granted:
        browser.grant_permissions(["notifications"], origin=daemon.page("app.localhost").rstrip("/"))
    page.add_init_script(SPY)
    return Panel(page, daemon).open()


def test_an_approval_and_a_turn_end_while_hidden_badge_the_title_and_notify_after_opting_in(
        browser, page, daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch made.txt", "description": "Make it"}), text_reply("Made it."))
    panel = spied_panel(browser, page, daemon, granted=True)
    bell = panel.find("button.notify")
    expect(bell).to_have_attribute("aria-pressed", "false")
    expect(bell).to_have_accessible_name("Notify me when the agent waits or finishes")
    assert page.evaluate("() => window.__asked") == 0  # nothing asked before the person clicked
    bell.click()
    expect(bell).to_have_attribute("aria-pressed", "true")
    expect(bell).to_have_attribute("title", "Notifications are on: click to stop them")
    assert page.evaluate("() => window.__asked") == 0  # granted already: nothing to ask
    title = page.title()

    panel.send("make a file")
    set_visibility(page, "hidden")  # the person went to another tab while the agent works
    expect(page).to_have_title(f"(1) {title}")
    page.wait_for_function("() => window.__notes.length === 1")
    assert notes(page) == [{"title": "devhost chat", "body": "Approval waits: Bash"}]

    set_visibility(page, "visible")
    expect(page).to_have_title(title)
    set_visibility(page, "hidden")  # away again before the turn can end
    panel.items("tool").first.get_by_role("button", name="Allow", exact=True).click()
    expect(page).to_have_title(f"(1) {title}")
    page.wait_for_function("() => window.__notes.length === 2")
    assert notes(page)[1]["body"].startswith("The turn finished after ")
    set_visibility(page, "visible")
    expect(page).to_have_title(title)
    expect(panel.items("assistant").last).to_have_text("Made it.")


def test_without_opting_in_only_the_title_counts_and_no_permission_is_asked(browser, page, daemon, mock):
    mock.add(text_reply("First."), text_reply("Second."))
    panel = spied_panel(browser, page, daemon, granted=False)
    title = page.title()
    set_visibility(page, "hidden")
    panel.send("one")
    expect(page).to_have_title(f"(1) {title}")
    expect(panel.items("assistant").last).to_have_text("First.")
    panel.send("two")
    expect(page).to_have_title(f"(2) {title}")  # each turn that ended while away counts
    set_visibility(page, "visible")
    expect(page).to_have_title(title)
    assert notes(page) == [] and page.evaluate("() => window.__asked") == 0


def test_the_bell_asks_the_browser_for_permission_on_its_click(browser, page, daemon, mock):
    panel = spied_panel(browser, page, daemon, granted=False)
    bell = panel.find("button.notify")
    bell.click()  # headless Chromium answers an unanswered prompt itself: denied or default
    page.wait_for_function("() => window.__asked === 1")
    permission = page.evaluate("() => Notification.permission")
    if permission == "denied":
        expect(bell).to_be_disabled()
        expect(bell).to_have_attribute(
            "title", "Notifications are blocked for this site: allow them in the browser's site settings")
    else:
        expect(bell).to_have_attribute("aria-pressed", "false")  # nothing granted, nothing on


def test_a_turn_that_ran_across_a_reload_still_badges_the_title_when_it_ends(browser, page, daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch made.txt", "description": "Make it"}), text_reply("Made it."))
    panel = spied_panel(browser, page, daemon, granted=False)
    panel.send("make a file")
    expect(panel.items("tool").first.get_by_role("button", name="Allow", exact=True)).to_be_visible()
    panel.reload()  # the turn waits on the approval through the reload
    title = page.title()
    set_visibility(page, "hidden")
    panel.items("tool").first.get_by_role("button", name="Allow", exact=True).click()
    expect(page).to_have_title(f"(1) {title}")
    set_visibility(page, "visible")
    expect(page).to_have_title(title)

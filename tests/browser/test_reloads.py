"""Hot reloads on a real dev server (Vite, pinned in tests/peers.sh) behind the proxy: an edit
hot-updates the page; with reloads held it does not (also when the agent makes it mid-turn
through the real Claude Code CLI) until the person applies or releases them; the notice after a
reload mid-turn; Disable Reloads tracked until its turn ends, across a reload."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply, tool_use_reply
from tests.upstream_app import write_routed_manifest
from tests.vite_apps import vite, vite_port, write_config  # noqa: F401 - fixtures

INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vite app</title><link rel="icon" href="data:,"></head>
<body><h1 id="app">loading</h1><script type="module" src="/main.js"></script></body></html>
"""


def main_js(version: int) -> str:
    # Accepts its own update: an edit swaps the text in place (no full reload), as HMR does.
    return (f'document.getElementById("app").textContent = "version {version}";\n'
            "if (import.meta.hot) import.meta.hot.accept();\n")


@pytest.fixture
def stack(tmp_path, vite_port):
    """app.localhost proxies to the Vite dev server of project/."""
    write_routed_manifest(tmp_path, f"http://127.0.0.1:{vite_port}")
    write_config(tmp_path / "project", "plain")
    (tmp_path / "project" / "index.html").write_text(INDEX)
    (tmp_path / "project" / "main.js").write_text(main_js(1))
    return tmp_path


def edit(project, version: int) -> None:
    (project / "main.js").write_text(main_js(version))


def test_an_edit_hot_updates_the_page_through_the_proxy_and_held_reloads_wait_for_the_person(page, daemon, vite,
                                                                                             shots):
    panel = Panel(page, daemon).open()
    app = page.locator("#app")
    expect(app).to_have_text("version 1")
    edit(vite, 2)
    expect(app).to_have_text("version 2")  # Vite's HMR update, through devhostd's tunnel

    toggle = panel.find(".icon.hold")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    edit(vite, 3)
    strip = panel.find(".reloads")
    expect(strip).to_contain_text("1 update waiting")
    expect(app).to_have_text("version 2")  # held: the page did not change under the person
    shots(page, "16-reloads-held")
    strip.get_by_role("button", name="Apply 1 update").click()
    expect(app).to_have_text("version 3")
    edit(vite, 4)
    expect(strip).to_contain_text("1 update waiting")
    expect(app).to_have_text("version 3")
    # The hold is the page's own state: a reload keeps it.
    page.reload()
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    edit(vite, 5)
    expect(strip).to_contain_text("update")
    expect(app).not_to_have_text("version 5")
    strip.get_by_role("button", name="Release").click()
    expect(app).to_have_text("version 5")
    expect(toggle).to_have_attribute("aria-pressed", "false")


def test_an_edit_the_agent_makes_mid_turn_waits_until_the_person_releases_it(page, daemon, vite, mock):
    mock.add(tool_use_reply("Write", {"file_path": str(vite / "main.js"), "content": main_js(9)}),
             text_reply("I changed the version."))
    panel = Panel(page, daemon).open()
    app = page.locator("#app")
    expect(app).to_have_text("version 1")
    panel.find(".icon.hold").click()
    panel.send("bump the version")
    tool = panel.items("tool").first
    tool.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("I changed the version.")
    assert "version 9" in (vite / "main.js").read_text()
    expect(panel.find(".reloads")).to_contain_text("update")
    expect(app).to_have_text("version 1")
    panel.find(".reloads").get_by_role("button", name="Release").click()
    expect(app).to_have_text("version 9")


def test_a_reload_mid_turn_gets_a_notice_once_and_disable_reloads_is_followed_across_a_reload(page, daemon, vite, mock):
    # The second turn lasts about 3 s, so "Asked the agent…" is there to be seen while it runs
    # even on a loaded machine (one 1 s chunk could end before the panel's strip was looked at).
    mock.add(text_reply(*["working "] * 40, delay=0.1),
             text_reply("Set server.hmr ", "to false ", "in vite.config.mjs", ".", delay=0.75))
    panel = Panel(page, daemon).open()
    panel.send("a long task")
    panel.expect_status("running")
    page.reload()  # as the dev server does when a file changes
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    notice = panel.find(".reload-notice")
    expect(notice).to_contain_text("reloaded while the agent was working")
    panel.expect_status("idle")
    notice.get_by_role("button", name="Disable reloads").click()
    expect(notice).to_be_hidden()
    expect(panel.find(".reloads")).to_contain_text("Asked the agent to disable reloads")
    expect(panel.items("user").last).to_contain_text("Turn off hot module replacement")
    page.reload()  # the request is followed across a reload
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    outcome = panel.find(".reload-outcome")
    # The outcome stays until dismissed, also when the turn ended before the reload.
    expect(outcome).to_contain_text("Disable reloads: ")
    page.reload()
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    expect(outcome).to_contain_text("Disable reloads: ")
    outcome.get_by_role("button", name="Dismiss").click()
    expect(outcome).to_be_hidden()
    expect(panel.find(".reload-notice")).to_be_hidden()  # that reload was mid-turn too, but it was shown once
    assert any("Turn off hot module replacement" in str(request) for request in mock.requests)


def held_updates(page) -> int:
    """What devhostd says waits for this page's hostname (GET /__devhost__/reloads)."""
    return page.evaluate("() => fetch('/__devhost__/reloads', {cache: 'no-store'}).then((r) => r.json())")["updates"]


def test_a_page_loaded_while_reloads_are_held_counts_no_update_and_its_vite_client_connects(page, daemon, vite):
    """Reloads held, the person reloads the page: Vite's client connects (its handshake is no
    update), the strip says nothing waits; an actual edit then counts as one update."""
    panel = Panel(page, daemon).open()
    expect(page.locator("#app")).to_have_text("version 1")
    panel.find(".icon.hold").click()
    strip = panel.find(".reloads")
    expect(strip).to_contain_text("the page will not change until you apply them")
    with page.expect_console_message(lambda message: "[vite] connected." in message.text):
        page.reload()
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    expect(page.locator("#app")).to_have_text("version 1")
    expect(strip).to_contain_text("the page will not change until you apply them")
    assert held_updates(page) == 0
    edit(vite, 2)
    expect(strip).to_contain_text("Reloads held: 1 update waiting")
    assert held_updates(page) == 1
    expect(page.locator("#app")).to_have_text("version 1")
    strip.get_by_role("button", name="Apply 1 update").click()
    expect(page.locator("#app")).to_have_text("version 2")


def test_holding_reloads_after_a_mid_turn_reload_leaves_one_strip(page, daemon, vite, mock):
    """The notice after a mid-turn reload offers Hold reloads; once reloads are held (from the
    header's switch) it goes, and the hold's strip is the one strip left."""
    mock.add(text_reply(*["working "] * 40, delay=0.1))
    panel = Panel(page, daemon).open()
    panel.send("a long task")
    panel.expect_status("running")
    page.reload()
    page.wait_for_function("() => window.__devhostChat?.booted === true")
    notice = panel.find(".reload-notice")
    expect(notice).to_contain_text("reloaded while the agent was working")
    panel.find(".icon.hold").click()
    expect(notice).to_be_hidden()
    expect(panel.find(".reloads")).to_contain_text("Reloads held")
    expect(panel.find(".reload-notice:visible, .reloads:visible, .reload-outcome:visible")).to_have_count(1)
    panel.expect_status("idle")

"""A person's first minutes: the control origin's page leads to the routed pages, a folder's own
devhost.toml is found without --config, a missing CLI is said plainly and Send waits for one, one
Default model, a page without a manifest asks for no saved position, the manifest's problems show
in the panel and on the control page as the file is edited, and the target select says which
folder the agent works in."""
from __future__ import annotations

import time

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.integration.daemon import REPO, Daemon


def test_the_control_origins_page_links_every_routed_page_and_its_agents(page, daemon, stack):
    page.goto(daemon.control_origin + "/")
    expect(page.locator("h1")).to_have_text("teststack")
    expect(page.locator("body")).to_contain_text(str(stack / "devhost.toml"))
    app = page.get_by_role("link", name=daemon.page("app.localhost"))
    expect(app).to_have_count(1)
    expect(page.get_by_role("link", name="agents working there")).to_have_count(2)
    app.click()
    page.wait_for_function("() => window.__devhostChat?.booted === true")  # the page, with its panel
    page.goto(daemon.control_origin + "/")
    page.get_by_role("link", name="agents working there").first.click()
    expect(page).to_have_url(f"{daemon.control_origin}/__devhost__/agents/activity"
                             f"?pageURL=http%3A%2F%2Fapp.localhost%3A{daemon.port}%2F&chatTarget=project")


def test_a_folders_own_devhost_toml_is_used_without_config(page, stack, daemon_env):
    running = Daemon(daemon_env, cwd=stack, config=None, state_dir=stack / "state")
    try:
        Panel(page, running).load()  # app.localhost is routed: it came from ./devhost.toml
        assert f"manifest: {stack / 'devhost.toml'}" in running.log()
    finally:
        assert running.stop() == 0


def test_without_a_cli_send_waits_and_the_reason_is_readable(page, daemon, stack):
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text()
                        + '[devtools.chat.claude-code]\ncommand = "/nonexistent/claude-cli"\n'
                        + '[devtools.chat.codex]\ncommand = "/nonexistent/codex-cli"\n')
    panel = Panel(page, daemon).load()
    if panel.find(".launcher").is_visible():
        panel.find(".launcher").click()
    expect(panel.find("select.harness option[value=claude-code]")).to_have_text("Claude Code (unavailable)")
    expect(panel.find(".send")).to_be_disabled()
    title = panel.find(".send").get_attribute("title")
    assert title.startswith("Claude Code is not available: ") and "/nonexistent/claude-cli" in title, title
    expect(panel.find(".note")).to_contain_text("/nonexistent/claude-cli")
    panel.find("textarea").fill("hello?")
    panel.find("textarea").press("Enter")
    expect(panel.find("textarea")).to_have_value("hello?")  # not sent: it stays for when a CLI is there


def test_the_model_picker_has_one_default_entry(page, daemon):
    panel = Panel(page, daemon).open()
    options = panel.find("select.model option")
    expect(options.first).to_have_attribute("value", "")
    labels = options.all_text_contents()
    assert sum("default" in label.lower() for label in labels) == 1, labels
    assert "default" not in [panel.find("select.model option").nth(i).get_attribute("value")
                             for i in range(options.count())]


def test_a_page_without_a_manifest_asks_for_no_saved_position(page, tmp_path, daemon_env):
    folder = tmp_path / "bare"
    folder.mkdir()
    running = Daemon(daemon_env, cwd=folder, config=None, state_dir=tmp_path / "bare-state")
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/__devhost__/chat/panel" in request.url else None)
    try:
        panel = Panel(page, running, hostname="localhost").load()
        expect(panel.find(".launcher")).to_be_visible()
        panel.find(".launcher").click()
        expect(panel.find(".panel")).to_be_visible()
        assert asked == []
    finally:
        assert running.stop() == 0


def test_a_phone_sized_viewport_gets_the_panel_as_a_sheet_across_the_bottom(page, daemon, shots):
    page.set_viewport_size({"width": 390, "height": 844})
    panel = Panel(page, daemon).open()
    box = panel.find(".panel").bounding_box()
    assert (box["x"], box["width"]) == (0, 390) and abs(box["y"] + box["height"] - 844) < 1, box
    assert box["height"] < 844  # the page still shows above it
    shots(page, "12-narrow")


def test_the_session_list_names_conversations_by_their_first_message_newest_first(page, daemon, mock):
    from tests.mock_anthropic import text_reply
    mock.add(text_reply("One."), text_reply("Two."))
    panel = Panel(page, daemon).open()
    panel.send("Why is the header blue?\nIt should be red.")
    expect(panel.items("assistant").last).to_have_text("One.")
    panel.find("button.new").click()
    panel.send("Add a footer")
    expect(panel.items("assistant").last).to_have_text("Two.")
    labels = panel.find("select.session option").all_text_contents()
    assert labels[0] == "New conversation"
    assert labels[1].startswith("Add a footer · Claude Code · ") and labels[2].startswith(
        "Why is the header blue? · Claude Code · "), labels


def test_a_manifest_edited_live_shows_its_problems_in_the_panel_and_on_the_control_page(page, browser, daemon,
                                                                                        stack, shots):
    """A misspelled key shows as a warning naming the key meant; a broken edit as an error saying what
    to write, while the page goes on working; fixing the file clears both, without a reload."""
    manifest = stack / "devhost.toml"
    good = manifest.read_text()
    panel = Panel(page, daemon).open()
    notice = panel.find(".manifest-notice")
    expect(notice).to_be_hidden()
    manifest.write_text(good.replace('root = "project"\n', 'root = "project"\nupstrem = "http://127.0.0.1:9"\n', 1))
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Warning: ")
    expect(notice).to_contain_text("[services.app]: unknown key `upstrem` is ignored: did you mean `upstream`?")
    manifest.write_text(good.replace('host = "other.localhost"', 'host = "pantry"'))
    error = notice.locator("li[data-level=error]")
    expect(error).to_contain_text('host pantry resolves to no address on this machine; '
                                  'write "pantry.localhost" instead')
    expect(notice.locator("li")).to_have_count(1)  # the warning spoke of the file before this edit
    expect(notice).to_have_attribute("role", "alert")
    shots(page, "24-manifest-notice")
    control = browser.new_page()
    control.goto(daemon.control_origin + "/")
    problems = control.get_by_role("alert", name="Manifest problems")
    expect(problems).to_contain_text('Error: ' + str(manifest))
    expect(problems).to_contain_text('write "pantry.localhost" instead')
    expect(control.get_by_role("link", name=daemon.page("other.localhost"))).to_have_count(1)  # the last good one
    panel.find("textarea").fill("still here")  # the panel goes on working meanwhile
    expect(panel.find(".send")).to_be_enabled()
    manifest.write_text(good)
    expect(notice).to_be_hidden()
    control.reload()
    expect(control.get_by_role("alert", name="Manifest problems")).to_have_count(0)
    control.close()


def test_the_target_select_says_which_folder_each_target_works_in(page, daemon, stack):
    """Running devhostd from a clone, `project` and `devhost` are two checkouts: the line under the
    header names the folder the agent works in, and each option's tooltip says which."""
    panel = Panel(page, daemon).open()
    select, line = panel.find("select.target"), panel.find(".target-line")
    project = f"Works in {stack / 'project'}: this page's checkout (target \"project\")."
    expect(line).to_have_text(project)
    expect(select).to_have_accessible_description(project)
    expect(select).to_have_attribute("title", f"Whose checkout the agent works in. {project}")
    expect(select.locator("option[value=project]")).to_have_attribute("title", project)
    devhost = f"Works in {REPO}: devhostd's own source, not this page (target \"devhost\")."
    expect(select.locator("option[value=devhost]")).to_have_attribute("title", devhost)
    select.select_option("devhost")
    expect(line).to_have_text(devhost)
    expect(panel.find(".empty")).to_contain_text(f"It works in {REPO}")


def test_the_manifest_is_asked_again_often_only_while_the_panel_is_open(page, daemon):
    """The asks show in the developer's own Network tab: with the panel closed, at most one a half-minute."""
    asked = []
    page.on("request", lambda request: asked.append(time.monotonic()) if "config.json" in request.url else None)
    panel = Panel(page, daemon).open()
    page.wait_for_timeout(4500)
    assert len(asked) >= 3, asked  # the first load's, then one every 2 s
    panel.find("button[aria-label='Close the chat']").click()
    closed_at = time.monotonic()
    page.wait_for_timeout(5000)
    assert not [t for t in asked if t > closed_at + 0.5], "asked while closed"
    panel.find(".launcher").click()
    expect(panel.find(".panel")).to_be_visible()
    page.wait_for_timeout(500)
    assert [t for t in asked if t > closed_at + 5], "not asked on opening"

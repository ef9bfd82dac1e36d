"""The chat panel in Chromium, on the person's own (proxied) page, with the real Claude Code CLI."""
from __future__ import annotations

import base64
import json
import re

from playwright.sync_api import expect

from tests.browser.panel import Panel, images_sent, kill_connections_to, png, png_size
from tests.integration.daemon import wait_until
from tests.mock_anthropic import message_text, text_reply, tool_use_reply

LAYOUT = """() => {
  const box = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; };
  return { title: box('#title'), box: box('#box'), status: box('#ws-status'),
           font: getComputedStyle(document.querySelector('#box')).fontFamily,
           body: [document.body.scrollWidth, document.body.scrollHeight, document.body.children.length],
           scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight] };
}"""  # noqa: E501 - the page's script


def test_the_panel_sits_on_the_proxied_page_without_moving_it_and_the_apps_socket_works(page, daemon, upstream, shots):
    page.goto(upstream.url + "/")  # the app itself, not through devhostd
    expect(page.locator("#ws-status")).to_have_text("ws: open")  # measured once its text settled
    alone = page.evaluate(LAYOUT)
    panel = Panel(page, daemon).load()
    expect(page.locator("#ws-status")).to_have_text("ws: open")  # the app's hot-reload socket, tunnelled
    expect(page.locator("#ws-echo")).to_have_text("hello pong:1 ")
    assert page.evaluate(LAYOUT) == alone
    shots(page, "01-page-with-launcher")
    panel.open()
    assert page.evaluate(LAYOUT) == alone
    # The page's `div { font-family: serif !important; color: red }` does not reach the panel.
    style = page.evaluate("""() => { const s = getComputedStyle(document.querySelector('devhost-chat')
                             .shadowRoot.querySelector('.panel .title')); return [s.fontFamily, s.color]; }""")
    assert "system-ui" in style[0] and style[1] != "rgb(255, 0, 0)"
    expect(panel.find(".badge")).to_have_text("no session")
    shots(page, "02-panel-open")
    # A hostname without an app gets a plain page with the same panel.
    other = Panel(page, daemon, "other.localhost").open()
    expect(page.locator("h1")).to_contain_text("other.localhost")
    expect(other.find(".panel")).to_be_visible()


def test_a_page_with_a_base_href_elsewhere_still_gets_the_panel_and_its_stylesheet(page, daemon):
    panel = Panel(page, daemon)
    injected = []

    def with_base(route):
        # Node, unlike Chromium, does not resolve *.localhost: the daemon by address, the Host kept.
        response = route.fetch(url=f"http://127.0.0.1:{daemon.port}/",
                               headers={**route.request.headers, "host": f"app.localhost:{daemon.port}"})
        html = response.text()
        injected.append("</head>" in html)
        route.fulfill(response=response,
                      body=html.replace("</head>", '<base href="http://elsewhere.invalid/x/"></head>', 1))

    page.route(panel.url.rstrip("/") + "/", with_base)
    panel.open()
    assert injected == [True]
    assert page.evaluate("document.baseURI") == "http://elsewhere.invalid/x/"
    font = page.evaluate("""() => getComputedStyle(document.querySelector('devhost-chat')
                            .shadowRoot.querySelector('.panel .title')).fontFamily""")
    assert "system-ui" in font  # the stylesheet came from devhostd, not from elsewhere.invalid
    # (open() saw the harnesses: the API calls went to devhostd too.) A conversation is not tried
    # here: under Playwright's routing of the page the chat socket does not open, <base> or not.


def test_a_conversation_streams_in_with_the_delivery_state_of_the_message(page, daemon, mock, shots):
    words = [f"word{n} " for n in range(30)]
    mock.add(text_reply(*words, delay=0.1), text_reply("Second answer."))
    panel = Panel(page, daemon).open()
    panel.send("hello there")
    expect(panel.items("user")).to_contain_text("hello there")
    streaming = panel.find(".item.assistant.streaming")
    expect(streaming).to_contain_text("word3")  # part of the reply is on screen before the rest
    panel.expect_status("running")
    expect(panel.find(".stop")).to_be_visible()
    expect(panel.items("assistant")).to_have_text("".join(words).rstrip())
    panel.expect_status("idle")
    expect(panel.find(".stop")).to_be_hidden()
    expect(panel.find(".delivery")).to_have_text("started")
    assert "hello there" in message_text(mock.requests[0])
    panel.send("and again")
    expect(panel.items("assistant").nth(1)).to_have_text("Second answer.")
    assert panel.texts()[0].split("|", 1)[1].startswith("hello there")  # devhost's appended prompt is not shown
    assert "Instructions from devhost" not in " ".join(panel.texts())
    shots(page, "03-conversation")


def test_an_approval_clicked_allow_and_another_clicked_deny(page, daemon, mock, stack, shots):
    mock.add(tool_use_reply("Bash", {"command": "touch allowed.txt", "description": "Create allowed.txt"}),
             text_reply("Made it."),
             tool_use_reply("Bash", {"command": "touch denied.txt", "description": "Create denied.txt"}),
             text_reply("Understood, I did not."))
    panel = Panel(page, daemon).open()
    panel.send("make the first file")
    panel.expect_status("requires_action")
    # The approval asks inside the tool call it is for: one card, not a second one below it.
    tool = panel.items("tool").first
    expect(tool).to_contain_text("touch allowed.txt")
    expect(tool).to_have_attribute("data-status", "asking")
    expect(panel.items("approval")).to_have_count(0)
    shots(page, "04-approval")
    page.reload()  # a reloaded page learns from the snapshot that the request still waits
    expect(tool.get_by_role("button", name="Allow", exact=True)).to_be_enabled()
    tool.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("Made it.")
    expect(tool).to_contain_text("You allowed.")
    expect(tool).to_have_attribute("data-status", "done")
    assert (stack / "project" / "allowed.txt").exists()

    panel.send("now the second")
    second = panel.items("tool").nth(1)
    expect(second.get_by_role("button", name="Deny")).to_be_visible()
    second.get_by_role("button", name="Deny").click()
    expect(panel.items("assistant").last).to_have_text("Understood, I did not.")
    expect(second).to_have_attribute("data-status", "error")
    panel.expect_status("idle")
    assert not (stack / "project" / "denied.txt").exists()
    assert "denied this in the devhost panel" in message_text(mock.requests[3])
    # After a reload the page still says what the person answered: the decision is an item's.
    panel.reload()
    expect(panel.items("tool").nth(0)).to_contain_text("You allowed.")
    expect(panel.items("tool").nth(1)).to_contain_text("You denied.")


def test_an_answer_lost_with_a_dead_socket_or_refused_by_devhost_opens_the_request_again(page, daemon, mock):
    mock.add(tool_use_reply("Bash", {"command": "touch late.txt", "description": "Create late.txt"}),
             text_reply("Made it late."))
    panel = Panel(page, daemon).open()
    panel.send("make the file")
    panel.expect_status("requires_action")
    tool = panel.items("tool")
    allow = tool.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_enabled()
    # devhostd refuses the answer (here: a decision it does not know): the buttons come back.
    page.evaluate("""() => { const socket = window.__devhostChat.connection.socket;
                     const send = socket.send.bind(socket);
                     socket.send = (data) => { const f = JSON.parse(data);
                       if (f.type === 'approve') f.decision = 'perhaps'; send(JSON.stringify(f)); }; }""")
    allow.click()
    expect(panel.find(".hint")).to_contain_text("The answer was not taken")
    expect(allow).to_be_enabled()
    expect(tool).not_to_contain_text("You allowed.")
    # The socket is silently dead: send() returns, the answer never arrives. After the
    # reconnect the request still waits, so it is open again, not "You allowed.".
    page.evaluate("() => { window.__devhostChat.connection.socket.send = () => {}; }")
    allow.click()
    expect(tool).to_contain_text("You allowed.")
    kill_connections_to(daemon.port)
    expect(panel.find(".link")).to_have_attribute("data-state", "open")
    expect(allow).to_be_enabled()
    expect(tool).not_to_contain_text("You allowed.")
    allow.click()
    expect(panel.items("assistant").last).to_have_text("Made it late.")
    expect(tool).to_contain_text("You allowed.")
    panel.expect_status("idle")


def test_interrupt_stops_the_turn(page, daemon, mock, shots):
    mock.add(text_reply(*["slow "] * 80, delay=0.2))
    panel = Panel(page, daemon).open()
    panel.send("tell me a long story")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("slow")
    panel.find(".stop").click()
    expect(panel.items("notice")).to_contain_text("Interrupted.")
    panel.expect_status("idle")
    expect(panel.find(".stop")).to_be_hidden()
    expect(panel.find(".item.assistant.streaming")).to_have_count(0)
    # The message was taken up: it stays "started"; it is the reply that was cut off.
    expect(panel.items("user").locator(".delivery")).to_have_text("started")
    expect(panel.items("notice").last).to_have_text("Interrupted.")  # after the reply it cut off
    assert len(mock.requests) == 1


def test_a_pasted_image_is_sent_with_the_message(page, browser, daemon, mock, shots):
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    mock.add(text_reply("A red rectangle."))
    panel = Panel(page, daemon).open()
    image = base64.b64encode(png(37, 23)).decode()
    page.evaluate("""async (data) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        await navigator.clipboard.write([new ClipboardItem({"image/png": new Blob([bytes], {type: "image/png"})})]);
    }""", image)
    panel.find("textarea").click()
    page.keyboard.press("Control+V")
    expect(panel.find(".tray .thumb")).to_have_count(1)
    panel.find("textarea").fill("what is in this image?")
    shots(page, "05-pasted-image")
    panel.find(".send").click()
    expect(panel.items("assistant")).to_have_text("A red rectangle.")
    expect(panel.find(".tray .thumb")).to_have_count(0)
    expect(panel.items("user").locator("img")).to_have_count(1)  # the bubble shows what was sent
    [sent] = images_sent(mock.requests[0])
    assert png_size(sent) == (37, 23)
    assert "what is in this image?" in message_text(mock.requests[0])


def test_dropped_images_are_attached_and_a_send_over_8_mib_is_refused_in_the_page(page, daemon, mock):
    panel = Panel(page, daemon).open()
    page.evaluate("""(data) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const drop = new DataTransfer();
        drop.items.add(new File([bytes], "dropped.png", {type: "image/png"}));
        drop.items.add(new File(["GIF89a"], "moving.gif", {type: "image/gif"}));
        const log = document.querySelector("devhost-chat").shadowRoot.querySelector(".log");
        log.dispatchEvent(new DragEvent("drop", {dataTransfer: drop, bubbles: true, composed: true}));
    }""", base64.b64encode(png(8, 8)).decode())
    expect(panel.find(".tray .thumb")).to_have_count(1)
    expect(panel.find(".hint")).to_contain_text("moving.gif is not a PNG or JPEG")
    # A 9 MiB image: the page refuses the send and keeps the draft and the attachments.
    page.evaluate("""() => window.__devhostChat.composer.add(
        {dataURL: "data:image/png;base64,iVBORw0KGgo" + "A".repeat(9 * 1024 * 1024)})""")
    panel.send("too big")
    expect(panel.find(".hint")).to_contain_text("a send must fit in 8 MiB")
    expect(panel.find("textarea")).to_have_value("too big")
    expect(panel.find(".tray .thumb")).to_have_count(2)
    assert panel.items("user").count() == 0 and mock.requests == []
    assert daemon.sessions() == []  # nothing was started for a send that could not go


def test_a_screenshot_area_is_sent_with_its_position_and_cancel_keeps_the_draft(page, daemon, mock, shots):
    mock.add(text_reply("That is the blue box."))
    panel = Panel(page, daemon).open()
    panel.find("textarea").fill("what is this box?")
    # Cancelling the preview keeps the draft and adds nothing.
    panel.find(".shot").click()
    expect(panel.find(".hint")).to_have_text("")
    expect(panel.find(".preview")).to_be_visible()
    panel.find(".preview").get_by_role("button", name="Cancel").click()
    expect(panel.find(".preview")).to_have_count(0)
    expect(panel.find("textarea")).to_have_value("what is this box?")
    expect(panel.find(".tray .thumb")).to_have_count(0)

    panel.find(".shot").click()
    shot = panel.find(".stage img")
    expect(shot).to_be_visible()
    frame = shot.bounding_box()
    k = frame["width"] / 1280  # the preview is scaled to fit; the page is 1280 CSS px wide
    page.mouse.move(frame["x"] + 40 * k, frame["y"] + 60 * k)
    page.mouse.down()
    page.mouse.move(frame["x"] + 200 * k, frame["y"] + 120 * k, steps=5)
    page.mouse.move(frame["x"] + 340 * k, frame["y"] + 180 * k, steps=5)
    page.mouse.up()
    shots(page, "06-screenshot-area")
    panel.find(".preview").get_by_role("button", name="Attach area").click()
    expect(panel.find(".tray .thumb")).to_have_count(1)
    expect(panel.find("textarea")).to_have_value("what is this box?")
    panel.find(".send").click()
    expect(panel.items("assistant")).to_have_text("That is the blue box.")
    # The page context goes to the agent, and shows in the bubble as a chip, not as text.
    bubble = panel.items("user").locator(".bubble")
    expect(bubble).not_to_contain_text("[Page context]")
    expect(bubble.locator("details.context > summary")).to_have_text("page context")
    [sent] = images_sent(mock.requests[0])
    text = message_text(mock.requests[0])
    area = re.search(r"x=(\d+), y=(\d+), (\d+)×(\d+) of the full 1280×800 screenshot", text)
    assert area, text
    x, y, width, height = map(int, area.groups())
    assert abs(x - 40) <= 2 and abs(y - 60) <= 2 and abs(width - 300) <= 3 and abs(height - 120) <= 3
    assert png_size(sent) == (width, height)  # only the crop was sent, at the page's pixel ratio 1


def test_a_reload_mid_turn_restores_the_conversation_and_the_unsent_draft(page, daemon, mock):
    words = [f"w{n} " for n in range(40)]
    mock.add(text_reply(*words, delay=0.15))
    panel = Panel(page, daemon).open()
    panel.send("first question")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("w2")
    panel.find("textarea").fill("my unsent draft")
    page.reload()
    expect(panel.find(".panel")).to_be_visible()  # it was open: it opens again
    expect(panel.find("textarea")).to_have_value("my unsent draft")
    expect(panel.items("user")).to_have_text(re.compile("^first question"))
    expect(panel.items("assistant")).to_have_text("".join(words).rstrip())  # once, complete
    panel.expect_status("idle")
    assert len(panel.texts()) == 2, panel.texts()


def test_a_dropped_socket_reconnects_and_resyncs_without_duplicates(page, daemon, mock, shots):
    slow = [f"s{n} " for n in range(30)]
    mock.add(text_reply("First answer."), text_reply(*slow, delay=0.15))
    panel = Panel(page, daemon).open()
    panel.send("one")
    expect(panel.items("assistant")).to_have_text("First answer.")
    before = panel.texts()
    kill_connections_to(daemon.port)
    expect(panel.find(".link[data-state=retrying]")).to_have_text(re.compile("reconnecting in 1 s"))
    shots(page, "07-reconnecting")
    expect(panel.find(".link")).to_have_attribute("data-state", "open")
    assert panel.texts() == before
    # Dropped again in the middle of a streaming reply: nothing lost, nothing twice.
    panel.send("two")
    expect(panel.find(".item.assistant.streaming")).to_contain_text("s2")
    kill_connections_to(daemon.port)
    expect(panel.items("assistant").nth(1)).to_have_text("".join(slow).rstrip())
    panel.expect_status("idle")
    texts = panel.texts()
    assert texts[:len(before)] == before and len(texts) == len(before) + 2, texts


def test_a_send_lost_with_a_dead_socket_survives_the_reconnect_and_a_reload(page, daemon, mock):
    panel = Panel(page, daemon).open()
    panel.send("hello")  # no model reply is scripted: the turn just ends in an error
    expect(panel.find(".delivery")).to_have_text(re.compile("started|failed"))
    panel.expect_status(re.compile("idle|error"))
    # The socket is silently dead: send() returns, the message never arrives.
    page.evaluate("() => { window.__devhostChat.connection.socket.send = () => {}; }")
    panel.send("lost on the way")
    expect(panel.items("user").last).to_contain_text("lost on the way")
    kill_connections_to(daemon.port)
    expect(panel.find(".link")).to_have_attribute("data-state", "open")
    expect(panel.items("user").last.locator(".delivery")).to_have_text("unconfirmed")
    page.reload()  # the text was never taken: it comes back to be sent again
    expect(panel.find("textarea")).to_have_value("lost on the way")
    expect(panel.items("user")).to_have_count(1)


def test_text_typed_and_images_added_while_a_send_starts_its_session_stay_in_the_composer(page, daemon, mock):
    mock.add(text_reply("Got the first."))
    panel = Panel(page, daemon).open()
    # Session creation takes a while: the person keeps writing meanwhile.
    page.evaluate("""() => { const fetch0 = window.fetch; window.fetch = async (url, options) => {
                       if (options?.method === 'POST' && String(url).endsWith('/chat/sessions'))
                         await new Promise((r) => setTimeout(r, 1500));
                       return fetch0(url, options); }; }""")
    panel.send("first part")
    panel.find("textarea").fill("first part\nsecond thought")
    page.evaluate("""() => window.__devhostChat.composer.add({ dataURL: 'data:image/png;base64,%s' })"""
                  % base64.b64encode(png(4, 4)).decode())
    expect(panel.items("user")).to_contain_text("first part")
    expect(panel.items("assistant")).to_have_text("Got the first.")
    expect(panel.find("textarea")).to_have_value("second thought")
    expect(panel.find(".tray .thumb")).to_have_count(1)
    assert "second thought" not in message_text(mock.requests[0])
    assert not images_sent(mock.requests[0])
    page.reload()
    expect(panel.find("textarea")).to_have_value("second thought")  # the stored draft too


def test_the_panel_position_is_saved_by_the_daemon_and_restored(page, daemon, shots):
    panel = Panel(page, daemon).open()
    header = panel.find("header.bar").bounding_box()
    page.mouse.move(header["x"] + 40, header["y"] + header["height"] / 2)
    page.mouse.down()
    page.mouse.move(300, 250, steps=8)
    page.mouse.move(200, 150, steps=8)
    page.mouse.up()
    moved = panel.find(".panel").bounding_box()
    assert moved["x"] < header["x"] - 100
    # The panel saves it as the drag ends; its PUT may still be on its way.
    wanted = {"left": round(moved["x"]), "top": round(moved["y"])}
    wait_until(lambda: daemon.request("GET", "/__devhost__/chat/panel")[1]["position"] == wanted,
               what="the position saved by the daemon")
    status, saved = daemon.request("GET", "/__devhost__/chat/panel")
    assert status == 200 and saved["position"] == wanted
    page.reload()
    expect(panel.find(".panel")).to_be_visible()
    expect(panel.find(".panel")).to_have_attribute("data-placed", "yes")
    restored = panel.find(".panel").bounding_box()
    assert (round(restored["x"]), round(restored["y"])) == (saved["position"]["left"], saved["position"]["top"])
    shots(page, "08-moved")
    # Browser storage is per hostname; the position is the stack's: another hostname has it too.
    other = Panel(page, daemon, "other.localhost").open()
    there = other.find(".panel").bounding_box()
    assert (round(there["x"]), round(there["y"])) == (saved["position"]["left"], saved["position"]["top"])


def test_saved_state_reattaches_its_session_also_closed_and_forgets_a_model_no_longer_offered(page, daemon, mock):
    live = daemon.create_session()
    closed = daemon.create_session()
    assert daemon.close_session(closed["id"])[0] == 200
    panel = Panel(page, daemon).open()
    key = f"devhost:settings:{live['projectRootPath']}:http://app.localhost:{daemon.port}"
    assert page.evaluate("(key) => localStorage.getItem(key) !== null", key)

    def save(session_id, model):
        state = json.loads(page.evaluate("(key) => localStorage.getItem(key)", key))
        state["conversations"]["project"].update(sessionId=session_id, model=model)
        page.evaluate("([key, value]) => localStorage.setItem(key, value)", [key, json.dumps(state)])

    save(live["id"], "claude-sonnet-5-5")
    page.reload()
    panel.wait_for_harnesses()
    expect(panel.find("select.session")).to_have_value(live["id"])
    expect(panel.find(".badge")).not_to_have_attribute("data-status", "none")

    # A closed one comes back as it was, closed (a message would resume it: test_no_silent_fork.py).
    save(closed["id"], "a-model-nobody-offers")
    page.reload()
    panel.wait_for_harnesses()
    expect(panel.find("select.session")).to_have_value(closed["id"])
    expect(panel.find(".badge")).to_have_attribute("data-status", "closed")
    expect(panel.find("select.model")).to_have_value("")
    stored = json.loads(page.evaluate("(key) => localStorage.getItem(key)", key))["conversations"]["project"]
    assert stored["sessionId"] == closed["id"] and stored["model"] == ""
    # One devhostd no longer has is forgotten.
    save("a-session-that-is-gone", "")
    page.reload()
    panel.wait_for_harnesses()
    expect(panel.find("select.session")).to_have_value("")
    expect(panel.find(".badge")).to_have_attribute("data-status", "none")
    stored = json.loads(page.evaluate("(key) => localStorage.getItem(key)", key))["conversations"]["project"]
    assert stored["sessionId"] is None
    # Garbage resets to defaults instead of breaking the panel.
    page.evaluate("(key) => localStorage.setItem(key, '{not json')", key)
    page.reload()
    panel.wait_for_harnesses()
    expect(panel.find(".launcher")).to_be_visible()  # the default: closed


def test_thousands_of_events_render_the_tail_and_page_older_items_in(page, daemon):
    panel = Panel(page, daemon).open()
    page.evaluate("""() => {
        const panel = window.__devhostChat;
        panel.session = {id: "synthetic", harness: "claude-code", status: "idle", projectRootPath: ""};
        const items = [];
        for (let n = 0; n < 2500; n++) {
            items.push({id: `t${n}`, kind: "turn", turnId: `t${n}`, state: "done"});
            items.push({id: `user-u${n}`, kind: "user", turnId: `t${n}`, text: `question ${n}`});
            items.push({id: `a${n}`, kind: "assistant", turnId: `t${n}`, text: `answer ${n}`, streaming: false});
        }
        panel._onFrame({type: "snapshot", session: panel.session, seq: items.length, info: null, items});
    }""")
    expect(panel.items("assistant").last).to_have_text("answer 2499")
    rendered = panel.items().count()
    assert rendered <= 120, rendered  # the tail only, not 5000 nodes
    first = panel.items().first.get_attribute("data-key")
    panel.find(".log").evaluate("(log) => { log.scrollTop = 0; log.dispatchEvent(new Event('scroll')); }")
    expect(panel.items()).not_to_have_count(rendered)
    assert panel.items().count() > rendered
    # What was at the top is still on screen: older items went in above it, the view did not jump.
    log = panel.find(".log").bounding_box()
    kept = panel.find(f'.items > .item[data-key="{first}"]').bounding_box()
    assert log["y"] <= kept["y"] < log["y"] + log["height"], (log, kept)


def test_an_unavailable_harness_is_shown_with_its_reason(page, daemon, stack):
    manifest = stack / "devhost.toml"
    manifest.write_text(manifest.read_text() + '[devtools.chat.codex]\ncommand = "/nonexistent/codex-cli"\n')
    panel = Panel(page, daemon).open()
    codex = panel.find("select.harness option[value=codex]")
    expect(codex).to_be_disabled()
    expect(codex).to_have_text("Codex (unavailable)")
    expect(panel.find(".note")).to_contain_text("Codex is unavailable")
    expect(panel.find(".note")).to_contain_text("/nonexistent/codex-cli")
    expect(panel.find("select.harness")).to_have_value("claude-code")


def test_the_side_toggle_docks_the_panel_on_the_other_side_and_forgets_the_dragged_position(page, daemon):
    panel = Panel(page, daemon).open()
    assert panel.find(".panel").bounding_box()["x"] > 640  # docked right by default
    panel.find(".side").click()
    expect(panel.find(".panel")).to_have_attribute("data-placed", "no")
    assert panel.find(".panel").bounding_box()["x"] < 40
    status, saved = daemon.request("GET", "/__devhost__/chat/panel")
    assert saved == {"position": None}
    page.reload()
    expect(panel.find(".panel")).to_be_visible()
    assert panel.find(".panel").bounding_box()["x"] < 40  # the side is kept in the browser
    panel.find(".panel .bar .icon[aria-label='Close the chat']").click()
    expect(panel.find(".launcher")).to_be_visible()
    assert panel.find(".launcher").bounding_box()["x"] < 40


def test_each_target_keeps_its_own_conversation(page, daemon, mock):
    mock.add(text_reply("Project answer."))
    panel = Panel(page, daemon).open()
    panel.send("about the project")
    expect(panel.items("assistant")).to_have_text("Project answer.")
    project_session = panel.find("select.session").input_value()
    panel.find("select.target").select_option("devhost")  # this test's daemon runs from its git checkout
    panel.wait_for_harnesses()
    expect(panel.find("select.session")).to_have_value("")
    expect(panel.items()).to_have_count(0)
    panel.find("textarea").fill("a draft for devhost itself")
    panel.find("select.target").select_option("project")
    expect(panel.find("select.session")).to_have_value(project_session)
    expect(panel.items("assistant")).to_have_text("Project answer.")
    expect(panel.find("textarea")).to_have_value("")
    panel.find("select.target").select_option("devhost")
    expect(panel.find("textarea")).to_have_value("a draft for devhost itself")

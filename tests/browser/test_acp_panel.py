"""The chat panel in Chromium with an ACP agent behind it: real OpenCode (``opencode acp``, pinned
in tests/peers.sh) named by the manifest (``[devtools.chat.opencode] protocol = "acp"``), against
the Responses mock (tests/acp_peers.py). The panel knows it only from devhostd's list: its id and
label are the manifest's."""
from __future__ import annotations

import json
import uuid

import pytest
from playwright.sync_api import expect

from tests.acp_peers import OPENCODE, TITLE_MARKER, opencode_env, require_opencode
from tests.browser.a11y import assert_no_serious_axe_violation
from tests.browser.panel import Panel
from tests.mock_openai import Reply, message_text, text_reply
from tests.tiers import needs
from tests.upstream_app import write_routed_manifest


def tool_reply(name: str, **arguments) -> Reply:
    """A ``function_call`` of one of OpenCode's own tools (bash, apply_patch, ...)."""
    return Reply([{"type": "function_call", "name": name, "call_id": f"call_mock_{uuid.uuid4().hex[:24]}",
                   "arguments": json.dumps(arguments)}])


@pytest.fixture(name="stack")
def acp_stack(tmp_path, upstream):
    """The routed stack, its manifest naming OpenCode as an ACP agent beside the two CLIs."""
    manifest = write_routed_manifest(tmp_path, upstream.url)
    manifest.write_text(manifest.read_text() + "[devtools.chat.opencode]\nprotocol = \"acp\"\n"
                        f"command = [{json.dumps(str(OPENCODE))}, \"acp\"]\nlabel = \"OpenCode\"\n")
    return tmp_path


@pytest.fixture
@needs("peers")
def daemon_env(daemon_env, tmp_path, openai):
    """The CLIs' environment, and OpenCode's in the same HOME: the mock as its one provider, and
    its own rule that bash asks (session/request_permission), so the panel gets an approval."""
    require_opencode()
    # OpenCode asks the model for a session title beside each first turn: never the turn's reply.
    openai.route(TITLE_MARKER, *[text_reply("A title")] * 20)
    return {**daemon_env, **opencode_env(tmp_path / "home", openai.url, permission={"bash": "ask"})}


def test_an_opencode_conversation_streams_asks_and_says_a_message_waits_for_the_turn(page, daemon, openai, stack,
                                                                                   shots):
    panel = Panel(page, daemon).open()
    expect(panel.find("select.harness option[value=opencode]")).to_have_text("OpenCode")
    panel.pick_harness("opencode")
    expect(panel.find(".empty")).to_contain_text("Ask OpenCode about this page")
    expect(panel.find("textarea")).to_have_attribute("placeholder",
                                                     "Message OpenCode (Enter sends, Shift+Enter for a new line)")

    openai.add(text_reply("Hello ", "from ", "OpenCode."))
    panel.send("say hello")
    expect(panel.items("assistant")).to_have_text("Hello from OpenCode.")
    panel.expect_status("idle")
    expect(panel.find(".delivery")).to_have_text("started")
    expect(panel.find("select.harness")).to_be_disabled()  # the conversation keeps its agent
    expect(panel.find("select.session option:checked")).to_contain_text("OpenCode")
    assert "say hello" in message_text([r for r in openai.requests if TITLE_MARKER not in str(r)][-1])

    openai.add(tool_reply("bash", command="echo hi-from-bash > ran.txt", description="Write a greeting"),
               text_reply("The command ran."), text_reply("And the next one."))
    panel.send("run echo")
    panel.expect_status("requires_action")
    tool = panel.items("tool").first  # OpenCode's permission request asks inside its own tool call
    expect(tool).to_have_attribute("data-status", "asking")
    expect(tool).to_contain_text("echo hi-from-bash")
    # OpenCode offers once / always / reject: the usual three, allow for the session among them.
    expect(tool.locator(".buttons button")).to_have_text(["Allow", "Allow for session", "Deny"])

    # ACP takes one prompt at a time: a message now waits for the turn's end, and the panel says so.
    panel.send("and then this")
    expect(panel.find(".item.user .delivery").last).to_have_text("queued: OpenCode takes it when this turn ends")
    shots(page, "acp-opencode-approval")
    assert_no_serious_axe_violation(page, "an OpenCode approval open, a message queued")

    tool.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.items("assistant").last).to_have_text("And the next one.")
    expect(panel.items("assistant").nth(1)).to_have_text("The command ran.")
    expect(panel.items("tool").first).to_have_attribute("data-status", "done")
    expect(panel.items("tool").first).to_contain_text("You allowed.")
    panel.expect_status("idle")
    assert (stack / "project" / "ran.txt").read_text().strip() == "hi-from-bash"
    assert "and then this" in message_text(openai.requests[-1])
    expect(panel.find(".item.user .delivery").last).to_have_text("started")


# ---- items an ACP projection makes that OpenCode's run above does not (actors/harness/acp/projection.py) ----

SHOW = """([session, items]) => {
    const panel = window.__devhostChat;
    panel.attach(session);
    panel.connection.stop();
    panel.connection = { send: (command) => { (window.sent ||= []).push(command); return true; }, stop() {} };
    panel._onFrame({type: "snapshot", session, seq: items.length, info: null, items});
}"""


def projected(*frames) -> list[dict]:
    """The items an ACP agent's frames make, in one turn of the person's message."""
    from actors.harness.acp.projection import AcpProjector
    from tests.projected import thread_from
    return thread_from(AcpProjector("g"), list(frames), "plan it").snapshot()["items"]


def test_an_agents_plan_is_a_list_of_its_entries_and_an_approval_offers_only_the_agents_options(page, daemon):
    panel = Panel(page, daemon).open()
    expect(panel.find("select.harness option[value=opencode]")).to_have_text("OpenCode")
    plan = {"method": "session/update", "params": {"update": {"sessionUpdate": "plan", "entries": [
        {"content": "Read the code", "status": "completed", "priority": "high"},
        {"content": "Write the fix", "status": "in_progress", "priority": "high"},
        {"content": "Run the tests", "status": "pending", "priority": "medium"}]}}}
    # An agent that offers no "always": Allow and Deny only.
    ask = {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
        "toolCall": {"toolCallId": "t1", "title": "rm -rf build", "kind": "execute",
                     "rawInput": {"command": "rm -rf build"}},
        "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"},
                    {"optionId": "no", "name": "No", "kind": "reject_once"}]}}
    session = {"id": "recorded", "harness": "opencode", "status": "requires_action", "projectRootPath": "/nowhere"}
    page.evaluate(SHOW, [session, projected(plan, ask)])
    shown = panel.items("plan-list")
    expect(shown).to_have_attribute("aria-label", "OpenCode's plan")
    expect(shown.locator("li .content")).to_have_text(["Read the code", "Write the fix", "Run the tests"])
    expect(shown.locator("li .state")).to_have_text(["done", "doing", "to do"])
    approval = panel.items("approval")  # no tool call of its own: a card of its own, named by the agent's label
    expect(approval).to_contain_text("OpenCode asks to use rm -rf build")
    expect(approval.locator(".buttons button")).to_have_text(["Allow", "Deny"])
    assert_no_serious_axe_violation(page, "an ACP plan and approval")
    approval.get_by_role("button", name="Deny").click()
    sent = page.evaluate("() => window.sent.at(-1)")
    assert (sent["type"], sent["requestId"], sent["decision"]) == ("approve", "g:7", "deny")

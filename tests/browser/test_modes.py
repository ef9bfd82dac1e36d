"""The panel's mode switch, on the real Claude Code CLI: what the agent may do without asking.

Beside the model picker: Ask / Accept edits / Auto / Full access / Plan, the picked one's line
under it, a notice when the CLI runs narrower than asked, and the mode remembered per checkout
for the next conversation. A plan to approve is rendered with Approve (and the mode to go on in)
and Send back: its frames are checked on a card put into the panel's transcript, and the whole
way on the real CLI (Plan picked, the plan approved into Accept edits, its edit made unasked).
"""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply, tool_use_reply

SPY = """() => {
  const panel = window.__devhostChat;
  panel.sentFrames = [];
  const connection = panel.connection;
  const send = connection.send.bind(connection);
  // Answers to the made-up plans below stay here: devhostd knows no such request.
  connection.send = (frame) => { panel.sentFrames.push(frame); return frame.type === "approve" || send(frame); };
}"""


def sent(page, kind: str) -> list[dict]:
    return page.evaluate("(kind) => window.__devhostChat.sentFrames.filter((f) => f.type === kind)", kind)


def test_the_switch_changes_the_mode_a_command_that_asked_under_ask_runs_unasked_under_full_access(
        page, daemon, mock, stack):
    project = stack / "project"
    mock.add(tool_use_reply("Bash", {"command": "touch asked.txt", "description": "Make a file"}),
             text_reply("Made it."),
             tool_use_reply("Bash", {"command": "touch unasked.txt", "description": "Make another"}),
             text_reply("Made another."))
    panel = Panel(page, daemon).open()
    switch = page.get_by_role("combobox", name="Mode", exact=True)
    expect(switch).to_have_value("supervised")  # nothing picked for this checkout yet
    expect(panel.find("select.account")).to_be_hidden()  # one account (the CLI's default): no choice
    expect(switch).to_have_accessible_description("Asks you before every file edit and every command.")
    panel.send("make a file")
    allow = page.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible()  # under Ask the command waits for the person
    allow.click()
    expect(panel.items("assistant").last).to_have_text("Made it.")
    assert (project / "asked.txt").exists()

    switch.select_option(label="Full access")
    expect(switch).to_have_accessible_description("Edits and runs anything without asking you.")
    # Only a new start of Claude Code has full access: it says so until the next message.
    notice = panel.find(".mode-notice")
    expect(notice).to_have_text("Claude Code gets Full access from your next message (it has to start again for it): "
                                "until then edits and commands ask.")
    panel.send("make another")
    expect(panel.items("assistant").last).to_have_text("Made another.")
    assert (project / "unasked.txt").exists()
    expect(allow).to_have_count(0)  # nothing asked
    expect(notice).to_be_hidden()  # it runs as asked now
    expect(switch).to_have_value("full-access")


def test_claude_auto_says_what_the_cli_runs_under_instead(page, daemon, mock):
    mock.add(text_reply("Hello."))
    panel = Panel(page, daemon).open()
    panel.send("hi")
    expect(panel.items("assistant").last).to_have_text("Hello.")
    switch = page.get_by_role("combobox", name="Mode", exact=True)
    switch.focus()
    page.keyboard.press("ArrowDown")  # by keyboard alone: Ask, Accept edits, Auto
    expect(switch).to_have_value("auto-accept-edits")
    page.keyboard.press("ArrowDown")
    expect(switch).to_have_value("auto")
    expect(switch).to_have_accessible_description("The CLI's own automatic mode: routine steps go, risky ones ask.")
    notice = page.get_by_role("status").filter(has_text="automatic mode")
    expect(notice).to_have_text("Claude Code has no automatic mode here: edits go, commands ask.")
    switch.select_option("auto-accept-edits")  # as wide as it runs: nothing to say
    expect(panel.find(".mode-notice")).to_be_hidden()


def test_a_new_conversation_of_the_checkout_starts_in_the_mode_last_picked_there(page, daemon, mock):
    mock.add(text_reply("Hello."))
    panel = Panel(page, daemon).open()
    switch = page.get_by_role("combobox", name="Mode", exact=True)
    switch.select_option("auto-accept-edits")  # no conversation open: the next one starts in it
    panel.reload()
    panel.wait_for_harnesses()
    expect(switch).to_have_value("auto-accept-edits")
    panel.send("hi")
    expect(panel.items("assistant").last).to_have_text("Hello.")
    expect(switch).to_have_value("auto-accept-edits")  # as the conversation's info says
    assert daemon.sessions()[0]["runtimeMode"] == "auto-accept-edits"
    switch.select_option("full-access")  # picked in a conversation: remembered too
    expect(switch).to_have_value("full-access")
    panel.find(".new").click()
    expect(switch).to_have_value("full-access")
    # Another checkout keeps its own: nothing picked there.
    Panel(page, daemon, "other.localhost").open()
    expect(switch).to_have_value("supervised")


def test_a_plan_is_shown_rendered_with_approve_in_a_mode_or_send_back(page, daemon, mock, shots):
    mock.add(text_reply("Hello."))
    panel = Panel(page, daemon).open()
    panel.send("hi")
    expect(panel.items("assistant").last).to_have_text("Hello.")
    page.evaluate(SPY)
    switch = page.get_by_role("combobox", name="Mode", exact=True)
    switch.select_option("auto")
    switch.select_option("plan")
    assert sent(page, "configure") == [{"type": "configure", "runtimeMode": "auto", "plan": False},
                                       {"type": "configure", "plan": True}]

    def propose(request_id: str) -> None:
        page.evaluate("""(id) => {
          const panel = window.__devhostChat;
          panel.transcript._put({ id: `approval-${id}`, kind: "approval", requestId: id, toolName: "ExitPlanMode",
            decision: "pending", plan: { text: "# The plan\\n\\n1. Write **notes.txt**\\n2. Run `make test`",
                                         path: "/root/.claude/plans/quiet-otter.md" } });
          panel._render(panel.transcript.takeChanged());
        }""", request_id)

    propose("plan-1")
    card = page.get_by_role("group", name="Claude Code's plan")
    expect(card).to_contain_text("Claude Code proposes a plan")
    expect(card.get_by_role("heading", name="The plan")).to_be_visible()  # markdown, rendered
    expect(card.locator("strong")).to_have_text("notes.txt")
    expect(card).to_contain_text("Kept in /root/.claude/plans/quiet-otter.md")
    then = card.get_by_role("combobox", name="Mode to go on in")
    expect(then).to_have_value("auto")  # the mode picked before Plan
    expect(then.locator("option")).to_have_text(["Ask", "Accept edits", "Auto", "Full access"])
    shots(page, "29-plan")
    then.select_option("full-access")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("You approved the plan.")
    assert sent(page, "approve")[-1] == {"type": "approve", "requestId": "plan-1", "decision": "allow",
                                         "runtimeMode": "full-access"}

    propose("plan-2")
    card = page.get_by_role("group", name="Claude Code's plan").last
    card.get_by_role("textbox", name="What to change in the plan").fill("Run the tests first.")
    card.get_by_role("button", name="Send back").click()
    expect(card).to_contain_text("You sent the plan back.")
    assert sent(page, "approve")[-1] == {"type": "approve", "requestId": "plan-2", "decision": "deny",
                                         "message": "Run the tests first."}


def test_a_plan_approved_in_the_panel_goes_on_in_the_mode_picked_on_the_real_cli(page, daemon, mock, stack):
    from tests.mock_anthropic import PLAN_FILE
    project = stack / "project"
    mock.add(text_reply("Hello."),
             tool_use_reply("Write", {"file_path": PLAN_FILE, "content": "# Plan\n\n1. Write notes.txt\n"}),
             tool_use_reply("ExitPlanMode", {}),
             tool_use_reply("Write", {"file_path": str(project / "notes.txt"), "content": "one\n"}),
             text_reply("Done as planned."))
    panel = Panel(page, daemon).open()
    panel.send("hi")  # a conversation to plan in
    expect(panel.items("assistant").last).to_have_text("Hello.")
    switch = page.get_by_role("combobox", name="Mode", exact=True)
    switch.select_option("plan")
    expect(switch).to_have_value("plan")  # the chat plans now (its info says so)
    panel.send("plan notes.txt, then write it")
    card = page.get_by_role("group", name="Claude Code's plan")
    expect(card.get_by_role("heading", name="Plan")).to_be_visible()
    card.get_by_role("combobox", name="Mode to go on in").select_option("auto-accept-edits")
    card.get_by_role("button", name="Approve").click()
    expect(panel.items("assistant").last).to_have_text("Done as planned.")
    assert (project / "notes.txt").read_text() == "one\n"  # the edit went unasked, as Accept edits lets it
    expect(page.get_by_role("button", name="Allow", exact=True)).to_have_count(0)
    expect(switch).to_have_value("auto-accept-edits")

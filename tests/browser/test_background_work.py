"""Delegated work in the panel, on the real CLIs: a subagent as a collapsible nested transcript
with its own tool inside and its live status; a background shell as one line with Stop, which
ends it; the badge saying what still runs in the background. Codex's child agents need its
``multi_agent_v2`` feature, turned on here."""
from __future__ import annotations

import subprocess

from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply, tool_use_reply
from tests.mock_openai import shell_reply, spawn_agent_reply, wait_agent_reply
from tests.mock_openai import text_reply as codex_text
from tests.peers import codex_env

SUB_PROMPT = "SUBAGENT-WORK: run echo sub-hello, then say SUB-DONE."


def test_a_subagent_shows_as_a_nested_transcript_with_its_own_tool(page, daemon, mock, shots):
    mock.add(tool_use_reply("Task", {"description": "say hello from a subagent", "prompt": SUB_PROMPT,
                                     "subagent_type": "general-purpose"}),
             text_reply("The agent is working on it."), text_reply("The agent said SUB-DONE."))
    mock.route(SUB_PROMPT, tool_use_reply("Bash", {"command": "echo sub-hello", "description": "Say hello"}),
               text_reply("SUB-DONE"))
    panel = Panel(page, daemon).open()
    panel.send("delegate the greeting")  # supervised, but Claude Code lets a read-only echo run unasked
    expect(panel.items("assistant").last).to_have_text("The agent said SUB-DONE.")
    agent = panel.items("subagent")
    expect(agent).to_have_count(1)
    expect(agent.locator(":scope > .tool-head")).to_contain_text("say hello from a subagent")
    expect(agent).to_have_attribute("data-status", "done")
    agent.locator(":scope > .tool-head").click()
    expect(agent.locator(".children .item.tool")).to_contain_text("echo sub-hello")  # its tool, inside it
    expect(agent.locator(".children .item.assistant")).to_have_text("SUB-DONE")
    expect(panel.find(".items > .item.tool")).to_have_count(0)  # nothing of it mixed into the parent's
    shots(page, "18-subagent")


def test_a_background_shell_is_listed_with_stop_and_stop_ends_it(page, daemon, mock):
    marker = "sleep 41.5"
    mock.add(tool_use_reply("Bash", {"command": f"{marker}; echo never", "description": "Long wait",
                                     "run_in_background": True}),
             text_reply("Started it."), text_reply("It was stopped."))
    panel = Panel(page, daemon).open()
    panel.send("run it in the background")
    stop_from_its_line(panel, marker)


def stop_from_its_line(panel: Panel, marker: str) -> None:
    """The running task is one line with its command and Stop; Stop ends it and its process."""
    task = panel.items("task")
    expect(task).to_have_attribute("data-status", "running")
    expect(task).to_contain_text(marker)
    expect(panel.find(".badge")).to_contain_text("1 in background")
    task.get_by_role("button", name="Stop").click()
    expect(task).to_have_attribute("data-status", "stopped")
    expect(panel.find(".badge")).not_to_contain_text("in background")
    assert not subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.strip()


def test_a_codex_child_agent_shows_nested_with_its_command_inside(page, daemon, daemon_env, openai, stack):
    codex_env(daemon_env["HOME"], openai.url, approval_policy="on-request",
              project_dirs=(stack / "project", stack / "other"), features=("multi_agent_v2",))
    task = "CHILD-WORK: run echo sub-hello, then say SUB-DONE."
    openai.add(spawn_agent_reply("greeter", task), wait_agent_reply(), codex_text("The agent said SUB-DONE."))
    openai.route(task, shell_reply("echo sub-hello"), codex_text("SUB-DONE"))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("delegate the greeting")
    accept_the_command(page)  # a panel conversation starts supervised: the child's command asks
    expect(panel.items("assistant").last).to_have_text("The agent said SUB-DONE.")
    agent = panel.items("subagent")
    expect(agent).to_have_attribute("data-status", "done")
    expect(agent.locator(":scope > .tool-head")).to_contain_text("greeter")
    agent.locator(":scope > .tool-head").click()
    expect(agent.locator(".children .item.tool")).to_contain_text("echo sub-hello")
    expect(agent.locator(".children .item.assistant")).to_have_text("SUB-DONE")


def test_a_codex_command_that_outlives_its_turn_is_listed_with_stop_and_stop_ends_it(page, daemon, openai):
    marker = "sleep 41.6"
    openai.add(shell_reply(f"{marker}; echo never", yield_time_ms=500), codex_text("Started; it runs on."))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("run it in the background")
    accept_the_command(page)  # a panel conversation starts supervised: the command asks
    stop_from_its_line(panel, marker)


def accept_the_command(page) -> None:
    accept = page.get_by_role("button", name="Accept", exact=True).first
    expect(accept).to_be_visible()
    accept.click()

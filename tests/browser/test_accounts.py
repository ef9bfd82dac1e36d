"""The panel's account picker, on the real Claude Code CLI: which login the agent runs under.

Shown beside the model picker only when the CLI has more than one account (the manifest's
``[accounts.claude.<name>]`` beside the CLI's default home). A new conversation starts under the
account picked; an open one moves to another that reads the same conversation, after the work
it is doing (the settings swap), and the panel says it waits. The homes: tests/accounts.py.
"""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.accounts import homes, turn_keys, without_api_key  # noqa: F401 - homes: a fixture
from tests.browser.panel import Panel
from tests.mock_anthropic import text_reply


@pytest.fixture
def daemon_env(daemon_env, homes, stack):
    # A third name for work's home: a conversation kept there can move to it mid-conversation.
    with open(stack / "devhost.toml", "a") as manifest:
        manifest.write(f"[accounts.claude.alias]\nconfig_home = {json.dumps(homes['claude', 'work'])}\n")
    return without_api_key(daemon_env)


def test_a_conversation_starts_under_the_account_picked_and_moves_after_the_work_it_is_doing(page, daemon, mock):
    mock.add(text_reply(*["slow "] * 12, delay=0.4), text_reply("Under the alias."))
    panel = Panel(page, daemon).open()
    picker = page.get_by_role("combobox", name="Account", exact=True)
    expect(picker).to_be_visible()
    expect(picker).to_have_attribute("title", "Which login of the CLI the agent runs under")
    # No login in the CLI's default home here: the picker says so.
    assert picker.locator("option").all_text_contents() == ["Default (not signed in)", "alias", "personal", "work"]
    expect(picker).to_have_value("")  # nothing picked yet: the CLI's default
    picker.select_option(label="work")

    before = len(mock.log)
    panel.send("count slowly")
    expect(panel.items("assistant").last).to_contain_text("slow")  # the model is answering
    assert set(turn_keys(mock, before)) == {"Bearer sk-ant-oat01-work"}
    # Mid-turn: the same home under another name. The CLI starts anew for it, after this turn.
    picker.select_option(label="alias")
    notice = panel.find(".account-notice")
    expect(notice).to_have_text("Moves to the “alias” account when the current work and open requests finish; "
                                "a message sent meanwhile waits for it.")
    expect(panel.items("assistant").last).to_contain_text("slow slow")
    panel.expect_status("idle")
    expect(notice).to_be_hidden()
    expect(picker).to_have_value("alias")
    panel.send("and now?")
    expect(panel.items("assistant").last).to_have_text("Under the alias.")
    assert daemon.sessions()[0]["account"] == "alias"

    # A new conversation gets the account last picked, shown before it starts.
    panel.find(".new").click()
    expect(picker).to_have_value("alias")


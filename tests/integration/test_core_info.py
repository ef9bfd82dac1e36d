"""The chat's info tells what the CLIs reported, and nothing they did not: the model in use, the
cost (Claude Code's total_cost_usd, over turns and processes), the context's use and window
(both CLIs' usage frames), the slash commands (Claude Code's init frame), and the short form of
what waits (info.requests). Real CLIs against the mock model servers."""
from __future__ import annotations

import pytest

from tests.integration.chats import info
from tests.integration.daemon import wait_until
from tests.mock_anthropic import MODEL_IDS, text_reply, tool_use_reply
from tests.mock_openai import shell_reply, text_reply as codex_text






def turns(core, chat_id: str) -> list[dict]:
    return [i for i in core.chats.history(chat_id, limit=100)["items"] if i["kind"] == "turn"]


def test_claude_code_info_is_what_it_reported_and_its_cost_adds_up_over_turns(core, mock, stack):
    mock.add(text_reply("one"), text_reply("two"))
    fresh = core.chats.create("truth", provider="claude", cwd=str(stack / "project"))
    assert fresh["model"] is None and fresh["usage"] == {"turns": 0}  # nothing reported yet: nothing made up
    for text in ("first", "second"):
        core.chats.send("truth", text)
        wait_until(lambda: all(t["state"] == "done" for t in turns(core, "truth")), timeout=60, what="the turn")
    now = info(core, "truth")
    assert now["model"] in MODEL_IDS  # the model the CLI said it uses
    assert "compact" in now["slashCommands"] or len(now["slashCommands"]) > 3
    usage = now["usage"]
    # The mock reports 10 input tokens a request; Claude Code prices each turn and adds them up.
    assert usage["contextTokens"] == 10 and usage["contextWindow"] > 0 and usage["turns"] == 2
    first, second = turns(core, "truth")
    assert first["costUsd"] > 0 and second["costUsd"] > 0
    assert usage["costUsd"] == pytest.approx(first["costUsd"] + second["costUsd"])


def test_codex_info_has_its_model_and_context_and_no_cost_it_never_reports(core, openai, stack):
    openai.add(codex_text("hello"))
    core.chats.create("cxinfo", provider="codex", cwd=str(stack / "project"))
    core.chats.send("cxinfo", "hi")
    wait_until(lambda: any(t["state"] == "done" for t in turns(core, "cxinfo")), timeout=60, what="the turn")
    now = info(core, "cxinfo")
    assert now["model"] == "gpt-5.5"
    assert now["usage"]["contextTokens"] == 120 and now["usage"]["contextWindow"] > 0  # the mock's 100 + 20
    assert "costUsd" not in now["usage"] and "costUsd" not in turns(core, "cxinfo")[0]


def test_a_pending_approval_is_summarized_in_the_info_with_its_command(core, mock, stack):
    mock.add(tool_use_reply("Bash", {"command": "touch summary.txt", "description": "make the file"}),
             text_reply("made it"))
    core.chats.create("sum", provider="claude", cwd=str(stack / "project"), runtimeMode="supervised")
    core.chats.send("sum", "make a file")
    wait_until(lambda: info(core, "sum")["requests"], timeout=60, what="the approval")
    [request] = info(core, "sum")["requests"]
    assert request["kind"] == "approval" and request["approval"]["toolName"] == "Bash"
    assert request["approval"]["command"] == "touch summary.txt"
    core.chats.approve("sum", request["requestId"], "allow")
    wait_until(lambda: info(core, "sum")["requests"] == [], timeout=60, what="nothing waiting")


def test_a_pending_codex_command_is_summarized_too(core, openai, stack):
    openai.add(shell_reply("touch codex-summary.txt", justification="needs to write"), codex_text("done"))
    core.chats.create("cxsum", provider="codex", cwd=str(stack / "project"), runtimeMode="supervised")
    core.chats.send("cxsum", "make a file")
    wait_until(lambda: info(core, "cxsum")["requests"], timeout=60, what="the approval")
    [request] = info(core, "cxsum")["requests"]
    assert "touch codex-summary.txt" in request["approval"]["command"]
    assert request["approval"]["description"] == "needs to write"
    core.chats.approve("cxsum", request["requestId"], "deny")

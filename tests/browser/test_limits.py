"""A turn that stopped on the plan's usage limit, in the panel (real Claude Code on a
subscription login, the mock answering as the API does at the five-hour wall): the reset time
in the person's own clock with a countdown, the take-up the host owes, and the Resume-at-reset
switch that turns it off for this chat; a Codex 429 shown as a rate limit, not an overloaded model."""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.panel import Panel
from tests.mock_anthropic import usage_limit_reply
from tests.mock_openai import error_reply as codex_error_reply


@pytest.fixture
def subscription_with_resume(daemon_env, stack):
    daemon_env.pop("ANTHROPIC_API_KEY")
    daemon_env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-test"
    with open(stack / "devhost.toml", "a") as manifest:
        manifest.write("[core]\nresume_at_reset = true\n")


def test_a_limited_turn_shows_its_reset_in_local_time_counts_down_and_resume_can_be_turned_off(
        subscription_with_resume, page, daemon, mock, shots):
    resets = int(time.time()) + 3600
    mock.add(usage_limit_reply(resets))
    panel = Panel(page, daemon).open()
    panel.send("one")
    limit = panel.find(".item.limit")
    expect(limit).to_contain_text("Usage limit reached")
    expect(limit).to_contain_text("5-hour limit")  # Claude Code's own words
    local = page.evaluate("(ms) => new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})",
                          resets * 1000)
    # Within the hour before midnight the reset falls on the next day, and the panel names the day.
    other_day = page.evaluate("(ms) => new Date(ms).toDateString() !== new Date().toDateString()", resets * 1000)
    day = r"\w{3}, \w{3} \d{1,2} " if other_day else ""
    expect(limit.locator(".resets")).to_contain_text(re.compile(f"Resets at {day}{re.escape(local)}"))
    expect(limit.locator(".countdown")).to_have_text(re.compile(r"in (59 min \d\d s|1 h 00 min)"))
    before = limit.locator(".countdown").text_content()
    expect(limit.locator(".countdown")).not_to_have_text(before, timeout=5000)  # it counts down
    resume = limit.get_by_label("Resume at reset")
    expect(resume).to_be_checked()
    expect(limit).to_contain_text("Goes on by itself at")
    shots(page, "19-usage-limit")
    resume.uncheck()
    expect(limit).not_to_contain_text("Goes on by itself at")
    expect(limit.get_by_label("Resume at reset")).not_to_be_checked()


def test_a_codex_turn_refused_429_is_shown_rate_limited_never_overloaded(page, daemon, openai):
    openai.add(codex_error_reply(429, "Rate limit reached for requests", times=None))
    panel = Panel(page, daemon).open()
    panel.pick_harness("codex")
    panel.send("one")
    limit = panel.find(".item.limit")
    expect(limit).to_have_attribute("data-kind", "rate")
    expect(limit.locator("strong")).to_have_text("Rate-limited: too many requests")
    expect(limit).to_contain_text("429 Too Many Requests")  # Codex's own words under it
    expect(limit).not_to_contain_text("overloaded")
    # The log says it the same way.
    panel.find(".logmap").click()
    expect(panel.find(".loglist .what").filter(has_text="stopped on a rate limit (too many requests)")).to_have_count(1)

"""actors.session_rules: the text a session sends, how its log text is cut, why a CLI ended."""

import pytest

from actors.session_rules import (ERROR_DETAIL_BYTES, PROMPT_LABEL, compose_message, cut_utf8,
                                  exit_reason)


# ---- the text that is sent -------------------------------------------------------------------

def test_the_prompt_is_appended_as_a_labelled_section_after_the_text():
    message = compose_message("fix the header", "Work in a worktree.")
    assert message == f"fix the header\n\n---\n{PROMPT_LABEL}:\nWork in a worktree."
    assert message.startswith("fix the header")


def test_an_empty_prompt_appends_nothing():
    assert compose_message("fix the header", "") == "fix the header"


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_a_send_without_text_is_not_decorated(text):
    # An image-only send stays image-only: the prompt rides on text the person wrote.
    assert compose_message(text, "Work in a worktree.") == text


def test_the_persons_text_is_passed_unchanged():
    text = "  keep *my* spacing\n\n"
    assert compose_message(text, "p").startswith(text)


# ---- cutting text at a byte limit ------------------------------------------------------------

def test_text_within_the_limit_is_unchanged():
    assert cut_utf8("héllo", 6) == "héllo"
    assert cut_utf8("", 0) == ""


def test_cut_text_fits_the_limit_and_ends_with_the_marker():
    cut = cut_utf8("x" * 100, 10)
    assert cut == "x" * 7 + "…"
    assert len(cut.encode()) == 10


@pytest.mark.parametrize("text", ["é" * 50, "日本語のテキスト" * 10, "🙂" * 30, "aé日🙂" * 20])
def test_a_cut_never_splits_a_character_and_never_exceeds_the_limit(text):
    for limit in range(0, len(text.encode()) + 2):
        cut = cut_utf8(text, limit)
        assert len(cut.encode()) <= limit or cut == text
        body = cut[:-1] if cut.endswith("…") and cut != text else cut
        assert text.startswith(body)  # whole characters of the original, nothing mangled


def test_a_custom_marker_is_used():
    assert cut_utf8("abcdefgh", 6, marker="[cut]") == "a[cut]"


# ---- why a CLI process ended -----------------------------------------------------------------

def test_an_exit_code_is_reported_with_the_stderr_tail_on_one_line():
    assert exit_reason("Claude Code", 1, "Error: bad flag\n  at main\n") == \
        "Claude Code exited with code 1: Error: bad flag at main"


def test_a_signal_is_reported_by_number():
    assert exit_reason("Codex", -9, "") == "Codex was killed by signal 9"


def test_a_process_that_never_ran_could_not_be_started():
    assert exit_reason("Claude Code", None, "No such file or directory: 'claude'") == \
        "Claude Code could not be started: No such file or directory: 'claude'"


def test_a_clean_exit_without_stderr_says_only_that():
    assert exit_reason("Codex", 0, "  \n") == "Codex exited with code 0"


def test_the_reason_is_cut_at_the_error_detail_limit():
    reason = exit_reason("Claude Code", 1, "é" * 2000)
    assert len(reason.encode()) <= ERROR_DETAIL_BYTES
    assert reason.startswith("Claude Code exited with code 1: é") and reason.endswith("…")

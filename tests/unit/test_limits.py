"""actors.core.limits: when a turn that hit a usage limit, a rate limit or an overloaded model is taken up
again, and how many limited turns in a row there were."""
from actors.core import limits
from actors.core.limits import LIMIT_RETRY_DELAYS_MS, RESET_MARGIN_MS, resume_at

NOW = 1_800_000_000_000


def test_an_overloaded_model_is_tried_again_after_one_five_and_fifteen_minutes_then_never():
    overload = {"kind": "overload"}
    assert [resume_at(overload, tries, NOW) for tries in (1, 2, 3)] == [NOW + d for d in LIMIT_RETRY_DELAYS_MS]
    assert resume_at(overload, 4, NOW) is None


def test_a_usage_limit_is_taken_up_just_after_its_reset_and_later_tries_wait_at_least_the_delay():
    soon = {"kind": "usage", "resetsAt": NOW + 1_000}
    assert resume_at(soon, 1, NOW) == NOW + 1_000 + RESET_MARGIN_MS
    assert resume_at(soon, 2, NOW) == NOW + LIMIT_RETRY_DELAYS_MS[1]  # it reset, yet was limited again
    late = {"kind": "usage", "resetsAt": NOW + 3_600_000}
    assert resume_at(late, 2, NOW) == NOW + 3_600_000 + RESET_MARGIN_MS
    assert resume_at(late, 4, NOW) is None


def test_a_usage_limit_without_a_reset_time_is_never_taken_up():
    assert resume_at({"kind": "usage"}, 1, NOW) is None


def test_tries_count_the_limited_turns_that_end_the_thread_in_a_row():
    limited, normal = {"limit": {"kind": "usage"}}, {"state": "done"}
    assert limits.tries([]) == 0
    assert limits.tries([limited, limited]) == 2
    assert limits.tries([limited, normal, limited]) == 1  # a normal turn in between starts over
    assert limits.tries([limited, normal]) == 0


def test_turning_resume_on_later_owes_only_a_usage_limit_still_to_reset():
    assert limits.owed_when_switched_on({"kind": "usage", "resetsAt": NOW + 1}, NOW)
    assert not limits.owed_when_switched_on({"kind": "usage", "resetsAt": NOW - 1}, NOW)
    assert not limits.owed_when_switched_on({"kind": "overload"}, NOW)
    assert not limits.owed_when_switched_on(None, NOW)


def test_windows_are_named_as_claude_code_names_them():
    assert [limits.window_name(m) for m in (300, 10080, 90, 0, None)] == \
        ["five_hour", "seven_day", "90_minutes", None, None]


def test_reset_times_in_epoch_seconds_become_ms_and_anything_else_none():
    assert limits.epoch_ms(1796160000) == 1796160000000
    assert [limits.epoch_ms(v) for v in (0, -5, "soon", None, True and None)] == [None] * 5


def test_a_429_is_a_rate_limit_that_says_when_to_try_again_where_the_error_names_a_wait():
    said = "Rate limit reached for gpt-5 on tokens per min. Please try again in 1m30s."
    assert limits.rate_limit(said, NOW) == {"kind": "rate", "message": said, "resetsAt": NOW + 90_000}
    assert limits.rate_limit("429 Too Many Requests", NOW) == {"kind": "rate", "message": "429 Too Many Requests"}
    # A reset the CLI named (a used-up window) wins over the text.
    assert limits.rate_limit(said, NOW, NOW + 5)["resetsAt"] == NOW + 5
    assert [limits.retry_in_ms(t) for t in ("try again in 20s", "Retry after 12 seconds", "try again in 450ms",
                                            "try again in 2 minutes", "try again later", "")] == \
        [20_000, 12_000, 450, 120_000, None, None]


def test_a_rate_limit_goes_again_at_its_time_where_known_else_like_an_overloaded_model():
    assert resume_at({"kind": "rate", "resetsAt": NOW + 1_000}, 1, NOW) == NOW + 1_000 + RESET_MARGIN_MS
    assert [resume_at({"kind": "rate"}, tries, NOW) for tries in (1, 2, 3)] == [NOW + d for d in LIMIT_RETRY_DELAYS_MS]
    assert limits.owed_when_switched_on({"kind": "rate", "resetsAt": NOW + 1}, NOW)
    assert not limits.owed_when_switched_on({"kind": "rate"}, NOW)

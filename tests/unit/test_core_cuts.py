import random
import sys

from actors.core import bookmarks
from actors.core.cuts import TITLE_CHARS, clip, collapsed, first_lines, suggested_title, units
from actors.core.summaries import LIMITS, summary

MIB = 1024 * 1024


def _clip_by_definition(text: str, limit: int, front: bool = False) -> str:
    """The cut as the seed states it: drop characters from the end (the front for a path) until
    what is left and the ellipsis fit in ``limit`` units."""
    if units(text) <= limit:
        return text
    while units(text) > limit - 1:
        text = text[1:] if front else text[:-1]
    return "…" + text if front else text + "…"


def test_a_clip_is_the_longest_part_that_fits_with_its_ellipsis_for_any_mix_of_one_and_two_unit_characters():
    rng = random.Random(7)
    alphabet = "ab é😀中\U0001F9EA"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        limit = rng.randrange(2, 25)
        for front in (False, True):
            assert clip(text, limit, front) == _clip_by_definition(text, limit, front), (text, limit, front)


def test_a_clip_never_splits_a_surrogate_pair_at_either_end():
    assert clip("😀" * 10, 5) == "😀😀…"
    assert clip("😀" * 10, 5, front=True) == "…😀😀"
    assert clip("a" + "😀" * 10, 5, front=True) == "…😀😀"
    assert clip("short", 5) == "short"


def test_a_lone_surrogate_counts_one_unit_and_is_cut_like_any_character():
    assert clip("\ud800" * 10, 4) == "\ud800" * 3 + "…"


def test_an_8_mib_line_is_clipped_to_its_limit_from_either_end():
    text = "x" * (8 * MIB - 1) + "😀"
    assert clip(text, 1000) == "x" * 999 + "…"
    assert clip(text, 200, front=True) == "…" + "x" * 197 + "😀"
    assert units(clip("😀" * (4 * MIB), 1000)) == 999  # 499 pairs and the ellipsis: a pair is never split


def test_collapsing_whitespace_is_the_same_as_splitting_on_it_for_every_whitespace_character():
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    text = "".join(f"{s}w{n}{s}{s}" for n, s in enumerate(spaces))
    assert collapsed(text, len(text)) == " ".join(text.split())


def test_collapsing_stops_once_it_is_longer_than_asked_so_a_cut_of_it_is_the_cut_of_the_whole():
    text = "word " * 100
    short = collapsed(text, 20)
    assert " ".join(text.split()).startswith(short) and len(short) > 20
    assert clip(short, 20) == clip(" ".join(text.split()), 20)
    assert collapsed(" " * (8 * MIB) + "late  words ", 160) == "late words"


def test_first_lines_says_whether_more_lines_follow():
    assert first_lines("a\nb\nc", 2) == ("a\nb", True)
    assert first_lines("a\nb", 2) == ("a\nb", False)
    assert first_lines("a\nb\n", 2) == ("a\nb", True)  # the empty line after the last newline counts


def test_a_400_kb_one_line_command_is_summarized_by_its_first_1000_units():
    item = {"id": "approval-1", "requestId": "1", "kind": "approval", "toolName": "Bash",
            "input": {"command": "echo " + "y" * 400_000}, "description": "d" * 8 * MIB}
    part = summary(item)["approval"]
    assert part["command"] == ("echo " + "y" * 994) + "…" and part["truncated"] is True
    assert part["description"] == "d" * 299 + "…"


def test_an_8_mib_edit_shows_its_first_twelve_changed_lines_and_says_it_is_cut():
    new = "\n".join(f"line {n}" for n in range(MIB))
    item = {"id": "approval-2", "requestId": "2", "kind": "approval", "toolName": "Write",
            "input": {"file_path": "/p/" + "d/" * MIB + "f.js", "content": new}}
    part = summary(item)["approval"]
    assert part["diff"] == "\n".join(f"+line {n}" for n in range(LIMITS["diffLines"])) and part["truncated"]
    assert part["path"] == "…" + ("d/" * MIB + "f.js")[-199:]


def test_a_diff_of_a_large_patch_skips_its_context_and_headers_to_the_first_changed_lines():
    diff = "--- a/f\n+++ b/f\n" + " context\n" * MIB + "-old\n+new\n"
    item = {"id": "approval-3", "requestId": "3", "kind": "approval", "toolName": "apply_patch",
            "input": {"changes": [{"path": "f", "diff": diff}]}}
    assert summary(item)["approval"]["diff"] == "-old\n+new\n"  # the empty line after the last newline stays


def test_a_bookmark_of_a_1_mb_message_has_its_160_character_excerpt():
    text = "  ".join(["minified();"] * (MIB // 12))
    assert bookmarks.excerpt({"kind": "user", "text": text}) == clip(" ".join(text.split()), 160)
    assert len(bookmarks.excerpt({"kind": "user", "text": text})) == 160


def test_a_chat_is_named_by_its_first_message_without_the_page_context_and_cut_on_a_word():
    assert suggested_title("Why is the header blue?\nIt should be red.") == "Why is the header blue?"
    assert suggested_title("fix this\n\n[Page context]\nPage: http://app.localhost/") == "fix this"
    assert suggested_title("[Page context]\nPage: http://app.localhost/") is None
    assert suggested_title("   \n") is None
    long = "word " * 40
    title = suggested_title(long)
    assert len(title) <= TITLE_CHARS and title.endswith("…") and not title[:-1].endswith(" ")

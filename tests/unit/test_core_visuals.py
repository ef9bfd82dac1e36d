"""actors.core.visuals: what a visual must be, its record, its frame's height, and the bootstrap
put at the start of its page."""
import pytest

from actors.core import visuals
from actors.errors import ChatError


def refused(**fields) -> ChatError:
    args = {"title": "Chart", "html": "<p>hi</p>", **fields}
    with pytest.raises(ChatError) as caught:
        visuals.normalize(args["title"], args["html"], args.get("max_height"), args.get("heights"))
    return caught.value


@pytest.mark.parametrize("fields, words", [
    ({"title": "  "}, "A visual needs a title; give it a short one that says what the page shows"),
    ({"title": "x" * 201}, "The title has 201 characters; keep it to 200 or fewer"),
    ({"html": " \n"}, "The page is empty; pass one self-contained HTML document"),
    ({"max_height": 79}, "The maximum height must be from 80 to 2000 CSS pixels; leave it out for 2000"),
    ({"max_height": float("nan")}, "The maximum height must be from 80"),
    ({"heights": [[0, 10]]},
     "Measured heights are at most 24 pairs of [width, height] in CSS pixels, with a positive width"),
    ({"heights": [[1, 1]] * 25}, "at most 24 pairs"),
    ({"heights": [["a", 1]]}, "at most 24 pairs"),
])
def test_a_visual_that_breaks_a_rule_is_refused_saying_what_to_change(fields, words):
    error = refused(**fields)
    assert error.code == "visual-invalid" and words in str(error)


def test_a_visual_is_tidied_title_trimmed_heights_rounded_and_sorted_with_the_last_pair_per_width_winning():
    title, _, max_height, heights = visuals.normalize("  Chart ", "<p>", 600.4, [[640.2, 99.1], [320, 50], [640, 120]])
    assert (title, max_height, heights) == ("Chart", 600, [[320, 50], [640, 120]])
    assert visuals.normalize("t", "<p>")[2:] == (2000, None)


def test_too_large_says_the_size_and_how_to_shrink():
    error = visuals.too_large(20 * 1048576)
    assert error.code == "visual-too-large"
    assert "The page is 20.0 MiB and a visual may be at most 16.0 MiB" in str(error)


def test_the_frame_height_is_the_larger_neighbour_clamped_to_80_and_the_maximum():
    visual = {"heights": [[320, 900], [640, 400], [1000, 40]], "maxHeight": 700}
    assert visuals.frame_height(visual, 480) == 700  # max(900, 400) capped at maxHeight
    assert visuals.frame_height(visual, 800) == 400
    assert visuals.frame_height(visual, 1000) == 80  # 40, raised to the least height
    assert visuals.frame_height(visual, 200) is None and visuals.frame_height({}, 500) is None


def test_the_record_has_a_random_16_hex_id_and_the_running_turn():
    record = visuals.record("T", 2000, None, 10, 5, "turn-1")
    assert len(record["id"]) == 16 and int(record["id"], 16) >= 0
    assert record == {"id": record["id"], "title": "T", "at": 5, "maxHeight": 2000, "size": 10, "turnId": "turn-1"}


@pytest.mark.parametrize("page, before", [
    ("<!doctype html><html><head><title>x</title></head><body>hi</body></html>", "<!doctype html><html><head>"),
    ("<!-- <head> in a comment --><html lang=en><body>hi</body></html>",
     "<!-- <head> in a comment --><html lang=en><head>"),
    ("<p>just a fragment</p>", "<head>"),
    ("\n  <HEAD data-x=1>\n<script>var s='<head>'</script>", "\n  <HEAD data-x=1>"),
])
def test_the_bootstrap_goes_first_in_the_head_or_in_a_head_of_its_own(page, before):
    injected = visuals.inject(page)
    assert injected.startswith(before + '<meta charset="utf-8">')
    assert injected.count("<style data-visual-theme>") == 1 and injected.count("<script>(function(){") == 1
    assert injected.replace(visuals.bootstrap(page), "").replace("<head></head>", "", 1) == page  # nothing else moved


def test_a_page_with_its_own_viewport_keeps_it_and_others_get_one():
    assert 'name="viewport"' in visuals.bootstrap("<p>")
    assert 'name="viewport"' not in visuals.bootstrap('<meta name="viewport" content="width=500">')


def test_the_palettes_define_every_theme_variable_in_light_and_dark():
    for palette in (visuals.LIGHT, visuals.DARK):
        assert len(palette) + len(visuals.SHARED) == 36
    assert "--chart-6:#facc15" in visuals.STYLE and "prefers-color-scheme: light" in visuals.STYLE

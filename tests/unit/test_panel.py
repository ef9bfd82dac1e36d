"""storage.panel and storage.atomic: chat panel positions per manifest, in private files."""
import json
import math
import os
import stat

import pytest

from storage.atomic import write_json_atomically
from storage.panel import POSITION_LIMIT, PanelError, PanelPositions, validate_position

SHOP, BLOG = "/work/shop/devhost.toml", "/work/blog/devhost.toml"


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- what a position is ----------------------------------------------------------------------

@pytest.mark.parametrize("position", [{"left": 12, "top": 40}, {"left": -8.5, "top": 0},
                                      {"left": POSITION_LIMIT, "top": -POSITION_LIMIT}])
def test_a_position_is_left_and_top_in_css_pixels(position):
    assert validate_position({"position": position}) == position


def test_a_null_position_means_the_default_place():
    assert validate_position({"position": None}) is None


@pytest.mark.parametrize("body", [None, [], "left", {}, {"position": {"left": 1, "top": 2}, "extra": 1},
                                  {"left": 1, "top": 2}])
def test_the_body_must_be_exactly_a_position(body):
    with pytest.raises(PanelError, match=r'send \{"position": \{"left": <px>, "top": <px>\}\} or \{"position": null\}'):
        validate_position(body)


@pytest.mark.parametrize("position", [{"left": 1}, {"left": 1, "top": 2, "width": 3}, [1, 2], "1,2", 0])
def test_a_position_has_exactly_left_and_top(position):
    with pytest.raises(PanelError, match="position must be null or an object with exactly `left` and `top`"):
        validate_position({"position": position})


@pytest.mark.parametrize("value", ["12", None, True, math.inf, -math.inf, math.nan, [1]])
def test_left_and_top_must_be_finite_numbers(value):
    with pytest.raises(PanelError, match=r"position\.left must be a finite number of CSS pixels"):
        validate_position({"position": {"left": value, "top": 0}})


@pytest.mark.parametrize("value", [POSITION_LIMIT + 1, -POSITION_LIMIT - 0.5, 1e300])
def test_a_position_past_the_limit_is_refused(value):
    with pytest.raises(PanelError, match=r"position\.top must be within"):
        validate_position({"position": {"left": 0, "top": value}})


# ---- saving and loading ----------------------------------------------------------------------

def test_nothing_saved_loads_as_the_default_place(tmp_path):
    assert PanelPositions(str(tmp_path / "state")).load(SHOP) is None


def test_a_saved_position_loads_back(tmp_path):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save(SHOP, {"left": 24, "top": 96.5})
    assert panels.load(SHOP) == {"left": 24, "top": 96.5}
    assert PanelPositions(str(tmp_path / "state")).load(SHOP) == {"left": 24, "top": 96.5}  # survives a restart


def test_each_manifest_keeps_its_own_position(tmp_path):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save(SHOP, {"left": 1, "top": 2})
    panels.save(BLOG, {"left": 3, "top": 4})
    assert panels.load(SHOP) == {"left": 1, "top": 2}
    assert panels.load(BLOG) == {"left": 3, "top": 4}


def test_saving_null_returns_to_the_default_place(tmp_path):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save(SHOP, {"left": 1, "top": 2})
    panels.save(SHOP, None)
    assert panels.load(SHOP) is None


def test_positions_are_private_files_in_a_private_folder(tmp_path):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save(SHOP, {"left": 1, "top": 2})
    folder = tmp_path / "state" / "panel"
    (saved,) = list(folder.iterdir())  # no temp file left behind
    assert mode(folder) == 0o700
    assert mode(saved) == 0o600


def test_the_file_names_no_manifest_path(tmp_path):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save("/work/../etc/devhost.toml", {"left": 1, "top": 2})
    (saved,) = list((tmp_path / "state" / "panel").iterdir())
    assert saved.name.endswith(".json") and "etc" not in saved.name and ".." not in saved.name


@pytest.mark.parametrize("contents", ["", "{not json", "[]", '{"manifest": "/work/shop/devhost.toml"}',
                                      '{"manifest": "/work/shop/devhost.toml", "position": {"left": "x", "top": 1}}',
                                      '{"manifest": "/somewhere/else.toml", "position": {"left": 1, "top": 2}}'])
def test_a_corrupt_or_foreign_file_loads_as_the_default_place(tmp_path, contents):
    panels = PanelPositions(str(tmp_path / "state"))
    panels.save(SHOP, {"left": 1, "top": 2})
    (saved,) = list((tmp_path / "state" / "panel").iterdir())
    saved.write_text(contents)
    assert panels.load(SHOP) is None


# ---- atomic writes ---------------------------------------------------------------------------

def test_an_atomic_write_replaces_the_whole_file(tmp_path):
    path = str(tmp_path / "private" / "value.json")
    write_json_atomically(path, {"a": "x" * 1000})
    write_json_atomically(path, {"b": 1})
    assert json.loads(open(path).read()) == {"b": 1}
    assert os.listdir(tmp_path / "private") == ["value.json"]


def test_a_value_that_is_not_json_writes_nothing(tmp_path):
    path = str(tmp_path / "private" / "value.json")
    write_json_atomically(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomically(path, {"a": object()})
    assert json.loads(open(path).read()) == {"a": 1}


def test_a_write_that_fails_at_the_rename_leaves_no_temp_file(tmp_path):
    blocked = tmp_path / "private" / "value.json"
    (blocked / "inside").mkdir(parents=True)  # a non-empty folder where the file should go
    with pytest.raises(OSError):
        write_json_atomically(str(blocked), {"a": 1})
    assert os.listdir(tmp_path / "private") == ["value.json"]
    assert blocked.is_dir()

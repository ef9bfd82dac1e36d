"""storage.panel_modes: the runtime mode last picked in the panel, per checkout, in private files."""
import os
import stat

import pytest

from actors.harness.modes import RUNTIME_MODES
from storage.panel_modes import PanelModes

SHOP, BLOG = "/work/shop", "/work/blog"


def modes(tmp_path) -> PanelModes:
    return PanelModes(str(tmp_path / "state"), RUNTIME_MODES)


def test_a_checkout_nobody_picked_a_mode_for_has_none(tmp_path):
    assert modes(tmp_path).load(SHOP) is None


@pytest.mark.parametrize("mode", RUNTIME_MODES)
def test_a_picked_mode_loads_back_after_a_restart(tmp_path, mode):
    modes(tmp_path).save(SHOP, mode)
    assert modes(tmp_path).load(SHOP) == mode  # a new PanelModes: as after a daemon restart


def test_each_checkout_keeps_its_own_mode_and_the_last_pick_counts(tmp_path):
    kept = modes(tmp_path)
    kept.save(SHOP, "full-access")
    kept.save(BLOG, "auto")
    kept.save(SHOP, "auto-accept-edits")
    assert (kept.load(SHOP), kept.load(BLOG)) == ("auto-accept-edits", "auto")


def test_a_mode_this_daemon_does_not_know_is_not_saved(tmp_path):
    with pytest.raises(ValueError, match="runtimeMode must be one of: supervised, auto-accept-edits, auto, full"):
        modes(tmp_path).save(SHOP, "yolo")
    assert not (tmp_path / "state" / "panel-modes").exists()


def test_modes_are_private_files_in_a_private_folder_named_by_no_path(tmp_path):
    modes(tmp_path).save("/work/../etc", "auto")
    folder = tmp_path / "state" / "panel-modes"
    (saved,) = list(folder.iterdir())  # no temp file left behind
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert saved.name.endswith(".json") and "etc" not in saved.name and ".." not in saved.name


@pytest.mark.parametrize("contents", ["", "{not json", "[]", '{"root": "/work/shop"}',
                                      '{"root": "/work/shop", "runtimeMode": "yolo"}',
                                      '{"root": "/work/shop", "runtimeMode": ["auto"]}',
                                      '{"root": "/somewhere/else", "runtimeMode": "full-access"}'])
def test_a_corrupt_or_foreign_file_names_no_mode(tmp_path, contents):
    kept = modes(tmp_path)
    kept.save(SHOP, "auto")
    (saved,) = list((tmp_path / "state" / "panel-modes").iterdir())
    saved.write_text(contents)
    assert kept.load(SHOP) is None

"""Entry points read from the distributions' entry_points.txt files: the same as importlib.metadata
finds, or None where only importlib.metadata can tell (devhostd/entry_points.py)."""
from __future__ import annotations

import zipfile
from importlib import metadata

from devhostd import entry_points


def _triples(found) -> set:
    return {(point.group, point.name, point.value) for point in found}


def _distribution(folder, name: str, text: str | None, suffix=".dist-info"):
    info = folder / f"{name}{suffix}"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.split('-')[0]}\nVersion: 1\n")
    if text is not None:
        (info / "entry_points.txt").write_text(text)
    return info


def test_this_environment_s_entry_points_are_importlib_metadata_s():
    read = entry_points.read()
    assert read is not None
    every = [point for group in metadata.entry_points().groups for point in metadata.entry_points(group=group)]
    assert _triples(read) == _triples(every)
    # gevent's own plugin among them: patch_all still finds and calls it
    assert ("gevent.plugins.monkey.will_patch_all", "signal_os_incompat",
            "gevent.monkey:_subscribe_signal_os") in _triples(read.select(group="gevent.plugins.monkey.will_patch_all"))


def test_the_first_distribution_of_a_name_on_the_path_wins_as_in_importlib_metadata(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    _distribution(first, "Some_Plugin-2.0", "[gevent.plugins.monkey.did_patch_all]\nnew = some_plugin:hook\n")
    _distribution(second, "some.plugin-1.0", "[gevent.plugins.monkey.did_patch_all]\nold = some_plugin:old\n")
    _distribution(second, "plain-1.0", None)  # no entry points at all
    _distribution(second, "legacy", "[console_scripts]\nlegacy = legacy:main\n", suffix=".egg-info")
    path = [str(first), str(second), str(tmp_path / "not-there")]
    read = entry_points.read(path)
    assert _triples(read) == {("gevent.plugins.monkey.did_patch_all", "new", "some_plugin:hook"),
                              ("console_scripts", "legacy", "legacy:main")}


def test_a_zip_or_an_egg_on_the_path_is_left_to_importlib_metadata(tmp_path):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("x-1.0.dist-info/entry_points.txt", "[g]\nx = x:y\n")
    assert entry_points.read([str(archive)]) is None
    egg = tmp_path / "thing.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    assert entry_points.read([str(egg)]) is None

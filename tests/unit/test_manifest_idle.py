"""storage.manifest: [devtools.chat] idle_cli_minutes, how long an idle chat keeps its CLI."""
import textwrap

import pytest

from storage.manifest import ManifestError, default_manifest, load_manifest
from storage.manifest_keys import unknown_keys

APP = """
    name = "shop"
    [services.app]
    host = "app.localhost"
    root = "."
"""


def write(tmp_path, chat: str) -> str:
    path = tmp_path / "devhost.toml"
    path.write_text(textwrap.dedent(APP) + "[devtools.chat]\n" + chat + "\n")
    return str(path)


def test_fifteen_minutes_when_the_manifest_names_none(tmp_path):
    assert load_manifest(write(tmp_path, "")).idle_cli_minutes == 15
    assert default_manifest(str(tmp_path)).idle_cli_minutes == 15


@pytest.mark.parametrize("written, minutes", [("5", 5), ("0.02", 0.02), ("0", 0), ("0.0", 0.0)])
def test_whole_and_fractional_minutes_and_zero_for_never_are_taken(tmp_path, written, minutes):
    path = write(tmp_path, f"idle_cli_minutes = {written}")
    assert load_manifest(path).idle_cli_minutes == minutes


@pytest.mark.parametrize("written", ["-1", "-0.5", '"15"', "true", "nan", "inf", "[15]"])
def test_anything_but_minutes_zero_or_more_is_refused_saying_what_to_write(tmp_path, written):
    path = write(tmp_path, f"idle_cli_minutes = {written}")
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: [devtools.chat] `idle_cli_minutes` must be a number of minutes, 0 or more")
    assert "0 never ends an idle CLI" in said and "not " in said


def test_the_key_is_known_in_devtools_chat_and_a_misspelling_is_pointed_at_it(tmp_path):
    assert unknown_keys({"devtools": {"chat": {"idle_cli_minutes": 3}}}, "m.toml") == []
    (warning,) = unknown_keys({"devtools": {"chat": {"idle_cli_minute": 3}}}, "m.toml")
    assert "did you mean `idle_cli_minutes`?" in warning

"""The chat core's secret on disk (storage/core_token.py): made once, private, kept."""
from __future__ import annotations

import os
import stat

from storage import core_token


def test_the_secret_is_made_once_private_and_kept_across_starts(tmp_path):
    first = core_token.load_or_create(str(tmp_path))
    assert stat.S_IMODE(os.stat(core_token.token_path(str(tmp_path))).st_mode) == 0o600
    assert core_token.load_or_create(str(tmp_path)) == first == core_token.read(str(tmp_path))


def test_a_kept_secret_others_could_read_is_made_private_again(tmp_path):
    first = core_token.load_or_create(str(tmp_path))
    os.chmod(core_token.token_path(str(tmp_path)), 0o644)
    assert core_token.load_or_create(str(tmp_path)) == first
    assert stat.S_IMODE(os.stat(core_token.token_path(str(tmp_path))).st_mode) == 0o600


def test_no_or_an_empty_file_holds_no_secret(tmp_path):
    assert core_token.read(str(tmp_path)) is None
    (tmp_path / "core-token").write_text("\n")
    assert core_token.read(str(tmp_path)) is None
    assert core_token.load_or_create(str(tmp_path))  # an empty one is replaced

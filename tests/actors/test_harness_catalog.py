"""The HarnessCatalog actor on the real Claude Code: a model list is kept, a failure is not.

The CLI is started through a small wrapper that counts its starts and fails while a `broken`
file sits beside it (reading the request first, then failing as a CLI not signed in would),
and otherwise runs the real CLI.
"""
from __future__ import annotations

import pytest

from actors.harness_catalog import HarnessCatalog
from tests.peers import CLAUDE, claude_env, require_peers
from tests.tiers import needs

ASK = 60
NO_CODEX = ("devhostd-test-no-such-codex",)  # not on PATH: no process, and nothing cached


@pytest.fixture
@needs("peers")
def cli(tmp_path):
    require_peers("claude")
    wrapper = tmp_path / "claude-wrapper"
    wrapper.write_text(f"""#!/bin/sh
echo started >> "{tmp_path}/starts"
if [ -e "{tmp_path}/broken" ]; then read -r request; echo "the CLI is not signed in" >&2; exit 1; fi
exec "{CLAUDE}" "$@"
""")
    wrapper.chmod(0o755)
    (tmp_path / "broken").write_text("")
    return wrapper


def starts(cli) -> int:
    path = cli.parent / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def claude_entry(catalog, cli) -> dict:
    entries = catalog.harnesses({"claude-code": (str(cli),), "codex": NO_CODEX}, str(cli.parent)).get(timeout=ASK)
    return next(e for e in entries if e["id"] == "claude-code")


@pytest.fixture
def catalog_for(tmp_path):
    started = []

    def start(retry_seconds):
        ref = HarnessCatalog.start(claude_env(tmp_path / "home", "http://127.0.0.1:9"), retry_seconds=retry_seconds)
        started.append(ref)
        return ref.proxy()
    yield start
    for ref in started:
        ref.stop()


def test_a_failed_listing_is_asked_again_once_its_short_back_off_is_over_and_a_list_is_kept(cli, catalog_for):
    catalog = catalog_for(retry_seconds=0)  # the back-off over at once
    failed = claude_entry(catalog, cli)
    assert failed["models"] == [] and "did not list its models: the CLI is not signed in" in failed["error"]
    assert claude_entry(catalog, cli)["error"] == failed["error"] and starts(cli) == 2
    (cli.parent / "broken").unlink()  # mended: the next look lists the models
    listed = claude_entry(catalog, cli)
    assert listed["available"] and listed["models"] and "error" not in listed and starts(cli) == 3
    assert claude_entry(catalog, cli) == listed and starts(cli) == 3  # a list is kept


def test_within_the_back_off_a_failed_listing_is_answered_without_starting_the_cli_again(cli, catalog_for):
    catalog = catalog_for(retry_seconds=3600)
    failed = claude_entry(catalog, cli)
    assert "the CLI is not signed in" in failed["error"]
    assert [claude_entry(catalog, cli) for _ in range(3)] == [failed] * 3 and starts(cli) == 1

"""Test-wide set-up: gevent patching comes before anything else, as in bin/devhostd.

pykka creates a lock when it is imported, so the patch must precede every import of it;
pytest itself has imported threading already, which gevent tolerates for the main thread.
"""
from gevent import monkey

monkey.patch_all()

import pykka  # noqa: E402
import pytest  # noqa: E402

from tests.tiers import mark  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true",
                     help="the reliability suite's long mode: many more fuzzed requests, frames and cycles")


def pytest_collection_modifyitems(items):
    # peers / vite / browser, from the fixtures each test uses and its folder (tests/tiers.py)
    for item in items:
        mark(item)


@pytest.fixture(scope="session")
def long_mode(request) -> bool:
    return bool(request.config.getoption("--long"))


@pytest.fixture(autouse=True, scope="session")
def _stop_every_actor():
    # Safety net in the spirit of pykka's own tests: whatever a test forgets, stops here.
    yield
    pykka.ActorRegistry.stop_all(timeout=10)

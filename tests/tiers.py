"""Which tests leave the fast tier, and how they get their markers.

A test needs something the fast tier does not install when it drives the real CLIs (``peers``),
the pinned Vite (``vite``) or Chromium (``browser``). The markers come from what a test uses, so
a new test gets them without anyone remembering to write them:

- a fixture that reaches one of these is decorated with ``@needs("peers")`` (or "vite"); every
  test using it, however indirectly (``daemon`` → ``daemon_env``), carries the marker;
- every test under tests/browser/ carries ``browser``;
- a test that reaches a CLI in its own body (not through a fixture) is marked by hand, with
  ``@pytest.mark.peers`` or ``@needs("peers")`` on the test itself.

``install`` (tests/integration/test_install.py, by hand) marks a test that pip-installs the
checkout into a fresh venv. ``bash tests/run.sh --fast`` deselects all four (setup.cfg registers
them).
"""
from __future__ import annotations

from pathlib import Path

import pytest

BROWSER_TESTS = Path(__file__).resolve().parent / "browser"
_ATTRIBUTE = "devhost_needs"


def needs(*markers: str):
    """Decorates a fixture function (under ``@pytest.fixture``) that needs ``markers``' tools."""
    def decorate(function):
        setattr(function, _ATTRIBUTE, (*getattr(function, _ATTRIBUTE, ()), *markers))
        return function
    return decorate


def mark(item: pytest.Item) -> None:
    """Adds to ``item`` the markers of the fixtures it uses and of the folder it is in."""
    found = set()
    # The closure of every fixture the test uses, as pytest resolved it: the last definition of a
    # name is the one in force (a module's ``stack`` over the conftest's), and the one it
    # overrides is used too when it asks for its own name (``def daemon_env(daemon_env)``).
    info = getattr(item, "_fixtureinfo", None)
    for name, definitions in (info.name2fixturedefs.items() if info else ()):
        for definition in reversed(definitions):
            found.update(getattr(definition.func, _ATTRIBUTE, ()))
            if name not in definition.argnames:
                break
    # ``@needs`` on a test itself (one that starts a CLI in its own body) counts the same.
    found.update(getattr(getattr(item, "function", None), _ATTRIBUTE, ()))
    if BROWSER_TESTS in Path(item.path).parents:
        found.add("browser")
    for name in sorted(found - {marker.name for marker in item.iter_markers()}):
        item.add_marker(name)

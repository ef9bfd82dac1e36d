#!/usr/bin/env bash
# Installs everything the tests need (Python packages, the pinned real CLIs, Chromium and
# Playwright for the browser tests) and runs the suite.
# Extra arguments go to pytest, e.g. `bash tests/run.sh -k approval -x`.
#
# `bash tests/run.sh --fast [pytest arguments]`: the fast tier, every test that needs neither the
# real CLIs, Vite, a browser nor a package install into a fresh venv (markers peers, vite,
# browser, install: tests/tiers.py). It installs only
# the Python packages. tests/browser/ is not even collected: its conftest imports Playwright,
# which the fast tier does not install, and every test there is a browser test anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
if [ "${1:-}" = "--fast" ]; then
  shift
  exec python3 -m pytest -m "not peers and not vite and not browser and not install" --ignore=tests/browser "$@"
fi
bash tests/peers.sh
# Browser tests: Debian's Chromium, driven by Playwright for Python (which downloads no browser
# of its own: the tests give it /usr/bin/chromium).
if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
python3 -c "import playwright" 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check playwright
exec python3 -m pytest "$@"

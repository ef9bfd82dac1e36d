#!/usr/bin/env bash
# Installs everything the tests need (Python packages, the pinned real CLIs) and runs the suite.
# Extra arguments go to pytest, e.g. `bash tests/run.sh -k approval -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
bash tests/peers.sh
exec python3 -m pytest "$@"

#!/usr/bin/env bash
# Installs everything the tests need (Python packages, the pinned real CLIs) and runs the suite.
# Extra arguments go to pytest, e.g. `bash tests/run.sh -k approval -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
bash tests/peers.sh
# gevent's monitor reports any greenlet that holds the hub for more than half a second;
# the daemons under test inherit these and log such reports as bugs.
export GEVENT_MONITOR_THREAD_ENABLE=true GEVENT_MAX_BLOCKING_TIME=0.5
exec python3 -m pytest "$@"

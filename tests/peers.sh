#!/usr/bin/env bash
# Installs the real CLIs the tests drive, the dev server they proxy (Vite) and axe-core (the
# browser tests' accessibility checks), at the pinned versions, into .peers/ of the checkout.
# The tests put .peers/node_modules/.bin first on the daemon's PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
VITE_VERSION=8.4.0  # the dev server behind the proxy in the browser tests
AXE_VERSION=4.14.1  # axe-core, the accessibility checks the browser tests inject into the panel
bin=.peers/node_modules/.bin
if [ -x "$bin/claude" ] && [ -x "$bin/codex" ] && [ -x "$bin/vite" ] \
   && "$bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_VERSION " \
   && "$bin/codex" --version 2>/dev/null | grep -q " $CODEX_VERSION$" \
   && "$bin/vite" --version 2>/dev/null | grep -q "^vite/$VITE_VERSION " \
   && grep -q "\"version\": \"$AXE_VERSION\"" .peers/node_modules/axe-core/package.json 2>/dev/null; then
  exit 0
fi
mkdir -p .peers
# --no-package-lock: the pins above are the whole record; nothing else to keep in git.
npm install --prefix .peers --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "vite@$VITE_VERSION" \
  "axe-core@$AXE_VERSION"
"$bin/claude" --version
"$bin/codex" --version
"$bin/vite" --version
echo "axe-core $(node -p "require(\"./.peers/node_modules/axe-core/package.json\").version")"

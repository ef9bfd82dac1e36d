#!/usr/bin/env bash
# Installs the real CLIs the tests drive (Claude Code, Codex, and OpenCode and Gemini CLI as ACP
# agents), the dev server they proxy (Vite), the frameworks the Vite test apps are built with
# (tests/vite_apps.py) and axe-core (the browser tests' accessibility checks), at the pinned
# versions, into .peers/ of the checkout.
# The tests put .peers/node_modules/.bin first on the daemon's PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
OPENCODE_VERSION=1.18.33  # opencode-ai, the ACP agent (`opencode acp`) of the ACP harness's tests
GEMINI_VERSION=0.61.0  # @google/gemini-cli, the second ACP agent (`gemini --acp`, tests/actors/test_acp_gemini.py)
VITE_VERSION=8.4.0  # the dev server behind the proxy in the browser tests
AXE_VERSION=4.14.1  # axe-core, the accessibility checks the browser tests inject into the panel
# The frameworks of the Vite test apps (tests/vite_apps.py), each with its Vite plugin.
REACT_VERSION=19.2.9  # react and react-dom
REACT18_VERSION=18.3.1  # react18 and react-dom18: npm aliases, the React 18 app's resolve.alias
PLUGIN_REACT_VERSION=6.3.0  # @vitejs/plugin-react (its peers besides Vite are optional)
VUE_VERSION=3.5.45
PLUGIN_VUE_VERSION=6.0.11  # @vitejs/plugin-vue
SVELTE_VERSION=5.57.3
PLUGIN_SVELTE_VERSION=7.3.1  # @sveltejs/vite-plugin-svelte
bin=.peers/node_modules/.bin
# 0 when .peers/node_modules/<package> is at <version>.
installed() { grep -q "\"version\": \"$2\"" ".peers/node_modules/$1/package.json" 2>/dev/null; }
if [ -x "$bin/claude" ] && [ -x "$bin/codex" ] && [ -x "$bin/vite" ] \
   && "$bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_VERSION " \
   && "$bin/codex" --version 2>/dev/null | grep -q " $CODEX_VERSION$" \
   && [ -x "$bin/opencode" ] && "$bin/opencode" --version 2>/dev/null | grep -q "^$OPENCODE_VERSION$" \
   && [ -x "$bin/gemini" ] && "$bin/gemini" --version 2>/dev/null | grep -q "^$GEMINI_VERSION$" \
   && "$bin/vite" --version 2>/dev/null | grep -q "^vite/$VITE_VERSION " \
   && installed axe-core "$AXE_VERSION" \
   && installed react "$REACT_VERSION" && installed react-dom "$REACT_VERSION" \
   && installed react18 "$REACT18_VERSION" && installed react-dom18 "$REACT18_VERSION" \
   && installed @vitejs/plugin-react "$PLUGIN_REACT_VERSION" \
   && installed vue "$VUE_VERSION" && installed @vitejs/plugin-vue "$PLUGIN_VUE_VERSION" \
   && installed svelte "$SVELTE_VERSION" && installed @sveltejs/vite-plugin-svelte "$PLUGIN_SVELTE_VERSION"; then
  exit 0
fi
mkdir -p .peers
# --no-package-lock: the pins above are the whole record; nothing else to keep in git.
# --legacy-peer-deps: react-dom18 names react@18 as its peer, which npm cannot place beside
# react@19 (both want node_modules/react); the React 18 app's resolve.alias gives it react18.
npm install --prefix .peers --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  --legacy-peer-deps \
  "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "opencode-ai@$OPENCODE_VERSION" \
  "@google/gemini-cli@$GEMINI_VERSION" \
  "vite@$VITE_VERSION" \
  "axe-core@$AXE_VERSION" \
  "react@$REACT_VERSION" "react-dom@$REACT_VERSION" \
  "react18@npm:react@$REACT18_VERSION" "react-dom18@npm:react-dom@$REACT18_VERSION" \
  "@vitejs/plugin-react@$PLUGIN_REACT_VERSION" "vue@$VUE_VERSION" "@vitejs/plugin-vue@$PLUGIN_VUE_VERSION" \
  "svelte@$SVELTE_VERSION" "@sveltejs/vite-plugin-svelte@$PLUGIN_SVELTE_VERSION"
"$bin/claude" --version
"$bin/codex" --version
echo "opencode $("$bin/opencode" --version)"
echo "gemini $("$bin/gemini" --version)"
"$bin/vite" --version
echo "axe-core $(node -p "require(\"./.peers/node_modules/axe-core/package.json\").version")"
for package in react react18 @vitejs/plugin-react vue @vitejs/plugin-vue svelte @sveltejs/vite-plugin-svelte; do
  echo "$package $(node -p "require(\"./.peers/node_modules/$package/package.json\").version")"
done

#!/usr/bin/env bash
# Refreshes the panel's vendored libraries in web/static/chat/vendor/ from npm, at the pinned
# versions below: the ES-module builds the panel imports as they are (it has no build step),
# with their licences. Run it after changing a version, then run the browser tests.
#   marked        Markdown -> HTML (GitHub-flavoured: tables, fenced code, task lists)
#   dompurify     sanitizes that HTML: the panel lives inside the person's page, so nothing a
#                 model or a tool writes may run there
#   highlight.js  syntax highlighting of code blocks (the common languages), with its GitHub
#                 themes: the light one and the dark one (the panel loads the one it shows)
#   diff          line diffs of the files an agent edits (jsdiff: its line diff and what it imports)
set -euo pipefail
MARKED=18.2.1
DOMPURIFY=3.5.0
HIGHLIGHT=11.12.0
DIFF=9.0.0
here="$(cd "$(dirname "$0")" && pwd)"
vendor="$here/static/chat/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm install --prefix "$work" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "marked@$MARKED" "dompurify@$DOMPURIFY" "@highlightjs/cdn-assets@$HIGHLIGHT" "diff@$DIFF"
modules="$work/node_modules"
rm -rf "$vendor" && mkdir -p "$vendor"
cp "$modules/marked/lib/marked.esm.js" "$vendor/marked.esm.js"
cp "$modules/marked/LICENSE" "$vendor/LICENSE.marked"
cp "$modules/dompurify/dist/purify.es.mjs" "$vendor/purify.es.mjs"
cp "$modules/dompurify/LICENSE" "$vendor/LICENSE.dompurify"
cp "$modules/@highlightjs/cdn-assets/es/highlight.min.js" "$vendor/highlight.min.js"
cp "$modules/@highlightjs/cdn-assets/styles/github.min.css" "$vendor/highlight-github.min.css"
cp "$modules/@highlightjs/cdn-assets/styles/github-dark.min.css" "$vendor/highlight-github-dark.min.css"
cp "$modules/@highlightjs/cdn-assets/LICENSE" "$vendor/LICENSE.highlight"
mkdir -p "$vendor/diff/diff" "$vendor/diff/util"
for file in diff/base.js diff/line.js util/params.js; do cp "$modules/diff/libesm/$file" "$vendor/diff/$file"; done
cp "$modules/diff/LICENSE" "$vendor/LICENSE.diff"
# Source-map comments point at files that are not vendored: dropped, so no browser asks for them.
sed -i -e '/^\/\/# sourceMappingURL=/d' "$vendor"/*.js "$vendor"/*.mjs "$vendor"/diff/*/*.js
cat > "$vendor/VERSIONS" <<VERSIONS
marked $MARKED (MIT)
dompurify $DOMPURIFY (MPL-2.0 OR Apache-2.0)
@highlightjs/cdn-assets $HIGHLIGHT (BSD-3-Clause)
diff $DIFF (BSD-3-Clause)
VERSIONS
echo "vendored into $vendor:"
cat "$vendor/VERSIONS"

#!/usr/bin/env bash
# Builds the Node package in place: the pinned dev tools (npm ci, with the committed
# package-lock.json, when package.json or the lock changed), then the native module
# (`napi build --platform --release`, into the workspace's target/; quick when nothing changed).
#
#   bash bindings-node/scripts/build.sh          # dev tools + native module
#   bash bindings-node/scripts/build.sh --deps   # only the dev tools
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
stamp="$here/node_modules/.mcpaxle-lock.sha256"
want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== node: npm ci (pinned dev tools)"
  # The package's install script would build the native module: done below instead.
  (cd "$here" && MCPAXLE_NODE_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
if [ "${1:-}" = "--deps" ]; then
  exit 0
fi
echo "== node: build (napi build --platform --release)"
(cd "$here" && npm run --silent build)

#!/usr/bin/env bash
# Builds the Node package in place: the pinned dev tools (npm ci, with the committed
# package-lock.json, when package.json or the lock changed), then the native module
# (`napi build --platform --release`, into the workspace's target/ and the build the other
# bindings share, scripts/cargo-host.sh; quick when nothing changed).
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
# The napi CLI writes the module and the generated native.js / native.d.ts into target/napi-out/;
# only the module is copied into the package: the committed native.js and native.d.ts are
# compared with the generated ones by scripts/check-dts.mjs (`--fix` copies them), so that a
# build never rewrites them behind the drift check's back.
echo "== node: build (napi build --platform --release, into target/napi-out/)"
out="$(cd "$here/.." && pwd)/target/napi-out"
rm -rf "$out"
# The code a server runs laid out together (build.rs, packaging/symbol_order.py).
source "$here/../packaging/symbol-order-env.sh"
symbol_order_env "$(cd "$here/.." && pwd)"
(cd "$here" && CARGO="$here/scripts/cargo-host.sh" node node_modules/@napi-rs/cli/dist/cli.js build \
  --platform --release --output-dir "$out" --js native.js --dts native.d.ts)
cp "$out"/*.node "$here/"

#!/usr/bin/env bash
# Tests the Node package: install the pinned dev tools (npm ci, with the committed
# package-lock.json), check the committed type declarations (which also builds the native module,
# release, into the workspace's target/), build it into the package directory, run the node:test
# suite, then the official conformance suite: its server scenarios of both revisions against one
# process of examples/everything_server.mjs (tests/conformance/server_both_eras.sh; serving with
# serveHttp, then mounted in Express, then as a fetch handler), and every
# scored client scenario, both revisions, with examples/everything_client.mjs
# (tests/conformance/client_all.sh).
#
#   bash bindings-node/scripts/test.sh
#   MCPAXLE_NODE_SKIP_CONFORMANCE=1 bash bindings-node/scripts/test.sh
#
# cargo builds into the workspace's target/ (the core is compiled once per profile); a run with
# nothing changed is quick.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

bash "$here/scripts/build.sh" --deps

echo "== node: the Rust servers the tests drive (the core's examples and the OAuth fixture)"
make -s -C "$root" test-servers CARGO="cargo --quiet"

# Build the native module into the package first: the drift check loads the package.
bash "$here/scripts/build.sh"

echo "== node: protocol.d.ts drift check (generated from spec/2026-07-28/schema.ts)"
(cd "$here" && node scripts/gen-protocol-types.mjs --check)

echo "== node: .d.ts drift check (native.d.ts and native.js against those of the build)"
(cd "$here" && node scripts/check-dts.mjs)

echo "== node: node --test"
(cd "$here" && npm test --silent)

if [ "${MCPAXLE_NODE_SKIP_CONFORMANCE:-}" != "1" ]; then
  echo "== node: conformance server (2026-07-28 and 2025-11-25 against one process, SSE polling included)"
  bash tests/conformance/server_both_eras.sh "node bindings-node/examples/everything_server.mjs --http 127.0.0.1:{port}" node --extra @extension
  echo "== node: conformance server, both revisions, mounted in Express (nodeHandler) and behind node:http (fetchHandler)"
  bash tests/conformance/server_both_eras.sh "node bindings-node/examples/everything_server.mjs --express 127.0.0.1:{port}" node-express
  bash tests/conformance/server_both_eras.sh "node bindings-node/examples/everything_server.mjs --fetch 127.0.0.1:{port}" node-fetch
  echo "== node: conformance client, every scored scenario of both revisions (authorization included)"
  bash tests/conformance/client_all.sh "node bindings-node/examples/everything_client.mjs" node
  echo "== node: conformance client, 2025-11-25, era detected by the client (MCPAXLE_AUTO_ERA=1)"
  MCPAXLE_AUTO_ERA=1 python3 tests/conformance/run.py client --requirements 2025-11-25 \
    --cmd "node bindings-node/examples/everything_client.mjs"
fi
echo "node: all passed"

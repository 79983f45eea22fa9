#!/usr/bin/env bash
# Tests the Python package: venv with the pinned dev tools, the extension built into the
# workspace's target/ and installed into the venv, the stub and types.py drift checks, mypy
# --strict on a typed client example, the pytest suite (the client tests drive the Rust
# everything_server example and the OAuth tests the Rust oauth_server fixture, both built
# here by `make test-servers`, in debug: a test whose binary is missing fails), the demo against the
# Python notes server, and the official conformance suite (both protocol eras against one
# server process, and every scored client scenario of both revisions, authorization included,
# against examples/everything_client.py).
#
#   bash bindings-python/scripts/test.sh            # everything
#   MCPAXLE_PY_SKIP_CONFORMANCE=1 bash bindings-python/scripts/test.sh
#
# The venv and the build are scripts/develop.sh's: bindings-python/.venv (PYTHON picks the
# interpreter, default python3) with the release wheel installed, built by `maturin build
# --release` into the workspace's target/ (packaging/python/build.sh: the wheel `make dist` ships).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
venv="$here/.venv"
py="$venv/bin/python"
cd "$root"

bash "$here/scripts/develop.sh"

echo "== python: stub drift check (mypy's stubtest of mcpaxle._native against _native.pyi)"
# Run from target/stubtest so that mypy's cache stays out of the work tree.
mkdir -p "$root/target/stubtest"
(cd "$root/target/stubtest" && "$py" -m mypy.stubtest mcpaxle._native --allowlist "$here/scripts/stubtest-allowlist.txt")

echo "== python: types.py drift check (generated from spec/2026-07-28/schema.json)"
"$py" "$here/scripts/gen_types.py" --check

echo "== python: mypy --strict on a client using the typed results (examples/typed_client.py)"
"$py" -m mypy --strict --cache-dir=/dev/null "$here/examples/typed_client.py"

echo "== python: building the Rust servers the tests drive (the core's examples, the OAuth fixture)"
make -s -C "$root" test-servers CARGO="cargo --quiet"

echo "== python: pytest"
"$py" -m pytest "$here/tests" -q -p no:cacheprovider

echo "== python: the demo (scripts/demo.py) against examples/notes_server.py"
bash scripts/demo-check.sh "$py $here/examples/notes_server.py"

if [ "${MCPAXLE_PY_SKIP_CONFORMANCE:-}" != "1" ]; then
  echo "== python: conformance (2026-07-28 with the tasks-* scenarios, and 2025-11-25, against one process)"
  tests/conformance/server_both_eras.sh "$py $here/examples/everything_server.py --http 127.0.0.1:{port}" python --extra @extension
  echo "== python: conformance client scenarios (every scored one, authorization included, both eras)"
  tests/conformance/client_all.sh "$py $here/examples/everything_client.py" python
fi
echo "python: all passed"

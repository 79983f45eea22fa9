#!/usr/bin/env bash
# Runs the pinned cbindgen, installing it first (once) into target/tools with `cargo install
# --locked`, so every machine generates include/mcpaxle.h with the same generator.
# It is built unoptimized (`--debug`): on two cores that builds in 34 s instead of 104 s (a clean
# clone's `make test` pays it once), and it still writes the header in half a second (0.49 s,
# against 0.37 s optimized), byte for byte the same.
#   bindings-c/scripts/cbindgen.sh [cbindgen arguments...]
set -euo pipefail
CBINDGEN_VERSION=0.29.4
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="$root/target/tools"
bin="$tools/bin/cbindgen"
if [[ ! -x "$bin" ]] || [[ "$("$bin" --version 2>/dev/null)" != "cbindgen $CBINDGEN_VERSION" ]]; then
  echo "cbindgen.sh: installing cbindgen $CBINDGEN_VERSION into $tools" >&2
  CARGO_TARGET_DIR="$tools/build" ${CARGO:-cargo} install cbindgen --version "$CBINDGEN_VERSION" --locked --root "$tools" --debug --quiet >&2
fi
exec "$bin" "$@"

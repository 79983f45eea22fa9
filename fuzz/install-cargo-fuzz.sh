#!/usr/bin/env bash
# Installs cargo-fuzz, pinned, into target/tools of the repository (nothing global), once.
# Prints the path of the cargo-fuzz binary.
set -euo pipefail
VERSION=0.13.2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="$ROOT/target/tools"
BIN="$TOOLS/bin/cargo-fuzz"
if [[ ! -x "$BIN" ]] || [[ "$("$BIN" --version 2>/dev/null)" != "cargo-fuzz $VERSION" ]]; then
    echo "installing cargo-fuzz $VERSION into $TOOLS" >&2
    # --locked: the versions of cargo-fuzz's own lock file; its own target dir, so the
    # workspace's target/ is not touched beyond target/tools.
    CARGO_TARGET_DIR="$TOOLS/build" cargo install cargo-fuzz --version "=$VERSION" --locked --root "$TOOLS" >&2
    rm -rf "$TOOLS/build"
fi
echo "$BIN"

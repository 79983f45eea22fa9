#!/usr/bin/env bash
# The generated Kotlin and Swift sources of libmcpaxle_uniffi, from the library's own uniffi
# metadata by the pinned uniffi-bindgen (the library from `cargo build --release -p
# mcpaxle-uniffi`, the generator, unoptimized, from `cargo build -p mcpaxle-uniffi-bindgen`). They
# are committed:
#   bindings-uniffi/kotlin/src/main/kotlin/mcpaxle/ffi/mcpaxle_uniffi.kt
#   packaging/swift/Sources/McpaxleFFI/McpaxleFFI.swift, packaging/swift/include/ (header, modulemap)
#
#   bindings-uniffi/scripts/generate.sh          rewrite them
#   bindings-uniffi/scripts/generate.sh --check  fail (and show the diff) if they differ
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
lib=target/release/libmcpaxle_uniffi.so
bindgen=target/debug/uniffi-bindgen
[[ -e "$lib" ]] || { echo "generate.sh: $lib is missing: cargo build --release -p mcpaxle-uniffi" >&2; exit 1; }
[[ -e "$bindgen" ]] || { echo "generate.sh: $bindgen is missing: cargo build -p mcpaxle-uniffi-bindgen" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --no-format: the output must not depend on whether ktlint or swiftformat is installed.
"$bindgen" generate --library "$lib" --language kotlin --out-dir "$out/kotlin" --no-format >/dev/null
"$bindgen" generate --library "$lib" --language swift --out-dir "$out/swift" --no-format >/dev/null

declare -A files=(
  ["$out/kotlin/mcpaxle/ffi/mcpaxle_uniffi.kt"]=bindings-uniffi/kotlin/src/main/kotlin/mcpaxle/ffi/mcpaxle_uniffi.kt
  ["$out/swift/McpaxleFFI.swift"]=packaging/swift/Sources/McpaxleFFI/McpaxleFFI.swift
  ["$out/swift/mcpaxle_uniffiFFI.h"]=packaging/swift/include/mcpaxle_uniffiFFI.h
  ["$out/swift/mcpaxle_uniffiFFI.modulemap"]=packaging/swift/include/module.modulemap
)
status=0
for generated in "${!files[@]}"; do
  committed="${files[$generated]}"
  if [[ "${1:-}" == "--check" ]]; then
    if ! diff -u "$committed" "$generated"; then
      echo "generate.sh: $committed is not what uniffi-bindgen generates: run bindings-uniffi/scripts/generate.sh and commit it" >&2
      status=1
    fi
  else
    mkdir -p "$(dirname "$committed")"
    cp "$generated" "$committed"
  fi
done
[[ "${1:-}" == "--check" && $status == 0 ]] && echo "generate.sh: the Kotlin and Swift sources match the library"
exit $status

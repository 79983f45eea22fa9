#!/usr/bin/env bash
# Builds build/mcpaxle_uniffiFFI.xcframework for Package.swift: libmcpaxle_uniffi as a static
# library for iOS (device, simulator on arm64 and x86_64) and macOS (arm64, x86_64), each with the
# generated header and module map. Runs on macOS with Xcode and rustup (the release workflow);
# it is not run by `make test`, which only checks that the generated Swift is current.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
targets=(aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin)
rustup target add "${targets[@]}"
for t in "${targets[@]}"; do
  # A static library here only (the crate is a cdylib for the JVM).
  cargo rustc --manifest-path "$root/Cargo.toml" --release -p mcpaxle-uniffi --lib --target "$t" --crate-type staticlib
done
out="$here/build"
rm -rf "$out" && mkdir -p "$out/headers" "$out/ios-sim" "$out/macos"
cp "$here/include/mcpaxle_uniffiFFI.h" "$here/include/module.modulemap" "$out/headers/"
lib() { echo "$root/target/$1/release/libmcpaxle_uniffi.a"; }
lipo -create "$(lib aarch64-apple-ios-sim)" "$(lib x86_64-apple-ios)" -output "$out/ios-sim/libmcpaxle_uniffi.a"
lipo -create "$(lib aarch64-apple-darwin)" "$(lib x86_64-apple-darwin)" -output "$out/macos/libmcpaxle_uniffi.a"
xcodebuild -create-xcframework \
  -library "$(lib aarch64-apple-ios)" -headers "$out/headers" \
  -library "$out/ios-sim/libmcpaxle_uniffi.a" -headers "$out/headers" \
  -library "$out/macos/libmcpaxle_uniffi.a" -headers "$out/headers" \
  -output "$out/mcpaxle_uniffiFFI.xcframework"
echo "build-xcframework.sh: $out/mcpaxle_uniffiFFI.xcframework"

#!/usr/bin/env bash
# The Python artifacts under dist/: the abi3 wheel (CPython >= 3.10, manylinux2014 x86_64) and
# the sdist. The wheel is `maturin build --release` in the workspace's target/, the same cargo
# build as the rest of `make test` (bindings-python/scripts/develop.sh installs this wheel into
# the dev venv, so the tests test it): only the extension's own crate gets one extra rustc
# argument, zig's cc as its linker (packaging/python/zig-cc.sh, glibc 2.17 symbol versions), so
# no dependency is built twice; it lays out the code a server runs together
# (MCPAXLE_SYMBOL_ORDER, packaging/symbol_order.py). auditwheel then confirms the manylinux tag.
#
#   bash packaging/python/build.sh        # needs bindings-python/.venv (scripts/develop.sh makes it)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/bindings-python"
venv="$here/.venv"
dist="$root/dist"
version="$(python3 "$root/packaging/check_versions.py")"
policy=manylinux_2_17_x86_64

mkdir -p "$dist"
rm -f "$dist"/mcpaxle-*.whl "$dist/mcpaxle-$version.tar.gz"
echo "== python: wheel (maturin build --release, linked by zig against glibc 2.17)"
source "$root/packaging/symbol-order-env.sh"
symbol_order_env "$root"
(cd "$here" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --release --quiet \
  --compatibility manylinux2014 --out "$dist" -- -C "linker=$root/packaging/python/zig-cc.sh")
wheel="$(ls "$dist"/mcpaxle-"$version"-cp310-abi3-*.whl)"
if ! "$venv/bin/auditwheel" show "$wheel" | tr -d '\n' | grep -q "consistent with the following platform tag:.*\"$policy\""; then
  "$venv/bin/auditwheel" show "$wheel" >&2
  echo "packaging/python/build.sh: $wheel is not $policy" >&2
  exit 1
fi
echo "== python: sdist (maturin sdist: the crate, the core and Cargo.lock, for pip to build from source)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
(cd "$here" && "$venv/bin/maturin" sdist --out "$dist" >"$tmp/sdist.log" 2>&1) || { cat "$tmp/sdist.log" >&2; exit 1; }
sdist="$dist/mcpaxle-$version.tar.gz"
# The sdist must resolve as a cargo workspace of its own, offline (its lock file is the
# workspace's, less the members it leaves out).
tar -xzf "$sdist" -C "$tmp"
for f in LICENSE pyproject.toml python/mcpaxle/CHANGELOG.md; do
  [ -f "$tmp/mcpaxle-$version/$f" ] || { echo "packaging/python/build.sh: $f missing from $sdist" >&2; exit 1; }
done
cargo metadata --offline --quiet --format-version 1 --manifest-path "$tmp/mcpaxle-$version/$(sed -n 's/^manifest-path *= *"\(.*\)"/\1/p' "$tmp/mcpaxle-$version/pyproject.toml")" >/dev/null
echo "python: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB), $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB)"

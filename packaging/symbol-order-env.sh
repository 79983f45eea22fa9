# Sourced by the release build scripts (bindings-c/build.sh, bindings-node/scripts/build.sh,
# packaging/python/build.sh): exports MCPAXLE_SYMBOL_ORDER, the file the bindings' build.rs link
# with (packaging/symbol_order.py says why), where it applies: building for
# x86_64-unknown-linux-gnu, whose functions it names, with a rustc (>= 1.90) that links that
# target with lld (`--symbol-ordering-file`). Elsewhere the libraries link as they would without.
symbol_order_env() { # $1: the repository's root
  local host minor
  host="$("${RUSTC:-rustc}" -vV | sed -n 's/^host: //p')"
  minor="$("${RUSTC:-rustc}" --version | sed -n 's/^rustc 1\.\([0-9]*\)\..*/\1/p')"
  if [ "$host" = x86_64-unknown-linux-gnu ] && [ -n "$minor" ] && [ "$minor" -ge 90 ]; then
    export MCPAXLE_SYMBOL_ORDER="$1/packaging/symbol-order.txt"
  fi
}

#!/usr/bin/env bash
# The cargo `napi build` runs in this repository (bindings-node/scripts/build.sh sets CARGO to
# this file): the same command without `--target <this machine's triple>`.
#
# The napi CLI always passes --target, and cargo builds an explicit target in target/<triple>/,
# a second build of every crate beside target/release/, where the C, Python and Kotlin
# libraries share one build of the core (eight minutes more on two cores).
# Built for the host, the Node module is one more crate on that shared build; its library is
# then linked where the napi CLI looks for it (target/<triple>/<profile>/). A --target naming
# another machine is passed through untouched (the release workflow cross-builds that way).
set -euo pipefail
unset CARGO
host="$(rustc -vV | sed -n 's/^host: //p')"
args=()
dropped=""
while (($#)); do
  if [[ "$1" == "--target" && "${2:-}" == "$host" ]]; then
    dropped="$2"
    shift 2
    continue
  fi
  args+=("$1")
  shift
done
profile=dev
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --release) profile=release ;;
    --profile) profile="${args[$((i + 1))]}" ;;
  esac
done
# The napi CLI sets NAPI_FORCE_BUILD_MCPAXLE_NODE=<now> when its type-definition cache
# (target/napi-rs/) lacks the crate, so that the macros run again and write the definitions, and
# leaves it unset otherwise. napi-build reruns on any change of that variable, unset included:
# the build after a forced one compiled the module again with nothing changed (two and a half
# minutes on two cores, paid by every `make test` on a clean clone). The same force is had by
# cleaning the one crate, and cargo never sees the variable.
if [[ -n "${NAPI_FORCE_BUILD_MCPAXLE_NODE:-}" ]]; then
  unset NAPI_FORCE_BUILD_MCPAXLE_NODE
  cargo clean --quiet -p mcpaxle-node --profile "$profile"
fi
cargo "${args[@]}"
[[ -n "$dropped" ]] || exit 0
# The profile's directory: target/debug for dev.
[[ "$profile" == dev ]] && profile=debug
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p "$target_dir/$dropped/$profile"
for lib in libmcpaxle_node.so libmcpaxle_node.dylib; do
  if [[ -e "$target_dir/$profile/$lib" ]]; then
    ln -f "$target_dir/$profile/$lib" "$target_dir/$dropped/$profile/$lib"
  fi
done

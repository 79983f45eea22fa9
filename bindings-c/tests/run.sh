#!/usr/bin/env bash
# Builds the C tests against the installed prefix (target/c-prefix, from bindings-c/build.sh)
# and runs each under valgrind: any memory error or definite/indirect leak fails the run.
# The tokio runtime keeps some "still reachable" memory for the life of the process by design.
# The client tests authorize against the Rust OAuth fixture (fixtures/src/oauth_server.rs, the
# crate mcpaxle-fixtures), built here (`make test-servers`, debug) unless MCPAXLE_OAUTH_SERVER already names one;
# test_oidc.c runs oidc-provider (tests/oidc/provider.mjs, or MCPAXLE_OIDC_PROVIDER) with node.
# test_telemetry.c exports to the test collector (tests/otel/collector.py, or
# MCPAXLE_OTEL_COLLECTOR) run with MCPAXLE_OTEL_PYTHON, the python of the venv tests/otel/setup.sh
# makes (or reuses).
# Prints "mcpaxle-c: N passed, N failed" (tests of all programs summed) last.
# valgrind is required: without it the run fails, unless the one opt-out is set:
#   MCPAXLE_NO_VALGRIND=1 bindings-c/tests/run.sh   runs them without valgrind
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$root/target/c-prefix"
out="$root/target/c-tests"
CC="${CC:-cc}"
mkdir -p "$out"
flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs mcpaxle)" || exit 2
if [[ -z "${MCPAXLE_OAUTH_SERVER:-}" ]]; then
  make -s -C "$root" test-servers CARGO="${CARGO:-cargo} --quiet" || exit 2
  export MCPAXLE_OAUTH_SERVER="$root/target/debug/oauth_server"
fi
# test_oidc.c runs oidc-provider (pinned in tests/oidc) with node: installed there on first use.
if [[ -z "${MCPAXLE_OIDC_PROVIDER:-}" ]]; then
  if [[ ! -d "$root/tests/oidc/node_modules/oidc-provider" ]]; then
    (cd "$root/tests/oidc" && npm ci --no-audit --no-fund --silent) || { echo "run.sh: npm ci in tests/oidc failed" >&2; exit 2; }
  fi
  export MCPAXLE_OIDC_PROVIDER="$root/tests/oidc/provider.mjs"
fi
# test_telemetry.c runs the OTLP test collector (tests/otel) with the python of its venv.
if [[ -z "${MCPAXLE_OTEL_PYTHON:-}" ]]; then
  MCPAXLE_OTEL_PYTHON="$(bash "$root/tests/otel/setup.sh")" || { echo "run.sh: tests/otel/setup.sh failed" >&2; exit 2; }
  export MCPAXLE_OTEL_PYTHON
fi
export MCPAXLE_OTEL_COLLECTOR="${MCPAXLE_OTEL_COLLECTOR:-$root/tests/otel/collector.py}"
valgrind=(valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
  --show-leak-kinds=definite,indirect --child-silent-after-fork=yes --trace-children=no
  --suppressions="$here/valgrind.supp" --num-callers=30)
if [[ "${MCPAXLE_NO_VALGRIND:-}" == 1 ]]; then
  echo "run.sh: MCPAXLE_NO_VALGRIND=1: running without valgrind (memory errors and leaks go unseen)" >&2
  valgrind=()
elif ! command -v valgrind >/dev/null; then
  echo "run.sh: valgrind is required for the C tests and was not found: install it (apt-get install valgrind)," >&2
  echo "        or set MCPAXLE_NO_VALGRIND=1 to run them without it on a machine that cannot have it" >&2
  exit 2
fi
total_pass=0 total_fail=0 status=0
for src in "$here"/test_*.c; do
  name="$(basename "$src" .c)"
  bin="$out/$name"
  # shellcheck disable=SC2086
  if ! "$CC" -std=c11 -D_GNU_SOURCE -g -O0 -Wall -Wextra -Werror -pthread "$src" $flags -lm -o "$bin"; then
    echo "run.sh: $name does not compile" >&2
    total_fail=$((total_fail + 1)); status=1; continue
  fi
  echo "== $name${valgrind:+ (under valgrind)}"
  log="$out/$name.log"
  "${valgrind[@]}" "$bin" 2> >(tee "$log" >&2) | tee "$out/$name.out"
  rc=${PIPESTATUS[0]}
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/$name.out" | tail -n1)"
  if [[ -z "$line" ]]; then
    echo "run.sh: $name printed no summary (exit $rc)" >&2
    total_fail=$((total_fail + 1)); status=1; continue
  fi
  p="${line%% passed*}"; f="${line#*passed, }"; f="${f%% failed}"
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
  if [[ $rc -eq 99 ]]; then
    echo "run.sh: valgrind found memory errors or leaks in $name (see $log)" >&2
    total_fail=$((total_fail + 1)); status=1
  elif [[ $rc -ne 0 ]]; then
    status=1
  fi
done
echo "mcpaxle-c: $total_pass passed, $total_fail failed"
exit $status

#!/usr/bin/env bash
# Runs every fuzz target (or those named) for FUZZ_SECONDS each, one after the other, one
# process each (the machine is shared), then prints executions and crashes per target.
#
#   fuzz/run.sh [TARGET...]        FUZZ_SECONDS=60 (per target)  FUZZ_SANITIZER=address|none
#
# Toolchain: rustup's nightly when installed, else the stable one with RUSTC_BOOTSTRAP=1
# (cargo-fuzz passes -Z flags). cargo-fuzz is installed pinned into target/tools on first use.
# Inputs found go to fuzz/target/corpus/TARGET (kept between runs, not committed); the
# committed seeds in fuzz/corpus/TARGET are read, never written. A crash leaves its input in
# fuzz/artifacts/TARGET/ and makes the script exit 1.
set -uo pipefail
FUZZ="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$FUZZ")"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
SANITIZER="${FUZZ_SANITIZER:-address}"
ALL=(jsonrpc_envelope mcp_param uri_template sse input_schema)
TARGETS=("${@:-${ALL[@]}}")
[[ $# -gt 0 ]] || TARGETS=("${ALL[@]}")

CARGO_FUZZ="$(bash "$FUZZ/install-cargo-fuzz.sh")" || exit 1
export PATH="$(dirname "$CARGO_FUZZ"):$PATH"
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    TOOLCHAIN=(+nightly)
    echo "fuzz: rustup's nightly ($(rustup run nightly rustc --version))"
else
    TOOLCHAIN=()
    export RUSTC_BOOTSTRAP=1
    echo "fuzz: no nightly toolchain: stable with RUSTC_BOOTSTRAP=1 ($(rustc --version))"
fi

cd "$FUZZ"
echo "fuzz: building (sanitizer: $SANITIZER)"
cargo "${TOOLCHAIN[@]}" fuzz build --sanitizer "$SANITIZER" || exit 1

declare -a ROWS
total_s=0
total_execs=0
status=0
for t in "${TARGETS[@]}"; do
    work="$FUZZ/target/corpus/$t"
    log="$FUZZ/target/logs/$t.log"
    mkdir -p "$work" "$(dirname "$log")" "$FUZZ/artifacts/$t"
    dict=()
    [[ -f "$FUZZ/dicts/$t.dict" ]] && dict=("-dict=$FUZZ/dicts/$t.dict")
    echo "fuzz: $t for ${SECONDS_EACH}s (log: ${log#$ROOT/})"
    stamp="$FUZZ/target/logs/$t.start"
    touch "$stamp"
    start=$(date +%s)
    cargo "${TOOLCHAIN[@]}" fuzz run --sanitizer "$SANITIZER" "$t" "$work" "$FUZZ/corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    # libFuzzer's own figure leaves out a rebuild by cargo fuzz run; a crash prints none.
    fuzzed="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)"
    took="${fuzzed:-$took}"
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
    units="$(find "$work" -type f | wc -l)"
    crashes="$(find "$FUZZ/artifacts/$t" -type f -newer "$stamp" | wc -l)"
    if [[ $rc -ne 0 ]]; then
        status=1
        grep -m1 -E 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer' "$log" | sed "s/^/fuzz: $t: /"
    fi
    total_s=$(( total_s + took )); total_execs=$(( total_execs + ${execs:-0} ))
    ROWS+=("$(printf '%-18s %8ss %12s %10s %8s %8s  %s' "$t" "$took" "${execs:-?}" "${rate:-?}" "$units" "$crashes" "$([[ $rc -eq 0 ]] && echo ok || echo "FAILED (exit $rc)")")")
done

printf '\n%-18s %9s %12s %10s %8s %8s  %s\n' target time executions "execs/s" corpus crashes result
printf '%s\n' "${ROWS[@]}"
printf '%-18s %8ss %12s\n' total "$total_s" "$total_execs"
[[ $status -eq 0 ]] || echo "fuzz: a target failed; its input is under fuzz/artifacts/ (replay: cargo fuzz run TARGET ARTIFACT, with target/tools/bin on PATH)"
exit $status

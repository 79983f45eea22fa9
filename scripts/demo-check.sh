#!/usr/bin/env bash
# Runs scripts/demo.py as a test: its transcript is printed only when it fails.
#
#   scripts/demo-check.sh                 # the Rust notes server (target/release/examples)
#   scripts/demo-check.sh "CMD"           # another server command (see demo.py --server)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
args=()
[ $# -gt 0 ] && args=(--server "$1")
if python3 "$root/scripts/demo.py" "${args[@]}" >"$log" 2>&1; then
  head -1 "$log"
  tail -1 "$log"
else
  cat "$log"
  exit 1
fi

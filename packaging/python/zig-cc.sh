#!/usr/bin/env bash
# The linker of the release wheel's extension (packaging/python/build.sh passes it to rustc
# for that one crate): zig's cc with glibc 2.17's symbol versions, so that the wheel is
# manylinux2014. maturin's `zig cc` wrapper drops the arguments zig does not take.
#
# zig's cc refuses lld's --symbol-ordering-file, which bindings-python/build.rs asks for when
# MCPAXLE_SYMBOL_ORDER is set (packaging/symbol_order.py says why). Then the extension is linked
# by zig as always, with ZIG_VERBOSE_LINK printing the lld command it ran, and linked again by
# zig's lld with that command and the layout added.
set -euo pipefail
zig_cc=(maturin zig cc -- -target x86_64-linux-gnu.2.17 -g)
layout=()
args=()
for arg in "$@"; do
  case "$arg" in
    -Wl,--symbol-ordering-file=* | -Wl,--no-warn-symbol-ordering) layout+=("${arg#-Wl,}") ;;
    *) args+=("$arg") ;;
  esac
done
if [ ${#layout[@]} -eq 0 ]; then
  exec "${zig_cc[@]}" "${args[@]}"
fi
for arg in "${args[@]}"; do
  case "$arg" in
    *[[:space:]]*) echo "zig-cc.sh: cannot apply the symbol order with a space in a linker argument: '$arg'" >&2; exit 1 ;;
  esac
done
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! ZIG_VERBOSE_LINK=1 "${zig_cc[@]}" "${args[@]}" 2>"$log"; then
  cat "$log" >&2
  exit 1
fi
command="$(grep '^ld\.lld ' "$log" | tail -n 1)"
if [ -z "$command" ]; then
  cat "$log" >&2
  echo "zig-cc.sh: zig printed no ld.lld command (ZIG_VERBOSE_LINK) to link again with the symbol order" >&2
  exit 1
fi
grep -v '^ld\.lld ' "$log" >&2 || true
rm -f "$log"
trap - EXIT
read -r -a lld <<<"$command"
exec python3 -m ziglang "${lld[@]}" "${layout[@]}"

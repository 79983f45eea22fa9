#!/usr/bin/env bash
# Builds the C side of mcpaxle into an install prefix under target/, the way a C program
# consumes it:
#
#   bindings-c/build.sh [all]      release libmcpaxle.so + libmcpaxle.a, the header generated
#                                  from the sources, mcpaxle.pc, mcpaxleConfig.cmake
#                                  -> target/c-prefix/; the examples, built with pkg-config
#                                  -> target/c-examples/. Warns when the committed
#                                  include/mcpaxle.h is out of date (it never rewrites it).
#   bindings-c/build.sh header     regenerates src/client_methods_ffi.rs (from the table of
#                                  scripts/gen_client_methods.py) and the committed
#                                  include/mcpaxle.h (cbindgen, pinned)
#   bindings-c/build.sh check-header   fails when either differs from its sources
#   bindings-c/build.sh test       all, check-header, then the C tests under valgrind
#                                  (bindings-c/tests/run.sh)
#
# Each step is skipped when its inputs did not change, so a second run takes a few seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
CARGO="${CARGO:-cargo}"
CC="${CC:-cc}"
prefix="$root/target/c-prefix"
examples_out="$root/target/c-examples"
header="$root/include/mcpaxle.h"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)"

generate_header() { # $1: output file
  "$here/scripts/cbindgen.sh" --config "$here/cbindgen.toml" --crate mcpaxle-c --quiet --output "$1" "$here"
}

cmd_header() {
  python3 "$here/scripts/gen_client_methods.py"
  mkdir -p "$(dirname "$header")"
  local tmp; tmp="$(mktemp)"
  generate_header "$tmp"
  if ! cmp -s "$tmp" "$header"; then cp "$tmp" "$header"; echo "build.sh: wrote include/mcpaxle.h"; fi
  rm -f "$tmp"
}

cmd_check_header() {
  python3 "$here/scripts/gen_client_methods.py" --check
  local tmp; tmp="$(mktemp)"
  generate_header "$tmp"
  if ! diff -u "$header" "$tmp"; then
    rm -f "$tmp"
    echo "build.sh: include/mcpaxle.h is out of date: run bindings-c/build.sh header and commit it" >&2
    exit 1
  fi
  rm -f "$tmp"
  echo "build.sh: include/mcpaxle.h is up to date"
}

install_if_changed() { # $1 src, $2 dest
  if ! cmp -s "$1" "$2"; then mkdir -p "$(dirname "$2")"; cp "$1" "$2"; fi
}

write_if_changed() { # $1 dest; content on stdin
  local tmp; tmp="$(mktemp)"
  cat >"$tmp"
  install_if_changed "$tmp" "$1"
  rm -f "$tmp"
}

cmd_all() {
  # The code a server runs laid out together (build.rs, packaging/symbol_order.py).
  source "$root/packaging/symbol-order-env.sh"
  symbol_order_env "$root"
  "$CARGO" build --release -p mcpaxle-c --quiet
  local generated; generated="$(mktemp)"
  generate_header "$generated"
  if ! cmp -s "$generated" "$header"; then
    echo "build.sh: warning: include/mcpaxle.h is out of date; run bindings-c/build.sh header and commit it" >&2
  fi
  install_if_changed "$generated" "$prefix/include/mcpaxle.h"
  rm -f "$generated"
  install_if_changed "$root/target/release/libmcpaxle.so" "$prefix/lib/libmcpaxle.so"
  install_if_changed "$root/target/release/libmcpaxle.a" "$prefix/lib/libmcpaxle.a"
  # The static library needs the system libraries Rust's std and tokio use.
  local static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
  write_if_changed "$prefix/lib/pkgconfig/mcpaxle.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: mcpaxle
Description: Model Context Protocol (2026-07-28 and 2025-11-25) server and client, C ABI
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmcpaxle
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
  write_if_changed "$prefix/lib/cmake/mcpaxle/mcpaxleConfig.cmake" <<'CMAKE'
# CMake package config of mcpaxle: find_package(mcpaxle CONFIG REQUIRED), then link
# mcpaxle::mcpaxle (shared) or mcpaxle::mcpaxle_static.
get_filename_component(_mcpaxle_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(Threads)
if(NOT TARGET mcpaxle::mcpaxle)
  add_library(mcpaxle::mcpaxle SHARED IMPORTED)
  set_target_properties(mcpaxle::mcpaxle PROPERTIES
    IMPORTED_LOCATION "${_mcpaxle_prefix}/lib/libmcpaxle.so"
    IMPORTED_SONAME "libmcpaxle.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_mcpaxle_prefix}/include")
endif()
if(NOT TARGET mcpaxle::mcpaxle_static)
  add_library(mcpaxle::mcpaxle_static STATIC IMPORTED)
  set_target_properties(mcpaxle::mcpaxle_static PROPERTIES
    IMPORTED_LOCATION "${_mcpaxle_prefix}/lib/libmcpaxle.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_mcpaxle_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m;rt;util")
endif()
set(mcpaxle_INCLUDE_DIRS "${_mcpaxle_prefix}/include")
set(mcpaxle_LIBRARIES mcpaxle::mcpaxle)
unset(_mcpaxle_prefix)
CMAKE
  write_if_changed "$prefix/lib/cmake/mcpaxle/mcpaxleConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
  # The examples, built exactly as the README tells a C programmer to.
  mkdir -p "$examples_out"
  local flags; flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs mcpaxle)"
  for src in "$here"/examples/*.c; do
    local bin; bin="$examples_out/$(basename "$src" .c)"
    local extra=""
    if [[ "$src" == */mhd_server.c ]]; then
      # The host server of the mounted endpoint's example (bindings-c/scripts/install-deps.sh).
      extra="$(pkg-config --cflags --libs libmicrohttpd)" || {
        echo "build.sh: libmicrohttpd is missing (examples/mhd_server.c): run bindings-c/scripts/install-deps.sh" >&2
        exit 1
      }
    fi
    if [[ ! -x "$bin" || "$src" -nt "$bin" || "$prefix/include/mcpaxle.h" -nt "$bin" || "$prefix/lib/libmcpaxle.so" -nt "$bin" ]]; then
      # shellcheck disable=SC2086
      "$CC" -std=c11 -O2 -g -Wall -Wextra -Werror "$src" $flags $extra -o "$bin"
    fi
  done
  echo "build.sh: libraries, header and pkg-config/CMake files in target/c-prefix; examples in target/c-examples"
}

case "${1:-all}" in
  all) cmd_all ;;
  header) cmd_header ;;
  check-header) cmd_check_header ;;
  test) cmd_all; cmd_check_header; "$here/tests/run.sh" ;;
  *) echo "usage: bindings-c/build.sh [all|header|check-header|test]" >&2; exit 2 ;;
esac

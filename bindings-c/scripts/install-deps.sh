#!/usr/bin/env bash
# Installs the system packages the C side needs besides a C compiler and pkg-config (Debian or
# Ubuntu; as root, or through sudo): valgrind, under which the C tests run (tests/run.sh), and
# libmicrohttpd-dev, the HTTP server examples/mhd_server.c mounts the endpoint in. Nothing is
# done when both are there, so `make c` runs it every time.
#
#   bindings-c/scripts/install-deps.sh
#
# Tested with the Debian 12 packages valgrind 1:3.19.0-1 and libmicrohttpd-dev 0.9.75-6.
set -euo pipefail
need=()
command -v valgrind >/dev/null || need+=(valgrind)
pkg-config --exists libmicrohttpd 2>/dev/null || need+=(libmicrohttpd-dev)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-deps.sh: install ${need[*]} with this system's package manager (no apt-get here)" >&2
  exit 1
fi
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
echo "install-deps.sh: apt-get install ${need[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"

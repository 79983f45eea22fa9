#!/usr/bin/env bash
# The C artifacts under dist/, from the install prefix bindings-c/build.sh makes (target/c-prefix,
# the same release build `make test-c` tests):
#
#   mcpaxle-VERSION-linux-ARCH.tar.gz     one directory mcpaxle-VERSION-linux-ARCH/ (x86_64 here) holding
#                                         include/mcpaxle.h, lib/libmcpaxle.{so,a},
#                                         lib/pkgconfig/mcpaxle.pc, lib/cmake/mcpaxle/ and
#                                         share/doc/mcpaxle/ (LICENSE, CHANGELOG.md, README.md).
#                                         Relocatable: mcpaxle.pc names its paths from
#                                         ${pcfiledir}, the CMake package from its own directory,
#                                         so it works wherever it is unpacked.
#   libmcpaxle-dev_VERSION_DEBARCH.deb    the same files under /usr (dpkg-deb).
#
# Debug info is stripped from the packed libraries (strip --strip-debug).
#
#   bash packaging/c/bundle.sh            # after bindings-c/build.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="$root/target/c-prefix"
dist="$root/dist"
stage="$root/target/c-stage"
version="$(python3 "$root/packaging/check_versions.py")"
name="mcpaxle-$version-linux-$(uname -m)"
deb_arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"

for f in include/mcpaxle.h lib/libmcpaxle.so lib/libmcpaxle.a lib/cmake/mcpaxle/mcpaxleConfig.cmake lib/cmake/mcpaxle/mcpaxleConfigVersion.cmake; do
  [ -f "$prefix/$f" ] || { echo "packaging/c/bundle.sh: $prefix/$f missing: run bindings-c/build.sh" >&2; exit 1; }
done
# The pkg-config file's Libs.private are build.sh's: read them from its .pc so there is one list.
libs_private="$(sed -n 's/^Libs.private: //p' "$prefix/lib/pkgconfig/mcpaxle.pc")"

fill() { # $1: a directory to hold the prefix's files
  local to="$1"
  mkdir -p "$to/include" "$to/lib/pkgconfig" "$to/lib/cmake/mcpaxle" "$to/share/doc/mcpaxle"
  cp "$prefix/include/mcpaxle.h" "$to/include/"
  cp "$prefix/lib/libmcpaxle.so" "$prefix/lib/libmcpaxle.a" "$to/lib/"
  strip --strip-debug "$to/lib/libmcpaxle.so" "$to/lib/libmcpaxle.a"
  cp "$prefix"/lib/cmake/mcpaxle/*.cmake "$to/lib/cmake/mcpaxle/"
  cp "$root/LICENSE" "$root/CHANGELOG.md" "$to/share/doc/mcpaxle/"
  cp "$root/bindings-c/README.md" "$to/share/doc/mcpaxle/README.md"
  # shellcheck disable=SC2016 # ${...} are pkg-config's variables
  cat >"$to/lib/pkgconfig/mcpaxle.pc" <<PC
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: mcpaxle
Description: Model Context Protocol (2026-07-28 and 2025-11-25) server and client, C ABI
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmcpaxle
Libs.private: $libs_private
Cflags: -I\${includedir}
PC
}

rm -rf "$stage"
mkdir -p "$stage" "$dist"
rm -f "$dist"/mcpaxle-*-linux-*.tar.gz "$dist"/libmcpaxle-dev_*.deb

fill "$stage/$name"
tar --sort=name --owner=0 --group=0 --numeric-owner -czf "$dist/$name.tar.gz" -C "$stage" "$name"
echo "c: $name.tar.gz ($(du -k "$dist/$name.tar.gz" | cut -f1) KiB)"

if command -v dpkg-deb >/dev/null; then
  deb="$stage/deb"
  fill "$deb/usr"
  mkdir -p "$deb/DEBIAN"
  mv "$deb/usr/share/doc/mcpaxle" "$deb/usr/share/doc/libmcpaxle-dev"
  mv "$deb/usr/share/doc/libmcpaxle-dev/LICENSE" "$deb/usr/share/doc/libmcpaxle-dev/copyright"
  glibc="$(objdump -T "$deb/usr/lib/libmcpaxle.so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
  cat >"$deb/DEBIAN/control" <<CONTROL
Package: libmcpaxle-dev
Version: $version
Section: libdevel
Priority: optional
Architecture: $deb_arch
Depends: libc6 (>= $glibc)
Maintainer: mcpaxle maintainers <mcpaxle@example.invalid>
Description: Model Context Protocol server and client library, C ABI
 mcpaxle implements MCP revision 2026-07-28 and the legacy 2025-11-25 era, server and
 client, over stdio and Streamable HTTP. This package holds libmcpaxle (shared and static),
 mcpaxle.h, mcpaxle.pc and the CMake package mcpaxle.
CONTROL
  dpkg-deb --root-owner-group -Zgzip --build "$deb" "$dist/libmcpaxle-dev_${version}_${deb_arch}.deb" >/dev/null
  echo "c: libmcpaxle-dev_${version}_${deb_arch}.deb ($(du -k "$dist/libmcpaxle-dev_${version}_${deb_arch}.deb" | cut -f1) KiB)"
else
  echo "c: no dpkg-deb here: no .deb"
fi

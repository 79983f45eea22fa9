#!/bin/sh
# The linker of the release wheel's extension (packaging/python/build-wheel.sh passes it to rustc
# for that one crate): zig's cc with glibc 2.17's symbol versions, so that the wheel is
# manylinux2014. maturin's `zig cc` wrapper drops the arguments zig does not take.
exec maturin zig cc -- -target x86_64-linux-gnu.2.17 -g "$@"

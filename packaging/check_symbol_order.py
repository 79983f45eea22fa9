#!/usr/bin/env python3
"""Checks that the release libraries are laid out by packaging/symbol-order.txt, and that the
file still names their functions (stdlib and binutils' nm only).

    python3 packaging/check_symbol_order.py

The file lists, by their mangled names, the functions a server runs (packaging/symbol_order.py
writes it and says why). The names hold the crates' build hashes: after a toolchain upgrade or a
change of Cargo.lock, most of them name nothing, the linker skips them without a word, and the
libraries are back to 11 MiB of resident code in a Python server. So, for the C library and the
Node addon of `make test` (unstripped; the wheel's extension is stripped, and built from the
same core):
  - enough of the listed functions must be found in each (a stale file finds few), and
  - they must come first in `.text`, before every function not listed (the build applied it).
Fails naming what to run: `make symbol-order`, then commit the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDER = ROOT / "packaging" / "symbol-order.txt"
LIBRARIES = [ROOT / "target" / "release" / "libmcpaxle.so", ROOT / "bindings-node" / "mcpaxle.linux-x64-gnu.node"]
# The share of the listed functions each library must hold. The file is the union of the
# Python, C and Node servers' profiles, so each library holds part of it: 0.54 (C) and 0.62
# (Node) when written (2026-12-08). Another toolchain changes every hash (the share falls near
# 0); a changed Cargo.lock, those of the crates it changes and of all built on them.
MIN_FOUND = 0.4


def text_symbols(library: Path) -> dict[str, int]:
    """{name: address} of the functions in `library`'s `.text` (nm, mangled names)."""
    sections = subprocess.run(["readelf", "-SW", str(library)], capture_output=True, text=True, check=True).stdout
    text = next(line.split("]", 1)[1].split() for line in sections.splitlines() if "] .text " in line)
    start, size = int(text[2], 16), int(text[4], 16)
    out = subprocess.run(["nm", "--defined-only", "--no-demangle", str(library)], capture_output=True, text=True, check=True).stdout
    symbols: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW" and start <= int(parts[0], 16) < start + size:
            symbols.setdefault(parts[2], int(parts[0], 16))
    return symbols


def check(library: Path, listed: set[str]) -> list[str]:
    if not library.exists():
        return [f"{library.relative_to(ROOT)} is missing (make test builds it before this check)"]
    symbols = text_symbols(library)
    found = {name: address for name, address in symbols.items() if name in listed}
    share = len(found) / len(listed)
    problems = []
    if share < MIN_FOUND:
        problems.append(f"{library.name} holds {len(found)} of the {len(listed)} functions packaging/symbol-order.txt "
                        f"lists ({share:.0%}; at least {MIN_FOUND:.0%} expected): the file names an earlier build "
                        f"(the toolchain or Cargo.lock changed)")
    elif found:
        # A function not listed may share a listed one's address (identical code folded into
        # one copy): it lies where that one does.
        at_listed = set(found.values())
        last_listed = max(at_listed)
        strays = sum(1 for n, a in symbols.items() if n not in listed and a not in at_listed and a < last_listed)
        if strays:
            problems.append(f"{library.name} was not laid out by packaging/symbol-order.txt: {strays} functions it does "
                            f"not list lie among the {len(found)} it does (MCPAXLE_SYMBOL_ORDER unset in its build?)")
    print(f"check_symbol_order: {library.name}: {len(found)} of {len(listed)} listed functions ({share:.0%})"
          + ("" if problems else ", first in .text"))
    return problems


def main() -> int:
    listed = {line.strip() for line in ORDER.read_text().splitlines() if line.strip()}
    problems = [p for library in LIBRARIES for p in check(library, listed)]
    for p in problems:
        print(f"check_symbol_order: {p}", file=sys.stderr)
    if problems:
        print("check_symbol_order: run `make symbol-order` (valgrind; a few minutes) and commit packaging/symbol-order.txt",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

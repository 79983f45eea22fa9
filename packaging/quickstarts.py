#!/usr/bin/env python3
"""Extracts the READMEs' quick starts so that the tests run them as pasted.

A quick start is a fenced code block whose info string names a file after the language,
``quickstart:NAME``::

    ```python quickstart:weather.py
    ...
    ```

(GitHub highlights by the first word and ignores the rest.) Every block is written to OUT/NAME.
A name may appear in several READMEs (the root README and a binding's repeat the quick start):
the blocks must then be identical, so that the READMEs cannot drift apart.

    python3 packaging/quickstarts.py OUT [README.md ...]     # default: every README of the repo
    python3 packaging/quickstarts.py --list                  # the names and where they are
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READMES = ["README.md", "bindings-python/README.md", "bindings-node/README.md", "bindings-c/README.md"]
FENCE = re.compile(r"^```[\w+-]+[ \t]+quickstart:(?P<name>[\w.+-]+)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)


def extract(paths: list[Path]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Maps each quick start's name to (its code, where it was first found); lists disagreements."""
    found: dict[str, tuple[str, str]] = {}
    problems: list[str] = []
    for path in paths:
        text = path.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
            name, body = m.group("name"), m.group("body")
            if name in found and found[name][0] != body:
                problems.append(f"{where}: quick start {name} differs from the one at {found[name][1]}")
            found.setdefault(name, (body, where))
    return found, problems


def main(argv: list[str]) -> int:
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    if (not listing and not args) or any(a.startswith("-") for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    out = None if listing else Path(args.pop(0))
    paths = [Path(a).resolve() for a in args] or [ROOT / r for r in READMES]
    found, problems = extract(paths)
    for problem in problems:
        print(f"quickstarts: {problem}", file=sys.stderr)
    if problems:
        return 1
    if not found:
        print("quickstarts: no ```LANG quickstart:NAME block found", file=sys.stderr)
        return 1
    for name, (body, where) in sorted(found.items()):
        if out is None:
            print(f"{name}\t{where}")
        else:
            out.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(body)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

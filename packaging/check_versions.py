#!/usr/bin/env python3
"""One version for every artifact: fails (exit 1, naming each file) when a manifest disagrees.

The version is the workspace's (`[workspace.package] version` in the root Cargo.toml). The
Python package takes it from there (pyproject's version is dynamic: maturin reads Cargo.toml);
the Node package, its lock file and the loader the napi CLI generates (native.js) spell it out,
and so do the Python package's `__version__` and the C header (`MCPAXLE_VERSION`, from
bindings-c/cbindgen.toml, and `mcpaxle_version()`'s doc). CHANGELOG.md must
have a section for it, and the copies of LICENSE and CHANGELOG.md the Python package ships must
equal the root ones.

    python3 packaging/check_versions.py           # prints the version when all agree
    python3 packaging/check_versions.py --root DIR  # the same for another checkout (tests)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the two tables read here are simple enough for regexes
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent


def toml_table(text: str, table: str) -> dict[str, object]:
    """The keys of one TOML table that are strings or arrays of strings."""
    if tomllib is not None:
        data: object = tomllib.loads(text)
        for part in table.split("."):
            data = data[part]  # type: ignore[index]
        return data  # type: ignore[return-value]
    m = re.search(rf"^\[{re.escape(table)}\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    body = m.group(1) if m else ""
    found: dict[str, object] = {k: v for k, v in re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', body, re.M)}
    for k, v in re.findall(r"^([\w-]+)\s*=\s*\[([^\]]*)\]", body, re.M):
        found[k] = re.findall(r'"([^"]*)"', v)
    return found


def workspace_version(root: Path = ROOT) -> str:
    return str(toml_table((root / "Cargo.toml").read_text(), "workspace.package")["version"])


def problems(version: str, root: Path = ROOT) -> list[str]:
    found: list[str] = []

    def expect(path: str, got: object, what: str) -> None:
        if got != version:
            found.append(f"{path}: {what} is {got!r}, the workspace Cargo.toml says {version!r}")

    project = toml_table((root / "bindings-python/pyproject.toml").read_text(), "project")
    if "version" in project:
        expect("bindings-python/pyproject.toml", project["version"], "[project] version")
    elif "version" not in project.get("dynamic", []):  # type: ignore[operator]
        found.append("bindings-python/pyproject.toml: no version and version not dynamic")

    m = re.search(r'^__version__ = "([^"]*)"', (root / "bindings-python/python/mcpaxle/__init__.py").read_text(), re.M)
    expect("bindings-python/python/mcpaxle/__init__.py", m.group(1) if m else None, "__version__")

    package = json.loads((root / "bindings-node/package.json").read_text())
    expect("bindings-node/package.json", package["version"], '"version"')
    lock = json.loads((root / "bindings-node/package-lock.json").read_text())
    expect("bindings-node/package-lock.json", lock["version"], '"version"')
    expect("bindings-node/package-lock.json", lock["packages"][""]["version"], 'packages[""].version')
    for got in sorted(set(re.findall(r"bindingPackageVersion !== '([^']*)'", (root / "bindings-node/native.js").read_text()))):
        expect("bindings-node/native.js", got, "the platform package version it expects (napi build regenerates it)")

    for path in ("include/mcpaxle.h", "bindings-c/cbindgen.toml"):
        m = re.search(r'#define MCPAXLE_VERSION "([^"]*)"', (root / path).read_text())
        expect(path, m.group(1) if m else None, "MCPAXLE_VERSION")
    m = re.search(r"The library's version \(\"([^\"]*)\"\)", (root / "include/mcpaxle.h").read_text())
    expect("include/mcpaxle.h", m.group(1) if m else None, "mcpaxle_version()'s documented value (bindings-c/src/ffi.rs)")

    if not re.search(rf"^## {re.escape(version)}\b", (root / "CHANGELOG.md").read_text(), re.M):
        found.append(f"CHANGELOG.md: no '## {version}' section")
    for copy, original in (("bindings-python/LICENSE", "LICENSE"), ("bindings-python/python/mcpaxle/CHANGELOG.md", "CHANGELOG.md")):
        if (root / copy).read_bytes() != (root / original).read_bytes():
            found.append(f"{copy}: differs from {original} (copy it: cp {original} {copy})")
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[argv.index("--root") + 1]).resolve() if "--root" in argv else ROOT
    version = workspace_version(root)
    found = problems(version, root)
    for problem in found:
        print(f"check_versions: {problem}", file=sys.stderr)
    if found:
        return 1
    print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

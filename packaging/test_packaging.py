#!/usr/bin/env python3
"""Tests of the packaging checks themselves (make test-dist runs them): the version check fails
on each kind of disagreement, the quick-start extractor finds the READMEs' blocks and fails
when two READMEs' copies of one quick start differ, and the symbol order check fails on a
library not laid out by the list and on a list naming another build.

    python3 packaging/test_packaging.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import check_symbol_order  # noqa: E402
import check_versions  # noqa: E402
import quickstarts  # noqa: E402

# The files check_versions reads, copied into a scratch checkout.
VERSIONED = [
    "Cargo.toml",
    "CHANGELOG.md",
    "LICENSE",
    "bindings-python/pyproject.toml",
    "bindings-python/LICENSE",
    "bindings-python/python/mcpaxle/CHANGELOG.md",
    "bindings-python/python/mcpaxle/__init__.py",
    "bindings-node/package.json",
    "bindings-node/package-lock.json",
    "bindings-node/native.js",
    "bindings-c/cbindgen.toml",
    "include/mcpaxle.h",
]


class CheckVersions(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        for f in VERSIONED:
            (self.tmp / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / f, self.tmp / f)
        self.version = check_versions.workspace_version(self.tmp)

    def edit(self, path: str, old: str, new: str) -> None:
        p = self.tmp / path
        text = p.read_text()
        self.assertIn(old, text, path)
        p.write_text(text.replace(old, new, 1))

    def test_the_checkout_agrees(self) -> None:
        self.assertEqual(check_versions.problems(self.version, self.tmp), [])
        out = subprocess.run([sys.executable, HERE / "check_versions.py", "--root", self.tmp], capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout.strip()), (0, self.version))

    def test_each_disagreement_is_named(self) -> None:
        cases = [
            ("bindings-node/package.json", f'"version": "{self.version}"', '"version": "9.9.9"', "bindings-node/package.json"),
            ("include/mcpaxle.h", f'MCPAXLE_VERSION "{self.version}"', 'MCPAXLE_VERSION "9.9.9"', "include/mcpaxle.h"),
            ("bindings-python/pyproject.toml", 'dynamic = ["version"]', 'version = "9.9.9"', "pyproject.toml"),
            ("bindings-node/native.js", f"bindingPackageVersion !== '{self.version}'", "bindingPackageVersion !== '9.9.9'", "native.js"),
            ("CHANGELOG.md", f"## {self.version}", "## 9.9.9", "CHANGELOG.md"),
            ("bindings-python/python/mcpaxle/__init__.py", f'__version__ = "{self.version}"', '__version__ = "9.9.9"', "__init__.py"),
            ("include/mcpaxle.h", f'The library\'s version ("{self.version}")', 'The library\'s version ("9.9.9")', "mcpaxle_version"),
        ]
        for path, old, new, named in cases:
            with self.subTest(path=path):
                self.setUp()
                self.edit(path, old, new)
                found = check_versions.problems(self.version, self.tmp)
                self.assertTrue(any(named in p for p in found), found)
                out = subprocess.run([sys.executable, HERE / "check_versions.py", "--root", self.tmp], capture_output=True, text=True)
                self.assertEqual(out.returncode, 1)
                self.assertIn(named, out.stderr)

    def test_without_tomllib_the_same(self) -> None:  # Python 3.10
        saved = check_versions.tomllib
        check_versions.tomllib = None
        self.addCleanup(setattr, check_versions, "tomllib", saved)
        self.assertEqual(check_versions.workspace_version(self.tmp), self.version)
        self.assertEqual(check_versions.problems(self.version, self.tmp), [])
        self.edit("bindings-python/pyproject.toml", 'dynamic = ["version"]', 'version = "9.9.9"')
        self.assertTrue(any("pyproject.toml" in p for p in check_versions.problems(self.version, self.tmp)))

    def test_a_stale_licence_copy_fails(self) -> None:
        (self.tmp / "bindings-python/LICENSE").write_text("old\n")
        self.assertTrue(any("bindings-python/LICENSE" in p for p in check_versions.problems(self.version, self.tmp)))


class Quickstarts(unittest.TestCase):
    def test_the_readmes_have_every_quick_start_the_dist_test_runs(self) -> None:
        found, problems = quickstarts.extract([ROOT / r for r in quickstarts.READMES])
        self.assertEqual(problems, [])
        self.assertTrue({"weather.py", "quickstart.mjs", "quickstart.cjs", "server.c", "CMakeLists.txt"} <= set(found))

    def test_two_different_copies_fail(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            a, b = Path(d, "a.md"), Path(d, "b.md")
            a.write_text("text\n```python quickstart:x.py\nprint(1)\n```\n")
            b.write_text("```python quickstart:x.py\nprint(2)\n```\n")
            found, problems = quickstarts.extract([a, b])
            self.assertEqual(found["x.py"][0], "print(1)\n")
            self.assertEqual(len(problems), 1)
            self.assertIn("differs", problems[0])
            out = subprocess.run([sys.executable, HERE / "quickstarts.py", Path(d, "out"), a, b], capture_output=True, text=True)
            self.assertEqual(out.returncode, 1)

    def test_blocks_without_the_marker_are_not_extracted(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            a = Path(d, "a.md")
            a.write_text("```python\nprint(1)\n```\n```js quickstart:q.mjs\nx\n```\n")
            found, _ = quickstarts.extract([a])
            self.assertEqual(set(found), {"q.mjs"})


class SymbolOrder(unittest.TestCase):
    """On a real library: gcc links one function per section in the source's order (a, b, c),
    without the C runtime's start files (whose functions would come first)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.addClassCleanup(shutil.rmtree, cls.tmp)
        (cls.tmp / "t.c").write_text("int a(int x) { return x + 1; }\nint b(int x) { return x * 3; }\nint c(int x) { return x - 7; }\n")
        cls.lib = cls.tmp / "libt.so"
        subprocess.run(["gcc", "-O1", "-shared", "-nostartfiles", "-fPIC", "-ffunction-sections", "-o", cls.lib, cls.tmp / "t.c"], check=True)

    def test_listed_functions_first_pass(self) -> None:
        self.assertEqual(check_symbol_order.check(self.lib, {"a", "b"}), [])

    def test_an_unlisted_function_among_the_listed_fails(self) -> None:
        problems = check_symbol_order.check(self.lib, {"a", "c"})
        self.assertEqual(len(problems), 1)
        self.assertIn("not laid out", problems[0])

    def test_a_list_of_another_build_fails(self) -> None:
        problems = check_symbol_order.check(self.lib, {"a", "_ZN4gone17h0000000000000001E", "_ZN4gone17h0000000000000002E"})
        self.assertEqual(len(problems), 1)
        self.assertIn("earlier build", problems[0])


if __name__ == "__main__":
    unittest.main()

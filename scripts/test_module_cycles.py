#!/usr/bin/env python3
"""Tests of scripts/module_cycles.py on small crates written to a temporary directory:
    python3 scripts/test_module_cycles.py"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_cycles.py")


def check(files, *args):
    with tempfile.TemporaryDirectory() as d:
        for path, text in files.items():
            full = os.path.join(d, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, d, *args], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout


class ModuleCycles(unittest.TestCase):
    def test_parent_reexporting_a_child_is_not_a_cycle(self):
        rc, out = check({
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "mod x;\nmod y;\npub use x::X;\n",
            "a/x.rs": "pub struct X;\n",
            "a/y.rs": "use super::X;\nuse crate::a::X as Z;\n",
            "b.rs": "fn f() { let _ = crate::a::X; }\n",
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("0 cycles", out)

    def test_child_using_what_its_parent_defines_is_a_cycle(self):
        rc, out = check({
            "lib.rs": "mod a;\n",
            "a/mod.rs": "mod x;\npub struct P;\n",
            "a/x.rs": "fn f() -> super::P { todo!() }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("cycle of 2 files", out)
        self.assertIn("src/a/x.rs -> src/a/mod.rs", out)

    def test_siblings_through_use_trees_paths_and_globs(self):
        rc, out = check({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "use crate::{b::{self, B}, c as see};\npub struct A;\n",
            "b.rs": "pub struct B;\nfn f() { crate::c::g(); }\n",
            "c.rs": "use super::a::*;\npub fn g() -> A { A }\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("cycle of 3 files", out)

    def test_comments_strings_and_test_modules_in_the_same_file(self):
        rc, out = check({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "/// See [`crate::b::B`].\n// crate::b::B\nconst S: &str = \"crate::b::B\";\n"
                    "pub struct A;\n#[cfg(test)]\nmod tests { use super::*; fn t() -> A { A } }\n",
            "b.rs": "pub struct B(crate::a::A);\n",
        })
        self.assertEqual(rc, 0, out)

    def test_allow_list(self):
        files = {
            "lib.rs": "mod schema;\n",
            "schema/mod.rs": "mod p;\nmod q;\npub use p::*;\npub use q::*;\n",
            "schema/p.rs": "pub struct P(Option<Box<super::Q>>);\n",
            "schema/q.rs": "pub struct Q(Option<Box<super::P>>);\n",
        }
        rc, out = check(files)
        self.assertEqual(rc, 0, out)
        self.assertIn("allowed cycle of 2 files", out)
        rc, out = check(files, "--allow", "src/other/*")
        self.assertEqual(rc, 1, out)

    def test_layer_rules(self):
        files = {
            "lib.rs": "mod client;\nmod server;\nmod transport;\n",
            "client/mod.rs": "pub struct C;\n",
            "server/mod.rs": "pub struct S(crate::transport::http::headers::H);\n",
            "transport/mod.rs": "pub mod http;\n",
            "transport/http/mod.rs": "pub mod headers;\n",
            "transport/http/headers.rs": "pub struct H;\n",
        }
        rc, out = check(files)
        self.assertEqual(rc, 0, out)
        files["server/mod.rs"] = "pub struct S(crate::client::C);\n"
        rc, out = check(files)
        self.assertEqual(rc, 1, out)
        self.assertIn("layer rule broken (the server (server/, legacy/) uses no client", out)
        self.assertIn("src/server/mod.rs -> src/client/mod.rs", out)
        rc, out = check(files, "--no-layers")
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()

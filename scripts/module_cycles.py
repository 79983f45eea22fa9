#!/usr/bin/env python3
"""Import cycles between the files of a Rust crate (stdlib only).

    python3 scripts/module_cycles.py [CRATE_DIR] [--allow GLOB]... [--graph]

Builds the file-level dependency graph of the crate's modules, starting at
CRATE_DIR/src/lib.rs (default: core/), and prints its strongly connected components of
more than one file. It exits 1 when one of them is not entirely inside an allowed glob
(default: src/schema/*, the schema's own mirror of schema.ts, whose files refer to each
other as schema.ts's types do), or when a file uses one of a layer it must not (LAYERS
below, the core's layer rules; --no-layers skips them), else 0.

An edge A -> B means that code in file A names an item defined in file B:
* `mod x;` in A: A -> the file of `x`;
* `use` trees (`crate::`, `super::`, `self::`, a child module or an imported name, with
  braces, `self`, renames and globs) and paths in code such as `crate::a::b::f()`,
  resolved to the file that *defines* the item: a path through a `pub use` re-export is
  followed to the file the item comes from. A child naming its parent's re-export of a
  sibling therefore depends on the sibling, not on the parent; the child -> parent edge
  counts only when the child uses something the parent defines itself;
* a glob import (`use super::*`) adds an edge for each name of the glob's module that
  the importing module mentions.
Comments, doc comments and string literals are ignored; test modules count as code.
"""

import argparse
import fnmatch
import os
import re
import sys

# The layers of the core (ARCHITECTURE.md): files matching the first globs must not use files
# matching the second (except those matching the third). Globs are relative to the crate;
# `*` crosses directories.
BASE = ["src/error.rs", "src/jsonrpc.rs", "src/era.rs", "src/peer.rs", "src/options.rs", "src/schema/*", "src/transport/http/headers.rs",
        "src/json_text.rs"]
SERVER = ["src/server/*", "src/legacy/*"]
CLIENT = ["src/client/*"]
SERVER_TRANSPORT = [
    "src/transport/shared.rs",
    "src/transport/stdio/server.rs",
    "src/transport/http/server.rs",
    "src/transport/http/json_body.rs",
    "src/transport/http/resume.rs",
    "src/transport/http/rules.rs",
    "src/transport/http/auth.rs",
    "src/transport/http/connections.rs",
    "src/transport/http/mounted.rs",
    "src/transport/http/token_verifiers.rs",
]
# Telemetry is used by the server and the client; only its OTLP exporter sends (through the
# outbound HTTP client).
TELEMETRY = [
    "src/telemetry/mod.rs",
    "src/telemetry/options.rs",
    "src/telemetry/propagation.rs",
    "src/telemetry/spans.rs",
    "src/telemetry/state.rs",
]
CLIENT_TRANSPORT = [
    "src/transport/stdio/client.rs",
    "src/transport/http/client.rs",
]
LAYERS = [
    ("the protocol's types (error, jsonrpc, era, peer, options, schema, headers, json_text) use no other layer",
     BASE, SERVER + CLIENT + ["src/transport/*"], BASE),
    ("the server (server/, legacy/) uses no client and no transport but the HTTP headers",
     SERVER, CLIENT + ["src/transport/*"], BASE),
    ("the client uses no server and no server transport", CLIENT, SERVER + SERVER_TRANSPORT, []),
    ("the server transports use no client", SERVER_TRANSPORT, CLIENT + CLIENT_TRANSPORT, []),
    ("the client transports use no server", CLIENT_TRANSPORT, SERVER + SERVER_TRANSPORT, []),
    ("telemetry (but its OTLP exporter) uses no server, client or transport",
     TELEMETRY, SERVER + CLIENT + ["src/transport/*"], BASE),
]

ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|[{}();,*!#\[\]<>]|\S")


def strip(src):
    """The source with comments, strings and char literals blanked (lifetimes kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif re.match(r'b?r#*"', src[i : i + 300]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"' or (c == "b" and src.startswith('b"', i) and (i == 0 or not src[i - 1].isalnum())):
            i += 2 if c == "b" else 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:])
            if m:
                i += m.end()
                out.append("' '")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Module:
    def __init__(self, path, file, parent):
        self.path = path  # tuple of names, () for the crate root
        self.file = file
        self.parent = parent
        self.children = {}  # name -> Module
        self.defines = set()
        self.uses = {}  # local name -> (absolute base module path, segments) as written
        self.globs = []  # (base, segments)
        self.idents = set()
        self.refs = []  # (base, segments): paths in code


class Crate:
    def __init__(self, root):
        self.root_dir = os.path.abspath(root)
        self.modules = {}
        self.files = set()
        self.root = self.load(os.path.join(self.root_dir, "src", "lib.rs"), (), None)

    def load(self, file, path, parent):
        mod = Module(path, file, parent)
        self.modules[path] = mod
        self.files.add(file)
        with open(file, encoding="utf-8") as f:
            tokens = TOKEN.findall(strip(f.read()))
        self.parse(tokens, 0, mod, file)
        return mod

    def child_file(self, mod, name):
        d = os.path.dirname(mod.file)
        base = os.path.basename(mod.file)
        if base not in ("lib.rs", "mod.rs"):
            d = os.path.join(d, base[:-3])
        for cand in (os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")):
            if os.path.exists(cand):
                return cand
        raise SystemExit(f"module_cycles: no file for `mod {name};` in {mod.file}")

    def parse(self, t, i, mod, file):
        """Parses tokens from i up to the `}` closing the module (or the end); returns the
        index after it."""
        depth = 0
        n = len(t)
        while i < n:
            tok = t[i]
            if tok == "{":
                depth += 1
            elif tok == "}":
                if depth == 0:
                    return i + 1
                depth -= 1
            elif tok == "mod" and i + 2 < n and re.match(r"\w+$", t[i + 1]) and t[i + 2] in ";{":
                name = t[i + 1]
                if t[i + 2] == ";":
                    child = self.load(self.child_file(mod, name), mod.path + (name,), mod)
                    mod.children[name] = child
                    i += 3
                else:
                    child = Module(mod.path + (name,), file, mod)
                    self.modules[child.path] = child
                    mod.children[name] = child
                    i = self.parse(t, i + 3, child, file)
                mod.defines.add(name)
                continue
            elif tok == "use" and (i == 0 or t[i - 1] != "::"):
                j = t.index(";", i)
                for alias, segs, glob in use_tree(t[i + 1 : j], []):
                    entry = (mod.path, segs)
                    if glob:
                        mod.globs.append(entry)
                    elif alias != "_":
                        mod.uses[alias] = entry
                i = j + 1
                continue
            elif depth == 0 and tok in ITEM_KEYWORDS and i + 1 < n and re.match(r"[A-Za-z_]\w*$", t[i + 1]):
                mod.defines.add(t[i + 1])
            elif tok == "macro_rules" and i + 2 < n and t[i + 1] == "!":
                mod.defines.add(t[i + 2])
            elif re.match(r"[A-Za-z_]\w*$", tok) and (i == 0 or t[i - 1] != "::"):
                mod.idents.add(tok)
                if i + 1 < n and t[i + 1] == "::":
                    segs, j = [tok], i + 1
                    while j + 1 < n and t[j] == "::" and re.match(r"[A-Za-z_]\w*$", t[j + 1]):
                        segs.append(t[j + 1])
                        j += 2
                    mod.refs.append((mod.path, segs))
                    i = j
                    continue
            i += 1
        return i

    def resolve(self, base, segs, seen=None):
        """The files a path names, written in module `base`: a set of files (empty for an
        external crate)."""
        seen = seen or set()
        key = (base, tuple(segs))
        if key in seen:
            return set()
        seen.add(key)
        mod = self.modules[base]
        first, rest = segs[0], segs[1:]
        if first == "crate":
            return self.walk(self.root, rest, seen)
        if first == "self":
            return self.walk(mod, rest, seen)
        if first == "super":
            return self.walk(mod.parent, rest, seen)
        # A name in scope: the module's own, or (2018 edition) an external crate.
        if first in mod.children or first in mod.defines or first in mod.uses:
            return self.walk(mod, segs, seen)
        glob = self.glob_for(mod, first)
        return self.resolve(glob[0], glob[1] + segs, seen) if glob else set()

    def glob_for(self, mod, name):
        """The glob import of mod that brings `name` in, if any."""
        for gbase, gsegs in mod.globs:
            target = self.module_of(gbase, gsegs)
            if target is not None and name in self.exported(target):
                return gbase, gsegs
        return None

    def walk(self, mod, segs, seen):
        """Follows segs down from module mod."""
        while segs:
            s, segs = segs[0], segs[1:]
            if s == "super":
                mod = mod.parent
            elif s == "self":
                continue
            elif s in mod.children:
                mod = mod.children[s]
            elif s in mod.defines:
                return {mod.file}
            elif s in mod.uses:
                ubase, usegs = mod.uses[s]
                return self.resolve(ubase, usegs + segs, seen)
            else:
                glob = self.glob_for(mod, s)
                if glob:
                    return self.resolve(glob[0], glob[1] + [s] + segs, seen)
                return {mod.file}  # unknown name: count the module itself
        return {mod.file}

    def exported(self, mod, seen=None):
        """Every name a glob import of mod brings in."""
        seen = seen or set()
        if mod.path in seen:
            return set()
        seen.add(mod.path)
        names = set(mod.children) | mod.defines | set(mod.uses)
        for gbase, gsegs in mod.globs:
            target = self.module_of(gbase, gsegs)
            if target is not None:
                names |= self.exported(target, seen)
        return names

    def module_of(self, base, segs):
        mod = self.modules[base]
        for s in segs:
            if s == "crate":
                mod = self.root
            elif s == "super":
                mod = mod.parent
            elif s == "self":
                continue
            elif s in mod.children:
                mod = mod.children[s]
            elif s in mod.uses:
                ubase, usegs = mod.uses[s]
                mod = self.module_of(ubase, usegs)
                if mod is None:
                    return None
            else:
                return None
        return mod

    def graph(self):
        edges = {f: set() for f in self.files}
        for mod in self.modules.values():
            src = mod.file
            if mod.parent is not None and mod.parent.file != src:
                edges[mod.parent.file].add(src)  # `mod x;`
            paths = list(mod.refs) + list(mod.uses.values())
            for gbase, gsegs in mod.globs:
                target = self.module_of(gbase, gsegs)
                if target is None:
                    continue
                for name in self.exported(target) & mod.idents:
                    paths.append((gbase, gsegs + [name]))
            for base, segs in paths:
                for dst in self.resolve(base, segs):
                    if dst != src:
                        edges[src].add(dst)
        return edges


def use_tree(t, prefix):
    """(alias, segments, is_glob) for each leaf of a `use` tree's tokens."""
    out = []
    i, segs = 0, list(prefix)
    if t and t[0] == "::":
        i = 1
    while i < len(t):
        tok = t[i]
        if tok == "{":
            depth, j, start, parts = 0, i + 1, i + 1, []
            while j < len(t):
                if t[j] == "{":
                    depth += 1
                elif t[j] == "}":
                    if depth == 0:
                        parts.append(t[start:j])
                        break
                    depth -= 1
                elif t[j] == "," and depth == 0:
                    parts.append(t[start:j])
                    start = j + 1
                j += 1
            for part in parts:
                if part:
                    out += use_tree(part, segs)
            return out
        if tok == "*":
            return [(None, segs, True)]
        if tok == "::":
            i += 1
            continue
        if tok == "as":
            alias = t[i + 1]
            return [(alias, segs, False)]
        segs.append(tok)
        i += 1
    if not segs:
        return out
    if segs[-1] == "self":
        segs = segs[:-1]
    return [(segs[-1], segs, False)]


def tarjan(edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("crate", nargs="?", default="core")
    ap.add_argument("--allow", action="append", help="glob (relative to the crate) of files a cycle may stay within")
    ap.add_argument("--graph", action="store_true", help="print every edge")
    ap.add_argument("--no-layers", action="store_true", help="check cycles only, not the core's layer rules")
    args = ap.parse_args()
    allow = args.allow if args.allow is not None else ["src/schema/*"]
    crate = Crate(args.crate)
    edges = crate.graph()
    rel = lambda f: os.path.relpath(f, crate.root_dir)
    if args.graph:
        for src in sorted(edges):
            for dst in sorted(edges[src]):
                print(f"{rel(src)} -> {rel(dst)}")
    cycles = [c for c in tarjan(edges) if len(c) > 1]
    bad = 0
    for comp in sorted(cycles, key=lambda c: (-len(c), c)):
        allowed = all(any(fnmatch.fnmatch(rel(f), g) for g in allow) for f in comp)
        bad += not allowed
        print(f"{'allowed ' if allowed else ''}cycle of {len(comp)} files:")
        for f in comp:
            inside = sorted(rel(d) for d in edges[f] if d in comp)
            print(f"  {rel(f)} -> {', '.join(inside)}")
    broken = 0
    if not args.no_layers:
        match = lambda f, globs: any(fnmatch.fnmatch(rel(f), g) for g in globs)
        for rule, users, used, exempt in LAYERS:
            for src in sorted(edges):
                if not match(src, users):
                    continue
                for dst in sorted(edges[src]):
                    if match(dst, used) and not match(dst, exempt):
                        broken += 1
                        print(f"layer rule broken ({rule}): {rel(src)} -> {rel(dst)}")
    print(
        f"{crate.root_dir}: {len(crate.files)} files, {len(cycles)} cycles, {bad} not allowed"
        + ("" if args.no_layers else f", {broken} layer rules broken")
    )
    return 1 if bad or broken else 0


if __name__ == "__main__":
    sys.exit(main())

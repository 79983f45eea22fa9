#!/usr/bin/env python3
"""One release build of the core for every package `make test` builds (stdlib only).

    python3 scripts/shared_build.py

Each `cargo build --release -p PACKAGE` resolves features for its own packages, and cargo
hashes a crate together with the features of everything below it: when one binding's
dependencies turn on a feature of a crate the core also uses (serde_json's `unbounded_depth`
through uniffi's generator, futures-channel's `sink` through napi), that binding's build
compiles the core and half the dependency tree a second time, minutes on two cores. This
check asks cargo for the unit graph of each build `make test` runs (`--unit-graph`, an
unstable flag: RUSTC_BOOTSTRAP=1 for this read-only query) and fails when the core, or any
crate it is built from, is resolved differently in one of them than in the C library's (the
first release build of `make test`), naming the crate and the features that differ. It also fails when a package's library is
a cdylib or staticlib and an rlib at once (the other way to a second build of the core).
"""

import json
import os
import subprocess
import sys


# The release builds of `make test`, `make dist`, `make demo` and `make bench` that link the core
# (Makefile, the bindings' scripts; the Node one runs through bindings-node/scripts/cargo-host.sh).
# The first is the one the others are compared with.
BUILDS = [
    ["-p", "mcpaxle-c"],
    ["-p", "mcpaxle-python"],
    ["-p", "mcpaxle-node"],
    ["-p", "mcpaxle-uniffi"],
    ["-p", "mcpaxle", "--example", "notes_server"],
    ["-p", "mcpaxle-bench", "--bins"],
]
CORE = "mcpaxle"


def unit_graph(args):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    out = subprocess.run(
        ["cargo", "build", "--release", *args, "--unit-graph", "-Z", "unstable-options"],
        env=env, capture_output=True, text=True,
    )
    if out.returncode != 0:
        sys.exit(f"shared_build: cargo build {' '.join(args)} --unit-graph failed:\n{out.stderr}")
    return json.loads(out.stdout)


def core_closure(graph):
    """{(package, target kinds, for host?): features} of the core's library and all it is built from."""
    units = graph["units"]

    def name(unit):
        return unit["pkg_id"].split("#")[-1].rsplit("@", 1)[0].split("/")[-1]

    roots = [i for i, u in enumerate(units) if name(u) == CORE and "lib" in u["target"]["kind"]]
    for i in graph["roots"]:
        kinds = set(units[i]["target"]["crate_types"])
        if kinds & {"cdylib", "staticlib"} and kinds & {"lib", "rlib"}:
            # cargo then builds every dependency with object code and bitcode both (the rlib is
            # linked without LTO), where the binaries' and the other libraries' builds have
            # bitcode only: the same features, another hash, the core compiled twice.
            sys.exit(
                f"shared_build: {name(units[i])} is a {'/'.join(sorted(kinds))}: a cdylib or staticlib that is "
                "also an rlib has every dependency compiled a second time (object code beside bitcode); "
                "drop the rlib (unit tests need none)"
            )
    if not roots:
        return None
    seen, todo = set(), list(roots)
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        todo.extend(d["index"] for d in units[i]["dependencies"])
    closure = {}
    for i in seen:
        u = units[i]
        key = (u["pkg_id"].split("#")[-1], ",".join(u["target"]["kind"]), u["mode"], u["platform"] or "")
        closure[key] = tuple(u["features"])
    return closure


def main():
    reference = None
    failed = False
    for args in BUILDS:
        closure = core_closure(unit_graph(args))
        label = "cargo build --release " + " ".join(args)
        if closure is None:
            print(f"shared_build: {label} does not build the core", file=sys.stderr)
            failed = True
            continue
        if reference is None:
            reference, reference_label = closure, label
            continue
        for key in sorted(set(reference) | set(closure)):
            a, b = reference.get(key), closure.get(key)
            if a == b:
                continue
            failed = True
            crate = key[0]
            if a is None or b is None:
                where = label if a is None else reference_label
                print(f"shared_build: {crate} is in the core's build only in `{where}`", file=sys.stderr)
            else:
                print(
                    f"shared_build: {crate} has features {sorted(set(b) - set(a))} in `{label}` "
                    f"and not in `{reference_label}` (or {sorted(set(a) - set(b))} the other way): "
                    "the core would be compiled twice; turn them on for the core too, or keep the "
                    "dependency that turns them on out of that build",
                    file=sys.stderr,
                )
    if failed:
        return 1
    print(f"shared_build: the {len(BUILDS)} release builds share one build of the core ({len(reference)} units)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

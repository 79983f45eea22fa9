#!/usr/bin/env python3
"""Fails when the native module's public names or signatures drift from ``_native.pyi``.

Compares, against the installed ``mcpaxle._native``: the module's public names (functions,
classes, values); each class's public methods and properties (a property must be a property,
a method a method); and the parameters of every function, method and constructor (names,
kinds, which have defaults). Run with the interpreter the package is installed in:

    python bindings-python/scripts/check_stubs.py
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

STUB = Path(__file__).resolve().parent.parent / "python" / "mcpaxle" / "_native.pyi"
KINDS = {
    "posonly": inspect.Parameter.POSITIONAL_ONLY,
    "arg": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "vararg": inspect.Parameter.VAR_POSITIONAL,
    "kwonly": inspect.Parameter.KEYWORD_ONLY,
    "kwarg": inspect.Parameter.VAR_KEYWORD,
}

Param = tuple[str, inspect._ParameterKind, bool]


def stub_params(fn: ast.FunctionDef, method: bool) -> list[Param]:
    a = fn.args
    out: list[Param] = []
    positional = [(x, KINDS["posonly"]) for x in a.posonlyargs] + [(x, KINDS["arg"]) for x in a.args]
    first_default = len(positional) - len(a.defaults)
    for i, (x, kind) in enumerate(positional):
        out.append((x.arg, kind, i >= first_default))
    if a.vararg:
        out.append((a.vararg.arg, KINDS["vararg"], False))
    for x, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((x.arg, KINDS["kwonly"], d is not None))
    if a.kwarg:
        out.append((a.kwarg.arg, KINDS["kwarg"], False))
    if method:
        out = out[1:]
    return [(n, k if k is not KINDS["posonly"] else KINDS["arg"], d) for n, k, d in out]


def runtime_params(obj: object, method: bool) -> list[Param] | None:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if method and params and params[0].name in ("self", "$self"):
        params = params[1:]
    return [(p.name, p.kind if p.kind is not KINDS["posonly"] else KINDS["arg"], p.default is not inspect.Parameter.empty) for p in params]


def is_property(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def main() -> int:
    module = importlib.import_module("mcpaxle._native")
    tree = ast.parse(STUB.read_text(), str(STUB))
    errors: list[str] = []

    stub_funcs: dict[str, ast.FunctionDef] = {}
    stub_classes: dict[str, ast.ClassDef] = {}
    stub_values: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            stub_funcs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            stub_classes[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stub_values.add(node.target.id)
    helper_aliases = {"JsonObject", "Invoke"}

    runtime_names = {n for n in dir(module) if not n.startswith("_")} | {"__version__"}
    stub_names = set(stub_funcs) | set(stub_classes) | stub_values
    for n in sorted(runtime_names - stub_names):
        errors.append(f"{n}: in the native module, missing from the stub")
    for n in sorted(stub_names - runtime_names - helper_aliases):
        errors.append(f"{n}: in the stub, missing from the native module")

    for name, fn in stub_funcs.items():
        if name not in runtime_names:
            continue
        rt = runtime_params(getattr(module, name), method=False)
        st = stub_params(fn, method=False)
        if rt is not None and rt != st:
            errors.append(f"{name}(): stub parameters {st} != native {rt}")

    for cname, cls_node in stub_classes.items():
        if cname not in runtime_names:
            continue
        cls = getattr(module, cname)
        stub_members = {n.name: n for n in cls_node.body if isinstance(n, ast.FunctionDef)}
        runtime_members = {n: v for n, v in vars(cls).items() if not n.startswith("_") or n == "__call__"}
        has_new = "__new__" in vars(cls)
        init = stub_members.pop("__init__", None)
        if has_new and init is None:
            errors.append(f"{cname}: constructible natively, the stub has no __init__")
        if init is not None and not has_new:
            errors.append(f"{cname}: the stub has an __init__, the native class cannot be constructed")
        if init is not None and has_new:
            rt = runtime_params(cls, method=False)
            st = stub_params(init, method=True)
            if rt is not None and rt != st:
                errors.append(f"{cname}(): stub parameters {st} != native {rt}")
        for m in sorted(set(runtime_members) - set(stub_members)):
            errors.append(f"{cname}.{m}: in the native class, missing from the stub")
        for m in sorted(set(stub_members) - set(runtime_members)):
            errors.append(f"{cname}.{m}: in the stub, missing from the native class")
        for m, node in stub_members.items():
            if m not in runtime_members:
                continue
            value = runtime_members[m]
            native_property = type(value).__name__ == "getset_descriptor"
            if is_property(node) != native_property:
                errors.append(f"{cname}.{m}: {'a property' if native_property else 'a method'} natively, not in the stub")
                continue
            if not native_property:
                rt = runtime_params(value, method=True)
                st = stub_params(node, method=True)
                if rt is not None and rt != st:
                    errors.append(f"{cname}.{m}(): stub parameters {st} != native {rt}")

    if errors:
        print(f"{STUB.name} drifted from mcpaxle._native ({len(errors)} difference(s)):", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    print(f"{STUB.name}: matches mcpaxle._native ({len(runtime_names)} names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

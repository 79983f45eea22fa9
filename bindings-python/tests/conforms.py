"""Checks a value against a type of :mod:`mcpaxle.types` at run time: whether the dicts the
client returns are what their ``TypedDict`` says (required keys there, each value of its type).
A small structural checker, for the tests only: TypedDict, unions, ``Literal``, ``list``,
``dict``, the JSON scalars and ``Any``."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, NotRequired, Union

import mcpaxle.types


def mismatches(value: Any, hint: Any, path: str = "$") -> list[str]:
    """What in ``value`` does not match ``hint`` (empty when it conforms)."""
    if isinstance(hint, typing.ForwardRef):
        hint = typing._eval_type(hint, vars(mcpaxle.types), None)  # type: ignore[attr-defined]
    if hint is Any:
        return []
    if hint is None or hint is type(None):
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object ({hint.__name__})"]
        out: list[str] = []
        for key, h in typing.get_type_hints(hint, include_extras=True).items():
            optional = typing.get_origin(h) is NotRequired
            if optional:
                h = typing.get_args(h)[0]
            if key in value:
                out += mismatches(value[key], h, f"{path}.{key}")
            elif not optional:
                out.append(f"{path}: {hint.__name__} requires {key!r}, missing from {sorted(value)}")
        return out
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {args}"]
    if origin in (Union, types.UnionType):
        found = [mismatches(value, a, path) for a in args]
        if any(not f for f in found):
            return []
        return [f"{path}: {value!r} matches no member of {hint}: " + "; ".join(m for f in found for m in f[:1])]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not an array"]
        return [m for i, v in enumerate(value) for m in mismatches(v, args[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        return [m for k, v in value.items() for m in mismatches(v, args[1], f"{path}.{k}")]
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint in (str, bool):
        ok = isinstance(value, hint)
    else:
        raise TypeError(f"conforms cannot check {hint!r}")
    return [] if ok else [f"{path}: {value!r} is not a {hint.__name__}"]

"""Type hints to JSON Schema (2020-12), and JSON arguments back to the annotated types.

Supported: ``str``, ``int``, ``float``, ``bool``, ``None``, ``bytes`` (base64), ``Any``,
``list``/``set``/``tuple``/``Sequence`` of X, ``dict``/``Mapping`` of str to X, ``Optional``
and unions, ``Literal``, ``Enum``, ``TypedDict``, dataclasses, pydantic models (when pydantic
is installed), ``datetime``/``date``/``time``/``UUID``/``Path``/``Decimal`` (strings with a
format), and ``Annotated[X, "description"]`` or ``Annotated[X, Field(...)]``.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import inspect
import re
import sys
import types
import typing
from typing import Any, Callable, Literal, Union

from .errors import UsageError

__all__ = ["Field", "Params", "converter", "output_schema", "params_of", "schema_of"]

_MISSING: Any = dataclasses.MISSING


class _Unset:
    """No default (a :class:`Field` that only describes)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclasses.dataclass(frozen=True)
class Field:
    """Describes a parameter or a field: ``Annotated[int, Field(description="Days ahead",
    ge=1, le=14)]``, or as a default value: ``days: int = Field(3, description=...)``."""

    default: Any = UNSET
    description: str | None = None
    title: str | None = None
    examples: list[Any] | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    json_schema: dict[str, Any] | None = None

    def apply(self, s: dict[str, Any]) -> dict[str, Any]:
        """Adds this field's keywords to a schema."""
        s = dict(s)
        pairs = (
            ("description", self.description),
            ("title", self.title),
            ("examples", self.examples),
            ("minimum", self.ge),
            ("exclusiveMinimum", self.gt),
            ("maximum", self.le),
            ("exclusiveMaximum", self.lt),
            ("pattern", self.pattern),
        )
        for key, v in pairs:
            if v is not None:
                s[key] = v
        if self.min_length is not None:
            s["minItems" if s.get("type") == "array" else "minLength"] = self.min_length
        if self.max_length is not None:
            s["maxItems" if s.get("type") == "array" else "maxLength"] = self.max_length
        if self.json_schema:
            s.update(self.json_schema)
        return s


#: Standard-library value types, by (module, name): looked up without importing their modules
#: (decimal, uuid and pathlib cost memory in every server that never uses them).
_FORMATS: dict[tuple[str, str], dict[str, Any]] = {
    ("datetime", "datetime"): {"type": "string", "format": "date-time"},
    ("datetime", "date"): {"type": "string", "format": "date"},
    ("datetime", "time"): {"type": "string", "format": "time"},
    ("datetime", "timedelta"): {"type": "string", "format": "duration"},
    ("uuid", "UUID"): {"type": "string", "format": "uuid"},
    ("pathlib", "Path"): {"type": "string"},
    ("pathlib", "PurePath"): {"type": "string"},
    ("decimal", "Decimal"): {"type": "number"},
}


def _format_of(tp: Any) -> dict[str, Any] | None:
    """The schema of a standard-library value type (datetime, UUID, Path, Decimal), if ``tp``
    is one."""
    if not isinstance(tp, type):
        return None
    return _FORMATS.get((tp.__module__, tp.__qualname__))


_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    set: {"type": "array", "uniqueItems": True},
    frozenset: {"type": "array", "uniqueItems": True},
    dict: {"type": "object"},
    Any: {},
    object: {},
    inspect.Parameter.empty: {},
}

_ARRAYS = (list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection, cabc.Iterator, typing.Sequence)
_SETS = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPS = (dict, cabc.Mapping, cabc.MutableMapping)


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_json_schema") and hasattr(tp, "model_validate")


def _is_typeddict(tp: Any) -> bool:
    return typing.is_typeddict(tp) or (sys.version_info < (3, 11) and isinstance(tp, type) and hasattr(tp, "__required_keys__"))


def _hints(tp: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, localns=localns, include_extras=True)
    except Exception as e:  # a forward reference that cannot be resolved
        raise UsageError(f"cannot read the type hints of {tp!r}: {e}") from e


def _class_doc(tp: type) -> str | None:
    doc = tp.__doc__
    if not doc or doc.startswith(f"{tp.__name__}(") or doc in (dict.__doc__, "An enumeration."):
        return None  # generated ones: dataclasses, TypedDicts, enums before 3.11
    return inspect.cleandoc(doc)


class _Builder:
    """Builds schemas, collecting recursive types under ``$defs``."""

    def __init__(self, localns: dict[str, Any] | None = None) -> None:
        self.localns = localns
        self.defs: dict[str, Any] = {}
        self.stack: list[Any] = []
        self.recursive: set[Any] = set()

    def ref(self, tp: Any) -> dict[str, Any]:
        return {"$ref": f"#/$defs/{tp.__name__}"}

    def schema(self, tp: Any) -> dict[str, Any]:
        simple = _SIMPLE.get(tp) if _hashable(tp) else None
        if simple is not None:
            return dict(simple)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            s = self.schema(args[0])
            for meta in args[1:]:
                s = _apply_meta(s, meta)
            return s
        if _is_union(origin):
            return self.union(args)
        if origin is Literal:
            return _literal(args)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _literal(tuple(m.value for m in tp), title=tp.__name__, description=_class_doc(tp))
        if origin in _SETS:
            return {"type": "array", "items": self.schema(args[0]), "uniqueItems": True} if args else {"type": "array", "uniqueItems": True}
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.schema(args[0])}
            if args == ((),) or not args:
                return {"type": "array", "maxItems": 0}
            items = [self.schema(a) for a in args]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
        if origin in _ARRAYS:
            return {"type": "array", "items": self.schema(args[0])} if args else {"type": "array"}
        if origin in _MAPS:
            if args and args[1] not in (Any, object):
                return {"type": "object", "additionalProperties": self.schema(args[1])}
            return {"type": "object"}
        fmt = _format_of(tp)
        if fmt is not None:
            return dict(fmt)
        if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_typeddict(tp)):
            return self.structure(tp)
        if _is_model(tp):
            return self.model(tp)
        if isinstance(tp, typing.TypeVar):
            return {}
        if isinstance(tp, (str, typing.ForwardRef)):
            raise UsageError(f"unresolved forward reference {tp!r}: define the type before the function that uses it")
        raise UsageError(f"cannot make a JSON Schema for {tp!r}: annotate with a JSON type, a dataclass, a TypedDict, a pydantic model or Any")

    def union(self, args: tuple[Any, ...]) -> dict[str, Any]:
        nullable = any(a is type(None) or a is None for a in args)
        rest = [a for a in args if a is not type(None) and a is not None]
        if len(rest) == 1:
            s = self.schema(rest[0])
            return _nullable(s) if nullable else s
        arms = [self.schema(a) for a in rest]
        if nullable:
            arms.append({"type": "null"})
        return {"anyOf": arms}

    def structure(self, tp: type) -> dict[str, Any]:
        if tp in self.stack:
            self.recursive.add(tp)
            return self.ref(tp)
        self.stack.append(tp)
        try:
            props: dict[str, Any] = {}
            required: list[str] = []
            hints = _hints(tp, self.localns)
            if dataclasses.is_dataclass(tp):
                for f in dataclasses.fields(tp):
                    if not f.init:
                        continue
                    s = self.schema(hints.get(f.name, Any))
                    if f.metadata.get("description"):
                        s["description"] = f.metadata["description"]
                    if f.default is not _MISSING:
                        default = f.default
                        if isinstance(default, Field):
                            s = default.apply(s)
                            default = default.default
                        if default is not UNSET:
                            _set_default(s, default)
                        else:
                            required.append(f.name)
                    elif f.default_factory is _MISSING:
                        required.append(f.name)
                    props[f.name] = s
            else:
                req = getattr(tp, "__required_keys__", frozenset(hints))
                for name, hint in hints.items():
                    props[name] = self.schema(hint)
                    if name in req:
                        required.append(name)
            s: dict[str, Any] = {"type": "object", "title": tp.__name__}
            doc = _class_doc(tp)
            if doc:
                s["description"] = doc
            s["properties"] = props
            if required:
                s["required"] = required
        finally:
            self.stack.pop()
        if tp in self.recursive:
            self.defs[tp.__name__] = s
            return self.ref(tp)
        return s

    def model(self, tp: Any) -> dict[str, Any]:
        s = dict(tp.model_json_schema(ref_template="#/$defs/{model}"))
        self.defs.update(s.pop("$defs", {}))
        return s

    def root(self, s: dict[str, Any]) -> dict[str, Any]:
        if self.defs:
            s["$defs"] = self.defs
        return s


def _hashable(tp: Any) -> bool:
    try:
        hash(tp)
    except TypeError:
        return False
    return True


def _nullable(s: dict[str, Any]) -> dict[str, Any]:
    t = s.get("type")
    if isinstance(t, str) and "enum" not in s:
        return {**s, "type": [t, "null"]}
    return {"anyOf": [s, {"type": "null"}]}


def _literal(values: tuple[Any, ...], title: str | None = None, description: str | None = None) -> dict[str, Any]:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}
    kinds = {names.get(type(v)) for v in values}
    s: dict[str, Any] = {}
    if title:
        s["title"] = title
    if description:
        s["description"] = description
    if len(kinds) == 1 and None not in kinds:
        s["type"] = kinds.pop()
    if len(values) == 1:
        s["const"] = values[0]
    else:
        s["enum"] = list(values)
    return s


def _apply_meta(s: dict[str, Any], meta: Any) -> dict[str, Any]:
    if isinstance(meta, str):
        return {**s, "description": meta}
    if isinstance(meta, Field):
        return meta.apply(s)
    desc = getattr(meta, "description", None)  # a pydantic FieldInfo, or anything alike
    if isinstance(desc, str):
        s = {**s, "description": desc}
    return s


def _set_default(s: dict[str, Any], default: Any) -> None:
    from ._convert import to_jsonable

    try:
        s["default"] = to_jsonable(default)
    except TypeError:
        pass


def schema_of(tp: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of a type (recursive types under a root ``$defs``)."""
    b = _Builder(localns)
    return b.root(b.schema(tp))


# ---------------------------------------------------------------------------------------------
# Parameters of a handler


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|Returns?|Yields?|Raises|Examples?|Notes?|See Also|Attributes)\s*:?\s*$")
_PARAM_SECTIONS = ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments", "Other Parameters")
_GOOGLE_ENTRY = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\s*\*{0,2}(\w+)\s*(?::.*)?$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The description (the docstring without its parameter section) and the per-parameter
    descriptions of a Google-style (``Args:``), NumPy-style (``Parameters`` + dashes) or
    Sphinx-style (``:param x:``) docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    params: dict[str, str] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        m = _SPHINX_PARAM.match(line)
        if m:
            params[m.group(1)] = m.group(2).strip()
            i += 1
            continue
        sec = _SECTION.match(line)
        if not (sec and sec.group(1) in _PARAM_SECTIONS):
            out.append(line)
            i += 1
            continue
        numpy = i + 1 < n and bool(lines[i + 1].strip()) and set(lines[i + 1].strip()) == {"-"}
        base = _indent(line)
        i += 2 if numpy else 1
        current: str | None = None
        entry: int | None = None
        while i < n:
            raw = lines[i]
            if not raw.strip():
                i += 1
                continue
            ind = _indent(raw)
            if ind <= base and (_SECTION.match(raw) or not numpy):
                break
            if entry is None:
                entry = ind
            if ind == entry:
                em = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(raw)
                if not em:
                    break
                current = em.group(1)
                params[current] = "" if numpy else em.group(2).strip()
            elif current is not None:
                params[current] = (params[current] + " " + raw.strip()).strip()
            i += 1
    text = "\n".join(out).strip()
    return (text or None), params


@dataclasses.dataclass
class Params:
    """A handler's signature, read once at registration."""

    #: JSON Schema of the arguments (root type object).
    schema: dict[str, Any]
    #: Names of the parameters taken from the arguments.
    names: frozenset[str]
    #: The parameter receiving the Context, if any.
    ctx: str | None
    #: Converters of arguments whose Python type is not their JSON type.
    converters: dict[str, Callable[[Any], Any]]
    #: Whether the function takes **kwargs (unknown arguments are passed on).
    var_kw: bool
    #: The description from the docstring.
    description: str | None
    #: Parameter descriptions (for prompt arguments).
    descriptions: dict[str, str]
    #: Names of required parameters, in order.
    required: list[str]
    #: The type hint of each parameter taken from the arguments.
    hints: dict[str, Any]


def _is_context(hint: Any) -> bool:
    from ._context import Context

    if hint is Context:
        return True
    if typing.get_origin(hint) is typing.Annotated:
        return _is_context(typing.get_args(hint)[0])
    if _is_union(typing.get_origin(hint)):
        return any(_is_context(a) for a in typing.get_args(hint))
    return isinstance(hint, type) and issubclass(hint, Context)


def type_hints(fn: Callable[..., Any], localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """The resolved type hints of a function. ``localns``: the namespace of the code that
    registered it, for types defined inside a function (``from __future__ import
    annotations`` makes every hint a string to resolve)."""
    return typing.get_type_hints(fn, localns=localns, include_extras=True)


def params_of(fn: Callable[..., Any], *, skip: tuple[str, ...] = (), localns: dict[str, Any] | None = None) -> Params:
    """Reads a handler's parameters: schema, converters and the Context parameter."""
    sig = inspect.signature(fn)
    try:
        hints = type_hints(fn, localns)
    except Exception as e:
        raise UsageError(f"cannot read the type hints of {getattr(fn, '__qualname__', fn)!r}: {e}") from e
    description, docs = parse_docstring(inspect.getdoc(fn))
    b = _Builder(localns)
    props: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    ctx: str | None = None
    var_kw = False
    param_hints: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise UsageError(f"{fn.__qualname__}: positional-only parameter {p.name!r} cannot receive a named argument")
        hint = hints.get(p.name, p.annotation)
        if _is_context(hint) or (hint is inspect.Parameter.empty and p.name in ("ctx", "context")):
            ctx = p.name
            continue
        if p.name in skip:
            continue
        s = b.schema(hint)
        default = p.default
        if isinstance(default, Field):
            s = default.apply(s)
            default = default.default
        if p.name in docs and "description" not in s:
            s["description"] = docs[p.name]
        if default is inspect.Parameter.empty or default is UNSET:
            required.append(p.name)
        else:
            _set_default(s, default)
        props[p.name] = s
        param_hints[p.name] = hint
        conv = converter(hint, localns)
        if conv is not None:
            converters[p.name] = conv
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return Params(
        schema=b.root(schema),
        names=frozenset(props),
        ctx=ctx,
        converters=converters,
        var_kw=var_kw,
        description=description,
        descriptions=docs,
        required=required,
        hints=param_hints,
    )


def fields_with_defaults(fn: Callable[..., Any]) -> dict[str, Any]:
    """Defaults given as ``Field(default)`` in a signature (Python would pass the Field)."""
    out = {}
    for p in inspect.signature(fn).parameters.values():
        if isinstance(p.default, Field) and p.default.default is not UNSET:
            out[p.name] = p.default.default
    return out


# ---------------------------------------------------------------------------------------------
# Output


def output_schema(tp: Any, localns: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, bool]:
    """The ``outputSchema`` for a return annotation and whether results are wrapped as
    ``{"result": value}`` (a non-object type). ``(None, False)``: unstructured output."""
    from ._content import Audio, EmbeddedResource, Image, Message, ResourceLink, ToolResult

    if tp is inspect.Signature.empty or tp is None or tp is type(None) or tp is Any or tp is str:
        return None, False
    base = tp
    while typing.get_origin(base) is typing.Annotated:
        base = typing.get_args(base)[0]
    origin = typing.get_origin(base)
    if origin is not None and typing.get_origin(base) in (cabc.Awaitable, cabc.Coroutine):
        return None, False
    unstructured = (Image, Audio, EmbeddedResource, ResourceLink, ToolResult, Message, bytes)
    if isinstance(base, type) and issubclass(base, unstructured):
        return None, False
    if base in (list, tuple, set, frozenset, object):
        return None, False  # a list of what? content or data: decided by the value
    if origin in _ARRAYS or origin in (list, tuple) or _is_union(origin):
        inner = typing.get_args(base)
        if any(isinstance(a, type) and issubclass(a, unstructured + (str,)) for a in inner) and _is_union(origin):
            return None, False
        if not _is_union(origin) and (not inner or inner[0] in (Any, object) or (isinstance(inner[0], type) and issubclass(inner[0], unstructured))):
            return None, False
    b = _Builder(localns)
    s = b.schema(tp)
    if s.get("type") == "object" and "$ref" not in s:
        return b.root(s), False
    if "$ref" in s and s["$ref"].startswith("#/$defs/") and b.defs.get(s["$ref"][8:], {}).get("type") == "object":
        return b.root(s), False
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": s}, "required": ["result"]}
    return b.root(wrapped), True


# ---------------------------------------------------------------------------------------------
# Arguments back to Python types


def converter(tp: Any, localns: dict[str, Any] | None = None) -> Callable[[Any], Any] | None:
    """A function turning a JSON argument into the annotated type, or None when the JSON
    value already is one."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return converter(args[0], localns)
    if tp is float:
        return float
    if tp is bytes:
        import base64

        return base64.b64decode
    if _is_union(origin):
        rest = [a for a in args if a is not type(None) and a is not None]
        convs = [converter(a, localns) for a in rest]
        if len(rest) == 1 and convs[0] is not None:
            c = convs[0]
            return lambda v: None if v is None else c(v)
        return None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if origin in _SETS:
        c = converter(args[0], localns) if args else None
        kind = frozenset if origin in (frozenset,) else set
        return (lambda v: kind(c(x) for x in v)) if c else kind
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            c = converter(args[0], localns)
            return (lambda v: tuple(c(x) for x in v)) if c else tuple
        cs = [converter(a, localns) for a in args]
        return lambda v: tuple(c(x) if c else x for c, x in zip(cs, v))
    if tp is tuple:
        return tuple
    if tp in (set, frozenset):
        return tp
    if origin in _ARRAYS:
        c = converter(args[0], localns) if args else None
        return (lambda v: [c(x) for x in v]) if c else None
    if origin in _MAPS and args:
        c = converter(args[1], localns)
        return (lambda v: {k: c(x) for k, x in v.items()}) if c else None
    if _format_of(tp) is not None:
        return _format_converter(tp)
    if _is_model(tp):
        return tp.model_validate
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp, localns)
        convs = {f.name: converter(hints.get(f.name, Any), localns) for f in dataclasses.fields(tp) if f.init}
        convs = {k: c for k, c in convs.items() if c is not None}

        def to_dataclass(v: Any, tp: Any = tp, convs: dict[str, Any] = convs) -> Any:
            if not isinstance(v, dict):
                return v
            kw = {k: (convs[k](x) if k in convs else x) for k, x in v.items()}
            return tp(**kw)

        return to_dataclass
    if isinstance(tp, type) and _is_typeddict(tp):
        hints = _hints(tp, localns)
        convs = {k: converter(h, localns) for k, h in hints.items()}
        convs = {k: c for k, c in convs.items() if c is not None}
        if not convs:
            return None
        return lambda v: {k: (convs[k](x) if k in convs else x) for k, x in v.items()}
    return None


def _format_converter(tp: type) -> Callable[[Any], Any]:
    import datetime

    if tp is datetime.datetime:
        return lambda v: datetime.datetime.fromisoformat(v[:-1] + "+00:00" if v.endswith("Z") else v)
    if tp is datetime.date:
        return datetime.date.fromisoformat
    if tp is datetime.time:
        return datetime.time.fromisoformat
    return tp

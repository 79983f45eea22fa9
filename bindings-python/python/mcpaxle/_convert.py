"""Host values to JSON types. A handler's return value is converted by :func:`to_returned`
(bytes kept as bytes) and handed to the core, which shapes it into the result by one rule for
every binding (``core/src/server/shaping.rs``): nothing here decides what a result looks like."""

from __future__ import annotations

import base64
import dataclasses
import enum
from typing import Any

from ._content import Audio, EmbeddedResource, Image, Message, ResourceContents, ResourceLink, ToolResult

__all__ = ["content_block", "to_jsonable", "to_returned"]

_SCALARS = (str, int, float, bool, type(None))
_CONTENT_TYPES = (Image, Audio, EmbeddedResource, ResourceLink)
_BYTES = (bytes, bytearray, memoryview)


def _convert(v: Any, keep_bytes: bool) -> Any:
    t = type(v)
    if t in _SCALARS:
        return v
    if t is dict:
        return {k if type(k) is str else _key(k): _convert(x, keep_bytes) for k, x in v.items()}
    if t is list or t is tuple:
        return [_convert(x, keep_bytes) for x in v]
    if isinstance(v, enum.Enum):
        return _convert(v.value, keep_bytes)
    if isinstance(v, _SCALARS):  # subclasses of str, int, float
        return v
    if isinstance(v, _BYTES):
        return bytes(v) if keep_bytes else base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, _CONTENT_TYPES):
        return _convert(v.to_content(), keep_bytes)
    if isinstance(v, ToolResult):
        return _tool_result(v, keep_bytes)
    if isinstance(v, Message):
        return {"role": v.role, "content": _convert(v.content, keep_bytes)}
    if isinstance(v, ResourceContents):
        return _resource_contents(v, keep_bytes)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _convert(getattr(v, f.name), keep_bytes) for f in dataclasses.fields(v)}
    if hasattr(v, "model_dump") and not isinstance(v, type):
        return v.model_dump(mode="json")
    if isinstance(v, dict):
        return {k if type(k) is str else _key(k): _convert(x, keep_bytes) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_convert(x, keep_bytes) for x in v]
    if hasattr(v, "isoformat"):
        return v.isoformat()
    import decimal
    import pathlib
    import uuid

    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (uuid.UUID, pathlib.PurePath)):
        return str(v)
    raise TypeError(f"a {t.__name__} cannot be converted to JSON")


def to_jsonable(v: Any) -> Any:
    """A value as JSON types: dataclasses, pydantic models, TypedDicts (dicts), enums, dates,
    UUIDs, paths, sets, content helpers and bytes (base64) are converted; anything else raises
    TypeError."""
    return _convert(v, False)


def to_returned(v: Any) -> Any:
    """A handler's return value for the core's shaping rule: as :func:`to_jsonable`, but
    ``bytes`` stay bytes (the core makes them an image, audio or blob as the rule says)."""
    return _convert(v, True)


def _tool_result(r: ToolResult, keep_bytes: bool) -> dict[str, Any]:
    c = r.content
    blocks = [] if c is None else list(c) if isinstance(c, (list, tuple)) else [c]
    out: dict[str, Any] = {"content": _convert(blocks, keep_bytes)}
    if r.structured is not None:
        out["structuredContent"] = _convert(r.structured, False)
    if r.is_error:
        out["isError"] = True
    if r.meta:
        out["_meta"] = r.meta
    return out


def _resource_contents(v: ResourceContents, keep_bytes: bool) -> dict[str, Any]:
    """Contents the core completes with the URI read and the registered MIME type."""
    c: dict[str, Any] = {}
    if v.uri:
        c["uri"] = v.uri
    if v.mime_type:
        c["mimeType"] = v.mime_type
    if isinstance(v.data, _BYTES):
        c["blob"] = base64.b64encode(bytes(v.data)).decode("ascii")
    else:
        c["text"] = str(v.data)
    if v.meta:
        c["_meta"] = v.meta
    return c


def content_block(v: Any) -> dict[str, Any]:
    """One content block (of a sampling message), made by the core's shaping rule."""
    from ._native import content_block as native_block

    return native_block(to_returned(v))


def _key(k: Any) -> str:
    if isinstance(k, enum.Enum):
        k = k.value
    if isinstance(k, (str, int, float, bool)):
        return str(k)
    raise TypeError(f"dict keys must be strings to convert to JSON, not {type(k).__name__}")

"""Return values of handlers to results in the protocol's shape (dicts the native side
decodes into the core's typed results)."""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
from typing import Any

from ._content import Audio, EmbeddedResource, Image, Message, ResourceContents, ResourceLink, ToolResult

__all__ = ["completion_result", "content_block", "prompt_result", "resource_result", "to_jsonable", "tool_result"]

_SCALARS = (str, int, float, bool, type(None))
_CONTENT_TYPES = (Image, Audio, EmbeddedResource, ResourceLink)


def to_jsonable(v: Any) -> Any:
    """A value as JSON types: dataclasses, pydantic models, TypedDicts (dicts), enums, dates,
    UUIDs, paths, sets and bytes (base64) are converted; anything else raises TypeError."""
    t = type(v)
    if t in _SCALARS:
        return v
    if t is dict:
        return {k if type(k) is str else _key(k): to_jsonable(x) for k, x in v.items()}
    if t is list or t is tuple:
        return [to_jsonable(x) for x in v]
    if isinstance(v, enum.Enum):
        return to_jsonable(v.value)
    if isinstance(v, _SCALARS):  # subclasses of str, int, float
        return v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: to_jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if hasattr(v, "model_dump") and not isinstance(v, type):
        return v.model_dump(mode="json")
    if isinstance(v, dict):
        return {k if type(k) is str else _key(k): to_jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
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


def _key(k: Any) -> str:
    if isinstance(k, enum.Enum):
        k = k.value
    if isinstance(k, (str, int, float, bool)):
        return str(k)
    raise TypeError(f"dict keys must be strings to convert to JSON, not {type(k).__name__}")


def _dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _sniff(data: bytes) -> dict[str, Any]:
    """Bytes returned by a tool: an image or audio block when the format is recognised,
    else an embedded binary resource."""
    b64 = base64.b64encode(data).decode("ascii")
    for magic, kind, mime in (
        (b"\x89PNG\r\n\x1a\n", "image", "image/png"),
        (b"\xff\xd8\xff", "image", "image/jpeg"),
        (b"GIF8", "image", "image/gif"),
        (b"ID3", "audio", "audio/mpeg"),
        (b"OggS", "audio", "audio/ogg"),
        (b"fLaC", "audio", "audio/flac"),
    ):
        if data.startswith(magic):
            return {"type": kind, "data": b64, "mimeType": mime}
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return {"type": "image", "data": b64, "mimeType": "image/webp"}
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return {"type": "audio", "data": b64, "mimeType": "audio/wav"}
    return {"type": "resource", "resource": {"uri": "mcpaxle://bytes", "mimeType": "application/octet-stream", "blob": b64}}


def content_block(v: Any) -> dict[str, Any]:
    """One content block: a str (text), an Image/Audio/EmbeddedResource/ResourceLink, bytes,
    a content dict (with "type"), or any JSON-able value (as its JSON text)."""
    if type(v) is str:
        return {"type": "text", "text": v}
    if isinstance(v, _CONTENT_TYPES):
        return v.to_content()
    if isinstance(v, str):
        return {"type": "text", "text": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return _sniff(bytes(v))
    if isinstance(v, dict) and isinstance(v.get("type"), str):
        return v
    return {"type": "text", "text": _dumps(to_jsonable(v))}


def _is_content(v: Any) -> bool:
    return isinstance(v, (str, bytes, bytearray, memoryview) + _CONTENT_TYPES) or (isinstance(v, dict) and isinstance(v.get("type"), str))


#: How a tool's return value is turned into a result.
AUTO, STRUCTURED, WRAPPED = 0, 1, 2


def tool_result(v: Any, mode: int = AUTO) -> dict[str, Any]:
    """A ``CallToolResult`` for a tool's return value. ``STRUCTURED``: the value is the
    ``structuredContent`` (an object schema was declared); ``WRAPPED``: it is
    ``{"result": value}``; ``AUTO``: decided by the value's type."""
    t = type(v)
    if t is str:
        return {"content": [{"type": "text", "text": v}]}
    if isinstance(v, ToolResult):
        return _full(v)
    if mode == STRUCTURED:
        data = to_jsonable(v)
        return {"content": [{"type": "text", "text": _dumps(data)}], "structuredContent": data}
    if mode == WRAPPED:
        data = to_jsonable(v)
        return {"content": [{"type": "text", "text": _dumps(data)}], "structuredContent": {"result": data}}
    if v is None:
        return {"content": []}
    if isinstance(v, _CONTENT_TYPES) or isinstance(v, (bytes, bytearray, memoryview)):
        return {"content": [content_block(v)]}
    if isinstance(v, (list, tuple)) and v and all(_is_content(x) for x in v):
        return {"content": [content_block(x) for x in v]}
    if isinstance(v, str):
        return {"content": [{"type": "text", "text": str(v)}]}
    data = to_jsonable(v)
    if isinstance(data, dict):
        return {"content": [{"type": "text", "text": _dumps(data)}], "structuredContent": data}
    return {"content": [{"type": "text", "text": _dumps(data)}]}


def _full(r: ToolResult) -> dict[str, Any]:
    c = r.content
    if c is None:
        blocks: list[Any] = []
    elif isinstance(c, (list, tuple)):
        blocks = [content_block(x) for x in c]
    else:
        blocks = [content_block(c)]
    out: dict[str, Any] = {"content": blocks}
    if r.structured is not None:
        data = to_jsonable(r.structured)
        out["structuredContent"] = data
        if not blocks:
            out["content"] = [{"type": "text", "text": _dumps(data)}]
    if r.is_error:
        out["isError"] = True
    if r.meta:
        out["_meta"] = r.meta
    return out


def _contents(v: Any, uri: str, mime: str | None) -> dict[str, Any]:
    if type(v) is str or isinstance(v, str):
        return {"uri": uri, "mimeType": mime or "text/plain", "text": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"uri": uri, "mimeType": mime or "application/octet-stream", "blob": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, ResourceContents):
        c = _contents(v.data, v.uri or uri, v.mime_type or mime)
        if v.meta:
            c["_meta"] = v.meta
        return c
    if isinstance(v, EmbeddedResource):
        return v.contents()
    return {"uri": uri, "mimeType": mime or "application/json", "text": _dumps(to_jsonable(v))}


def resource_result(v: Any, uri: str, mime: str | None) -> dict[str, Any]:
    """A ``ReadResourceResult``: str (text), bytes (blob), ResourceContents, or any JSON-able
    value (as JSON text); a list gives several contents."""
    if isinstance(v, list) and any(isinstance(x, (ResourceContents, EmbeddedResource)) for x in v):
        return {"contents": [_contents(x, uri, mime) for x in v]}
    return {"contents": [_contents(v, uri, mime)]}


def _message(m: Any) -> dict[str, Any]:
    if isinstance(m, Message):
        return {"role": m.role, "content": content_block(m.content)}
    if isinstance(m, dict) and "role" in m:
        content = m.get("content")
        return {**m, "content": content if isinstance(content, dict) else content_block(content)}
    return {"role": "user", "content": content_block(m)}


def prompt_result(v: Any, description: str | None) -> dict[str, Any]:
    """A ``GetPromptResult``: a str (one user message), a Message, content, or a list of
    those; a dict with "messages" is taken as the result itself."""
    if isinstance(v, dict) and "messages" in v:
        out = dict(v)
        out["messages"] = [_message(m) for m in v["messages"]]
    elif isinstance(v, (list, tuple)):
        out = {"messages": [_message(m) for m in v]}
    else:
        out = {"messages": [_message(v)]}
    if description and "description" not in out:
        out["description"] = description
    return out


def completion_result(v: Any) -> dict[str, Any]:
    """A ``CompleteResult``: a list of strings (at most 100 are sent; ``total`` and
    ``hasMore`` say how many there were), or a dict with "values"."""
    if v is None:
        values: list[str] = []
        extra: dict[str, Any] = {}
    elif isinstance(v, dict):
        values = [str(x) for x in v.get("values", [])]
        extra = {k: v[k] for k in ("total", "hasMore") if k in v}
    else:
        values = [str(x) for x in v]
        extra = {}
    if len(values) > 100:
        extra.setdefault("total", len(values))
        extra["hasMore"] = True
        values = values[:100]
    return {"completion": {"values": values, **extra}}

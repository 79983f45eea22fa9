"""Content helpers: what a tool, a prompt or a resource returns besides plain values."""

from __future__ import annotations

import base64 as _b64
import os
from typing import Any, Literal

__all__ = [
    "Audio",
    "EmbeddedResource",
    "Image",
    "Message",
    "ResourceContents",
    "ResourceLink",
    "ToolResult",
    "assistant",
    "user",
]


def _read(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _guess(path: str | os.PathLike[str] | None, default: str) -> str:
    if path is None:
        return default
    import mimetypes

    return mimetypes.guess_type(os.fspath(path))[0] or default


class _Binary:
    __slots__ = ("_b64", "mime_type")
    _type = ""
    _default_mime = ""

    def __init__(
        self,
        data: bytes | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        base64: str | None = None,
        mime_type: str | None = None,
    ) -> None:
        if sum(x is not None for x in (data, path, base64)) != 1:
            raise TypeError(f"{type(self).__name__}() takes exactly one of data, path or base64")
        if base64 is None:
            raw = data if data is not None else _read(path)  # type: ignore[arg-type]
            base64 = _b64.b64encode(raw).decode("ascii")
        self._b64 = base64
        self.mime_type = mime_type or _guess(path, self._default_mime)

    @property
    def base64(self) -> str:
        """The data, base64-encoded."""
        return self._b64

    @property
    def data(self) -> bytes:
        """The raw bytes."""
        return _b64.b64decode(self._b64)

    def to_content(self) -> dict[str, Any]:
        """The content block (protocol shape)."""
        return {"type": self._type, "data": self._b64, "mimeType": self.mime_type}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mime_type={self.mime_type!r}, {len(self._b64) * 3 // 4} bytes)"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self._b64, self.mime_type) == (other._b64, other.mime_type)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


class Image(_Binary):
    """An image content block: ``Image(png_bytes)``, ``Image(path="chart.png")`` or
    ``Image(base64="iVBOR...", mime_type="image/png")``. The MIME type defaults to the path's,
    else ``image/png``."""

    __slots__ = ()
    _type = "image"
    _default_mime = "image/png"


class Audio(_Binary):
    """An audio content block, like :class:`Image` (MIME type default ``audio/wav``)."""

    __slots__ = ()
    _type = "audio"
    _default_mime = "audio/wav"


class EmbeddedResource:
    """A resource embedded in a result: text (``text=``) or binary (``blob=`` bytes)."""

    __slots__ = ("uri", "text", "blob", "mime_type", "meta")

    def __init__(
        self,
        uri: str,
        text: str | None = None,
        *,
        blob: bytes | None = None,
        mime_type: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if (text is None) == (blob is None):
            raise TypeError("EmbeddedResource() takes exactly one of text or blob")
        self.uri, self.text, self.blob, self.mime_type, self.meta = uri, text, blob, mime_type, meta

    def contents(self) -> dict[str, Any]:
        """The resource contents (protocol shape)."""
        c: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            c["mimeType"] = self.mime_type
        if self.text is not None:
            c["text"] = self.text
        else:
            c["blob"] = _b64.b64encode(self.blob or b"").decode("ascii")
        if self.meta:
            c["_meta"] = self.meta
        return c

    def to_content(self) -> dict[str, Any]:
        """The content block (protocol shape)."""
        return {"type": "resource", "resource": self.contents()}

    def __repr__(self) -> str:
        return f"EmbeddedResource({self.uri!r}, mime_type={self.mime_type!r})"


class ResourceLink:
    """A link to a resource the client can read (``resource_link`` content)."""

    __slots__ = ("uri", "name", "title", "description", "mime_type", "size")

    def __init__(
        self,
        uri: str,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
    ) -> None:
        self.uri, self.name, self.title, self.description, self.mime_type, self.size = uri, name, title, description, mime_type, size

    def to_content(self) -> dict[str, Any]:
        """The content block (protocol shape)."""
        c: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, v in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type), ("size", self.size)):
            if v is not None:
                c[key] = v
        return c


class ToolResult:
    """A tool result in full: content blocks (anything a tool may return: str, Image, ...),
    ``structured`` content, ``is_error`` and ``meta``."""

    __slots__ = ("content", "structured", "is_error", "meta")

    def __init__(self, content: Any = None, *, structured: Any = None, is_error: bool = False, meta: dict[str, Any] | None = None) -> None:
        self.content, self.structured, self.is_error, self.meta = content, structured, is_error, meta


class Message:
    """A prompt message: ``Message("user", "text")`` or with an Image, Audio,
    EmbeddedResource or ResourceLink as content."""

    __slots__ = ("role", "content")

    def __init__(self, role: Literal["user", "assistant"], content: Any) -> None:
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', not {role!r}")
        self.role, self.content = role, content

    def __repr__(self) -> str:
        return f"Message({self.role!r}, {self.content!r})"


def user(content: Any) -> Message:
    """A user message."""
    return Message("user", content)


def assistant(content: Any) -> Message:
    """An assistant message."""
    return Message("assistant", content)


class ResourceContents:
    """What a resource read returns, when a plain ``str`` (text) or ``bytes`` (blob) is not
    enough: an explicit MIME type, another URI (a sub-resource), ``_meta``."""

    __slots__ = ("data", "mime_type", "uri", "meta")

    def __init__(self, data: str | bytes, *, mime_type: str | None = None, uri: str | None = None, meta: dict[str, Any] | None = None) -> None:
        self.data, self.mime_type, self.uri, self.meta = data, mime_type, uri, meta

"""Exceptions of mcpaxle: one class per kind of the core's errors.

Raise them from a handler to answer with that error; the library raises them too. Every class
derives from :class:`McpError` except :class:`InputRequired`, which is not an error but the
end of a Multi Round-Trip Request round and, like ``asyncio.CancelledError``, derives from
``BaseException`` so that ``except Exception`` in a handler does not swallow it.

>>> from mcpaxle.errors import ToolError
>>> raise ToolError("the city is unknown")  # doctest: +SKIP
"""

from __future__ import annotations

import builtins
from typing import Any

__all__ = [
    "Cancelled",
    "ForkError",
    "HeaderMismatch",
    "InputRequired",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "McpError",
    "MethodNotFound",
    "MissingCapability",
    "PanicError",
    "ParseError",
    "RemoteError",
    "TimeoutError",
    "ToolError",
    "TransportError",
    "UnsupportedProtocolVersion",
    "UsageError",
]


class McpError(Exception):
    """Base class: a stable ``kind``, a ``message``, optional JSON ``data`` and the JSON-RPC
    ``code`` the error is sent with."""

    #: The kind of the core's error this class stands for.
    kind: str = "internal"
    #: The JSON-RPC code of this kind.
    default_code: int = -32603

    def __init__(self, message: str = "", *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.code = self.default_code if code is None else code


class ParseError(McpError):
    """Invalid JSON (-32700)."""

    kind = "parse_error"
    default_code = -32700


class InvalidRequest(McpError):
    """Not a valid JSON-RPC request (-32600)."""

    kind = "invalid_request"
    default_code = -32600


class MethodNotFound(McpError):
    """Unknown or unavailable method (-32601)."""

    kind = "method_not_found"
    default_code = -32601


class InvalidParams(McpError):
    """Invalid parameters: unknown tool, prompt or resource, bad arguments (-32602)."""

    kind = "invalid_params"
    default_code = -32602


class InternalError(McpError):
    """An internal error (-32603)."""

    kind = "internal"
    default_code = -32603


class HeaderMismatch(McpError):
    """HTTP headers disagree with the body (-32020)."""

    kind = "header_mismatch"
    default_code = -32020


class MissingCapability(McpError):
    """The request needs a client capability the client did not declare (-32021).
    ``data`` is ``{"requiredCapabilities": {...}}``."""

    kind = "missing_capability"
    default_code = -32021

    @classmethod
    def requires(cls, *capabilities: str) -> MissingCapability:
        """The error for a request that needs these client capabilities (e.g. "sampling")."""
        names = ", ".join(capabilities)
        return cls(
            f"This request requires the client capability {names}, which the request's clientCapabilities do not declare",
            data={"requiredCapabilities": {c: {} for c in capabilities}},
        )


class UnsupportedProtocolVersion(McpError):
    """The protocol version is not supported (-32022)."""

    kind = "unsupported_protocol_version"
    default_code = -32022


class ToolError(McpError):
    """A failure the model should read: the tool call answers ``isError: true`` with this
    message as its text."""

    kind = "tool"


class Cancelled(McpError):
    """The request was cancelled."""

    kind = "cancelled"


class PanicError(McpError):
    """A Rust handler panicked; the request failed, the server goes on."""

    kind = "panic"


class TransportError(McpError):
    """An I/O or transport failure (e.g. the port is taken)."""

    kind = "transport"


class RemoteError(McpError):
    """The peer answered with a JSON-RPC error."""

    kind = "remote"


class TimeoutError(McpError, builtins.TimeoutError):  # noqa: A001 - the kind's name
    """A request timed out (also a built-in ``TimeoutError``)."""

    kind = "timeout"


class UsageError(McpError):
    """The library is used wrongly: a bad definition or configuration."""

    kind = "usage"


class ForkError(McpError, RuntimeError):
    """mcpaxle was used in a child process forked after its runtime started. The child has
    none of the runtime's threads: use mcpaxle in the parent only, start children with the
    ``spawn`` or ``forkserver`` start method, or fork before serving."""

    kind = "fork"


class InputRequired(BaseException):
    """The current MRTR round must end so that the client can answer the server's requests
    (elicitation, sampling, roots). Raised by ``Context.elicit``/``sample``/``list_roots``
    when the retry does not carry the answer yet; let it propagate out of the handler: the
    server answers with an ``InputRequiredResult`` and runs the handler again on the retry.
    Raise it yourself (after ``ctx.set_request_state(...)``) to ask for a retry with no
    requests."""

    kind = "input_required"

    def __init__(self, message: str = "input required", *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.code = code

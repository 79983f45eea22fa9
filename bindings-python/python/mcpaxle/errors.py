"""Exceptions of mcpaxle: one class per kind of the core's errors.

The kinds, their names and their JSON-RPC codes come from the core (``KINDS``, read from the
native module at import): each class below names its kind, takes the kind's code from the core,
and :func:`class_for_kind` finds the class of a kind. Every exception reads the same as in the
other bindings: ``kind`` (the kind's name, e.g. ``"invalid_params"``), ``code`` (the JSON-RPC
code, a number), ``message`` and ``data``.

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

from . import _native

__all__ = [
    "KINDS",
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
    "class_for_kind",
]

#: Every kind of the core's errors: its name and the JSON-RPC code it is sent with, in the
#: core's order (``ErrorKind::ALL``).
KINDS: dict[str, int] = dict(_native.error_kinds())

_CLASSES: dict[str, type[McpError] | type[InputRequired]] = {}


def class_for_kind(kind: str) -> type[McpError] | type[InputRequired]:
    """The exception class of a kind of the core's errors (a name of ``KINDS``)."""
    try:
        return _CLASSES[kind]
    except KeyError:
        raise ValueError(f"unknown error kind {kind!r}; the kinds are: {', '.join(KINDS)}") from None


def _register(cls: type[McpError] | type[InputRequired]) -> None:
    """Takes the class's code from the core; the first class of a kind is that kind's class."""
    if cls.kind not in KINDS:
        raise TypeError(f"{cls.__name__}.kind is {cls.kind!r}, which is not a kind of the core's errors: {', '.join(KINDS)}")
    cls.default_code = KINDS[cls.kind]
    _CLASSES.setdefault(cls.kind, cls)


class McpError(Exception):
    """Base class: a stable ``kind``, a ``message``, optional JSON ``data`` and the JSON-RPC
    ``code`` the error is sent with."""

    #: The name of the kind of the core's error this class stands for.
    kind: str = "internal"
    #: The JSON-RPC code of this kind (from the core, set when the class is defined).
    default_code: int = -32603

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _register(cls)

    def __init__(self, message: str = "", *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.code = self.default_code if code is None else code


class ParseError(McpError):
    """Invalid JSON (-32700)."""

    kind = "parse_error"


class InvalidRequest(McpError):
    """Not a valid JSON-RPC request (-32600)."""

    kind = "invalid_request"


class MethodNotFound(McpError):
    """Unknown or unavailable method (-32601)."""

    kind = "method_not_found"


class InvalidParams(McpError):
    """Invalid parameters: unknown tool, prompt or resource, bad arguments (-32602)."""

    kind = "invalid_params"


class InternalError(McpError):
    """An internal error (-32603)."""

    kind = "internal"


class HeaderMismatch(McpError):
    """HTTP headers disagree with the body (-32020)."""

    kind = "header_mismatch"


class MissingCapability(McpError):
    """The request needs a client capability the client did not declare (-32021).
    ``data`` is ``{"requiredCapabilities": {...}}``."""

    kind = "missing_required_client_capability"

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


class ForkError(UsageError, RuntimeError):
    """mcpaxle was used in a child process forked after its runtime started (a usage error:
    its ``kind`` is ``"usage"``). The child has none of the runtime's threads: use mcpaxle in
    the parent only, start children with the ``spawn`` or ``forkserver`` start method, or fork
    before serving."""


class InputRequired(BaseException):
    """The current MRTR round must end so that the client can answer the server's requests
    (elicitation, sampling, roots). Raised by ``Context.elicit``/``sample``/``list_roots``
    when the retry does not carry the answer yet; let it propagate out of the handler: the
    server answers with an ``InputRequiredResult`` and runs the handler again on the retry.
    Raise it yourself (after ``ctx.set_request_state(...)``) to ask for a retry with no
    requests."""

    kind = "input_required"
    #: The JSON-RPC code of this kind (from the core); an ``InputRequired`` is never sent as an
    #: error.
    default_code: int = -32603

    def __init__(self, message: str = "input required", *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.code = self.default_code if code is None else code


McpError.default_code = KINDS[McpError.kind]
_register(InputRequired)
_unclassed = [k for k in KINDS if k not in _CLASSES]
if _unclassed:
    raise ImportError(f"mcpaxle.errors has no class for the core's error kinds {_unclassed}: add one")

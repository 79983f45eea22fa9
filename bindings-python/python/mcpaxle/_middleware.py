"""Middleware: ``@server.middleware`` functions that see every request and can reject it,
change its result, or time it (the chain runs in the core; see :meth:`Server.middleware
<mcpaxle.Server.middleware>`)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Awaitable, Callable, Literal

from . import _native
from ._handlers import _failure
from .errors import InternalError, UsageError

__all__ = ["CallNext", "Item", "Middleware", "Request", "Visibility"]


@dataclasses.dataclass(frozen=True)
class Request:
    """One request as a middleware sees it (a snapshot: changing it changes nothing)."""

    #: The JSON-RPC id.
    id: int | str
    #: The method, e.g. ``"tools/call"``.
    method: str
    #: What it targets: the tool's or prompt's name, the resource's URI; ``None`` for lists.
    name: str | None
    #: The params as received (with ``_meta``).
    params: dict[str, Any]
    #: The HTTP headers (lowercase names); empty on stdio.
    headers: dict[str, str]
    #: The authenticated principal (with :class:`~mcpaxle.BearerAuth`, the token's subject).
    principal: str | None
    #: The bearer token's scopes, ``None`` without a token.
    scopes: tuple[str, ...] | None
    #: The bearer token's claims (:attr:`TokenInfo.claims <mcpaxle.TokenInfo.claims>`), ``None``
    #: without a token.
    claims: dict[str, Any] | None
    #: ``"modern"`` (2026-07-28) or ``"legacy"`` (a 2025-11-25 session).
    era: Literal["modern", "legacy"]
    #: The legacy session's id; ``None`` in the modern era.
    session_id: str | None

    @classmethod
    def _of(cls, d: dict[str, Any]) -> Request:
        scopes = d.get("scopes")
        return cls(
            id=d["id"],
            method=d["method"],
            name=d.get("name"),
            params=d.get("params") or {},
            headers=d.get("headers") or {},
            principal=d.get("principal"),
            scopes=None if scopes is None else tuple(scopes),
            claims=d.get("claims"),
            era=d["era"],
            session_id=d.get("sessionId"),
        )


#: ``await call_next()`` (or ``call_next(request)``, Starlette's way) runs the rest of the
#: chain and the method: the result dict, or the request's error raised as its ``McpError``.
CallNext = Callable[..., Awaitable[dict[str, Any]]]

#: ``async def mw(request, call_next) -> dict``.
Middleware = Callable[[Request, CallNext], Awaitable[dict[str, Any]]]


def make_middleware(fn: Middleware, what: str) -> Callable[[tuple[dict[str, Any], _native.CallNext]], Awaitable[dict[str, Any]]]:
    """The ``invoke((request, call_next))`` coroutine function the core calls for ``fn``."""
    if not inspect.iscoroutinefunction(fn):
        raise UsageError(f"{what} must be an async def mw(request, call_next) (it is {type(fn).__name__})")

    async def invoke(payload: tuple[dict[str, Any], _native.CallNext]) -> dict[str, Any]:
        info, call_next = payload
        try:
            result = await fn(Request._of(info), call_next)
        except BaseException as e:
            raise _failure(e, what) from None
        if not isinstance(result, dict):
            raise InternalError(
                f"Internal error: {what} returned {type(result).__name__}; it must return the result dict that call_next gave it (or a changed copy), or raise"
            )
        return result

    return invoke


@dataclasses.dataclass(frozen=True)
class Item:
    """A tool, resource, resource template or prompt a visibility predicate is asked about."""

    #: ``"tool"``, ``"resource"``, ``"resourceTemplate"`` or ``"prompt"``.
    kind: Literal["tool", "resource", "resourceTemplate", "prompt"]
    #: Its key: the tool's or prompt's name, the resource's URI, the template's URI template.
    name: str
    #: Its definition as listed.
    definition: dict[str, Any]


#: ``visible(item, request) -> bool`` (or ``async def``).
Visibility = Callable[[Item, Request], "bool | Awaitable[bool]"]


def make_visibility(fn: Visibility, what: str) -> Callable[[dict[str, Any]], Awaitable[list[bool]]]:
    """The ``invoke({"request", "items"})`` coroutine function the core calls for ``fn``."""
    if not callable(fn):
        raise UsageError(f"{what} must be a function visible(item, request) -> bool, not {type(fn).__name__}")

    async def invoke(asked: dict[str, Any]) -> list[bool]:
        request = Request._of(asked["request"])
        out = []
        try:
            for i in asked["items"]:
                seen = fn(Item(kind=i["kind"], name=i["name"], definition=i["definition"]), request)
                if inspect.isawaitable(seen):
                    seen = await seen
                out.append(bool(seen))
        except BaseException as e:
            raise _failure(e, what) from None
        return out

    return invoke

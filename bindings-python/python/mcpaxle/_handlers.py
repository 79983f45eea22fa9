"""Every user function becomes one ``async def invoke(payload, ctx)`` the native side calls on
the serving loop: arguments bound and converted, the Context added when asked for, ``def``
functions run on a bounded thread pool (never on the loop; see :mod:`mcpaxle._pool`: a pool
handler, called on the pool's thread as ``invoke(payload, ctx, loop)``), the
request's trace context made OpenTelemetry's current context while the function runs (when
telemetry is on and ``opentelemetry`` is installed: :mod:`mcpaxle._otel`), the return value
converted to JSON types (the core shapes it into the result), and exceptions sorted:
``mcpaxle.errors`` exceptions, cancellation and ``InputRequired`` pass through; anything else,
``SystemExit``, ``KeyboardInterrupt`` and every other ``BaseException`` included, is logged
with its traceback and handed to the core as an unexpected exception with its message (the core
decides what the client sees of it: ``mask_error_details``); it fails that call only: a handler
never stops the server."""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
import typing
from typing import Any, Awaitable, Callable

from . import _native
from . import _otel as otel
from . import _watchdog as watchdog
from ._context import Context
from ._convert import to_returned
from ._pool import Pool
from ._schema import Params, converter, fields_with_defaults
from .errors import InputRequired, McpError

__all__ = ["Pool", "binder", "is_async", "make_invoker"]

logger = logging.getLogger("mcpaxle")

Invoke = Callable[[Any, Any], Awaitable[Any]]


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` returns a coroutine (``async def``, or an object whose
    ``__call__`` is one)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def _failure(e: BaseException, what: str) -> BaseException:
    """The exception to raise for ``e`` escaping a handler. What the client sees of it is the
    core's policy (``mask_error_details``): this only logs it and keeps it from stopping the
    loop."""
    if isinstance(e, (McpError, InputRequired, asyncio.CancelledError)):
        return e  # library errors keep their kind; cancellation and MRTR rounds pass
    if isinstance(e, Exception):
        logger.error("%s raised %s", what, type(e).__name__, exc_info=e)
        return e
    # SystemExit, KeyboardInterrupt, GeneratorExit...: raised by one call's code, they end that
    # call only (left to propagate, they would stop the event loop, the server with it).
    logger.error("%s raised %s; only this call fails, the server goes on", what, type(e).__name__, exc_info=e)
    return RuntimeError(f"Internal error in {what} (it raised {type(e).__name__})")


def _from_str(tp: Any) -> Callable[[Any], Any] | None:
    """Converts a string argument (prompt arguments, URI template variables) to ``tp``."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _from_str(typing.get_args(tp)[0])
    if origin is typing.Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        rest = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from_str(rest[0]) if len(rest) == 1 else None
    if tp is int:
        return int
    if tp is float:
        return float
    if tp is bool:
        return lambda s: s if isinstance(s, bool) else str(s).strip().lower() in ("1", "true", "yes", "on")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    return converter(tp)


def make_invoker(
    fn: Callable[..., Any],
    params: Params,
    what: str,
    prepare: Callable[[Any], dict[str, Any]],
    pool: Pool,
) -> Invoke | _native.PoolHandler:
    """What the native server calls for a user function: the ``invoke(payload, native_ctx)``
    coroutine function of an ``async def``; for a plain function, a handler of the pool
    (:meth:`Pool.handler`), which calls it on a pool thread."""
    ctx_name = params.ctx
    if is_async(fn):
        watchdog.name_handler(fn, what)

        async def invoke(payload: Any, nctx: Any) -> Any:
            kwargs = prepare(payload)
            if ctx_name is not None:
                kwargs[ctx_name] = Context(nctx, asyncio.get_running_loop())
            trace = nctx.trace_context
            token = None if trace is None else otel.attach(trace)
            try:
                return to_returned(await fn(**kwargs))
            except BaseException as e:
                raise _failure(e, what) from None
            finally:
                if token is not None:
                    otel.detach(token)

        return invoke

    def invoke_sync(payload: Any, nctx: Any, loop: asyncio.AbstractEventLoop) -> Any:
        # Called on a thread of the pool, straight from the runtime (the loop is not in the path).
        kwargs = prepare(payload)
        if ctx_name is not None:
            kwargs[ctx_name] = Context(nctx, loop)
        trace = nctx.trace_context
        token = None if trace is None else otel.attach(trace)
        try:
            result = fn(**kwargs)
            if inspect.isawaitable(result):  # a plain function that returned a coroutine: awaited on the loop
                result = asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
            return to_returned(result)
        except BaseException as e:
            raise _failure(e, what) from None
        finally:
            if token is not None:
                otel.detach(token)

    return pool.handler(what, invoke_sync)


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def binder(fn: Callable[..., Any], params: Params, from_strings: bool = False) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Turns an arguments dict into keyword arguments: unknown names dropped (unless the
    function takes ``**kwargs``), values converted to the annotated types, ``Field(...)``
    defaults filled in."""
    names = params.names
    var_kw = params.var_kw
    if from_strings:
        convs = {n: c for n in names if (c := _from_str(params.hints.get(n, str))) is not None}
    else:
        convs = dict(params.converters)
    conv_items = tuple(convs.items())
    defaults = tuple(fields_with_defaults(fn).items())

    if not conv_items and not defaults:

        def bind_plain(args: dict[str, Any]) -> dict[str, Any]:
            if var_kw or args.keys() <= names:
                return args
            return {k: v for k, v in args.items() if k in names}

        return bind_plain

    def bind(args: dict[str, Any]) -> dict[str, Any]:
        if not var_kw and not args.keys() <= names:
            args = {k: v for k, v in args.items() if k in names}
        for k, c in conv_items:
            if k in args:
                try:
                    args[k] = c(args[k])
                except (TypeError, ValueError) as e:
                    from .errors import InvalidParams

                    raise InvalidParams(f"Invalid params: argument {k!r}: {e}") from None
        for k, d in defaults:
            if k not in args:
                args[k] = d
        return args

    return bind

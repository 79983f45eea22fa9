"""The public :class:`Server`: decorators that register tools, resources, prompts and
completions, and the transports that serve them."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import signal
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Literal, TypeVar

from . import _bridge, _native, _workers
from ._auth import BearerAuth
from ._durations import ms, ms_options, positive_ms
from ._handlers import Pool, binder, make_invoker
from ._middleware import Middleware, Visibility, make_middleware, make_visibility
from ._schema import output_schema, params_of, type_hints
from ._watchdog import Watchdog
from .errors import UsageError

if typing.TYPE_CHECKING:
    from ._asgi import AsgiApp

__all__ = ["CacheHint", "ConnectionLimits", "Cors", "Running", "Server"]

logger = logging.getLogger("mcpaxle")

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
Scope = Literal["public", "private"]


@dataclasses.dataclass(frozen=True)
class CacheHint:
    """A caching hint of a cacheable result: ``ttlMs`` and ``cacheScope``."""

    ttl_ms: int
    #: Who may share the result (default ``"private"``, the core's: a cache may serve a public
    #: result across authorization contexts, so a hint is public only when you say so).
    scope: Scope = "private"


CacheSpec = typing.Union[int, datetime.timedelta, tuple[int, Scope], CacheHint, Mapping[str, Any]]
_CACHE_KEYS = ("discover", "tools", "prompts", "resources", "templates", "read")


def _hint(v: CacheSpec) -> dict[str, Any]:
    """The core's cache hint (``ttl_ms``, ``cache_scope``); without a scope, the core's default
    (private) applies."""
    if isinstance(v, CacheHint):
        return {"ttl_ms": int(v.ttl_ms), "cache_scope": v.scope}
    if isinstance(v, datetime.timedelta):
        return {"ttl_ms": int(v.total_seconds() * 1000)}
    if isinstance(v, tuple):
        return {"ttl_ms": int(v[0]), "cache_scope": v[1]}
    if isinstance(v, int):
        return {"ttl_ms": v}
    if isinstance(v, Mapping):
        return dict(v)
    raise UsageError(f"a cache hint is an int (ms), a timedelta, (ttl_ms, scope), a CacheHint or a dict, not {v!r}")


def _cache(cache: CacheSpec | dict[str, CacheSpec] | None) -> dict[str, dict[str, Any]] | None:
    if cache is None:
        return None
    if not isinstance(cache, dict):
        h = _hint(cache)
        return {k: h for k in _CACHE_KEYS if k != "read"}
    return {k: _hint(v) for k, v in cache.items()}


@dataclasses.dataclass(frozen=True)
class ConnectionLimits:
    """The limits of an HTTP server's connections (``start_http(connections=...)``); durations
    in milliseconds (or a ``timedelta``), named ``*_ms`` like every duration option. ``None``
    keeps the core's default, which needs no tuning.

    A connection is *busy* while a request of it is handled (its handler runs, or its response
    or ``subscriptions/listen`` stream is open) and *idle* otherwise, including while it is
    still sending a request's headers or body. When ``max_connections`` are open, the idle one
    least recently busy is closed for each new connection; with none idle, new connections are
    closed at once. Serving raises the process's soft file-descriptor limit to the hard one.
    """

    #: The most connections open at once (default: three quarters of the fd limit, at most
    #: 10,000; 768 for a limit of 1,024).
    max_connections: int | None = None
    #: How long a request's headers may take to arrive (default 10 s), from the connect for a
    #: connection's first request; past it the connection is closed.
    header_read_timeout_ms: int | datetime.timedelta | None = None
    #: How long a request's body may take once its headers are in (default 30 s); past it the
    #: request gets 408 with a JSON-RPC error.
    body_read_timeout_ms: int | datetime.timedelta | None = None
    #: How long a keep-alive connection may wait for its next request (default 60 s).
    idle_timeout_ms: int | datetime.timedelta | None = None
    #: The interval of HTTP/2 PING frames (default 30 s; ``0`` for none).
    http2_keep_alive_interval_ms: int | datetime.timedelta | None = None
    #: How long an HTTP/2 PING may go unanswered before the connection is closed (default 20 s).
    http2_keep_alive_timeout_ms: int | datetime.timedelta | None = None
    #: The most bytes of request headers (default 64 KiB, at least 8 KiB).
    max_header_bytes: int | None = None
    #: The most requests at once on one HTTP/2 connection (default 100).
    http2_max_concurrent_streams: int | None = None
    #: The most bytes of request bodies held at once while they arrive, over all connections
    #: (default 128 MiB); past it a body gets 503 with ``Retry-After``.
    max_body_bytes_in_flight: int | None = None

    def _native(self) -> dict[str, Any]:
        return ms_options(dataclasses.asdict(self))


@dataclasses.dataclass(frozen=True)
class Cors:
    """CORS for browser pages of other origins (``start_http(cors=...)``, ``asgi_app(cors=...)``):
    a page of a listed origin (the MCP Inspector's, a web app's) gets its preflight answered and
    may read the responses, ``WWW-Authenticate`` and ``Mcp-Session-Id`` included. Off without it.

    Listing an origin also accepts it in the DNS-rebinding Origin check (as ``allowed_origins``
    does); every other origin is still refused with 403. ``"*"`` gives CORS to every origin the
    Origin check accepts (loopback ones, ``allowed_origins``) and accepts no other."""

    #: Origins exactly as browsers send them: ``scheme://host[:port]``, no path, no trailing
    #: slash (``"https://app.example.com"``, ``"http://localhost:6274"``), or ``"*"``.
    allowed_origins: list[str] = dataclasses.field(default_factory=list)
    #: Request headers allowed besides the ones MCP uses (always allowed: ``Content-Type``,
    #: ``Accept``, ``Authorization``, ``MCP-Protocol-Version``, ``Mcp-Session-Id``,
    #: ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``, ``Last-Event-ID``).
    allowed_headers: list[str] | None = None
    #: Response headers a page may read besides the ones MCP sends (always exposed:
    #: ``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
    #: ``WWW-Authenticate``).
    exposed_headers: list[str] | None = None
    #: How long a browser may reuse a preflight's answer (default 10 minutes).
    max_age_ms: int | datetime.timedelta | None = None

    def _native(self) -> dict[str, Any]:
        return ms_options(dataclasses.asdict(self))


def _typed(value: Any, cls: type[T], name: str) -> T | None:
    """``value`` as a ``cls`` (a dataclass of options): itself, built from a dict of its
    fields, or ``None``."""
    if isinstance(value, dict):
        try:
            value = cls(**value)
        except TypeError as e:
            raise UsageError(f"{name}: {e}") from None
    if value is not None and not isinstance(value, cls):
        raise UsageError(f"{name} must be a mcpaxle.{cls.__name__}, a dict or None, not {type(value).__name__}")
    return value


_ANNOTATIONS = {
    "title": "title",
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


def _annotations(a: dict[str, Any] | None) -> dict[str, Any] | None:
    if not a:
        return None
    return {_ANNOTATIONS.get(k.removesuffix("_hint"), k): v for k, v in a.items()}


def _common(d: dict[str, Any], title: str | None, description: str | None, meta: dict[str, Any] | None, icons: list[Any] | None) -> dict[str, Any]:
    if title is not None:
        d["title"] = title
    if description:
        d["description"] = description
    if icons:
        d["icons"] = [{"src": i} if isinstance(i, str) else i for i in icons]
    if meta:
        d["_meta"] = meta
    return d


def template_variables(uri_template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, as the core reads them (empty for a URI
    without ``{``); raises UsageError for a malformed template."""
    return _native.template_variables(uri_template)


def _return_hint(fn: Callable[..., Any], localns: dict[str, Any] | None) -> Any:
    import inspect

    try:
        return type_hints(fn, localns).get("return", inspect.Signature.empty)
    except Exception:
        return inspect.Signature.empty


def _caller(depth: int = 2) -> dict[str, Any] | None:
    """The local namespace of the code registering a handler (see ``type_hints``)."""
    try:
        return sys._getframe(depth).f_locals
    except (AttributeError, ValueError):
        return None


class Server:
    """An MCP server on the mcpaxle core.

    >>> from mcpaxle import Server
    >>> server = Server("weather", version="1.0.0", instructions="Forecasts by city.")
    >>> @server.tool()
    ... async def forecast(city: str, days: int = 3) -> str:
    ...     '''Forecast for a city.'''
    ...     return f"Sunny in {city} for {days} days"
    >>> # server.run()                                  # stdio
    >>> # server.run("http", host="127.0.0.1", port=8000) # Streamable HTTP on /mcp

    ``cache`` sets the caching hints of results: one value for every list, or a dict with
    the keys ``discover``, ``tools``, ``prompts``, ``resources``, ``templates``, ``read``;
    each an int (ms), a ``timedelta``, ``(ttl_ms, "public" | "private")`` or a
    :class:`CacheHint` or a dict of the core's hint (``ttl_ms``, ``cache_scope``); a hint
    without a scope is private. ``state_secret`` (at least 16 bytes; default the environment
    variable ``MCPAXLE_STATE_SECRET``, else a random key per process) is the secret sealing
    MRTR ``requestState``: set the same one on every instance behind a load balancer (the key
    derived from it is the same in every binding). To rotate it, give every instance the new
    one with the old as ``previous_state_secret`` (or ``MCPAXLE_PREVIOUS_STATE_SECRET``):
    states sealed with either are accepted, new ones use the new secret; drop the old one
    after one ``state_ttl_ms`` (default 600000), how long a sealed state stays valid.
    ``bus`` shares change announcements (list changes, ``resources/updated``) with the other
    instances of a fleet through Redis: a URL such as ``"redis://host:6379/0"``, or a dict
    ``{"url": ..., "channel": ...}`` (default channel ``mcpaxle:events``); Redis need not be up
    at start, and while it is down changes still reach this process's own listen streams.
    ``tasks`` keeps the tasks of the Tasks extension (``@server.tool(task_support=...)``):
    ``ttl_ms`` (default 1 hour: then a task is forgotten, and cancelled if still running),
    ``poll_interval_ms`` (default 1000, suggested to clients), ``max_tasks`` (default 10,000)
    and ``max_tasks_per_principal`` (default 1,000); each task is bound to the principal that
    created it. Its ``store`` is ``"memory"``, a Redis URL, or ``{"url", "namespace",
    "lease_ms"}``; by default a server with a Redis ``bus`` keeps its tasks in that Redis, so
    that any instance of a fleet answers for any task (and a task whose instance died reads
    ``failed`` after ``lease_ms``, default 15000), else in memory. ``enable=["logging"]`` advertises the (deprecated) logging capability before any handler
    logs (also ``"tools"``, ``"resources"``, ``"prompts"``). ``legacy=False`` serves 2026-07-28
    clients only.

    ``legacy`` may also be a dict of the legacy session options: legacy (2025-11-25) HTTP
    sessions, each bound to the principal that opened it, are limited by ``max_sessions``
    (default 10,000 per endpoint), ``max_sessions_per_principal`` (default 100) and, for
    clients without a principal, ``max_sessions_per_peer`` (default 1,000 per IPv4 address or
    IPv6 /64); where a limit is reached, a new session ends the least recently used idle one
    (no request in flight, no open stream). A session ends when idle for ``idle_timeout_ms``
    (default 30 min), or ``uninitialized_timeout_ms`` (default 30 s) if its client never went
    past ``initialize``; ``request_timeout_ms`` (default 5 min) bounds the wait for a client's
    answer to an elicitation, sampling or roots request. Durations are milliseconds (or a
    ``timedelta``), their names ending in ``_ms``, in every option.

    Handlers cannot take the server down. Whatever a handler raises, ``SystemExit`` and
    ``KeyboardInterrupt`` included, fails that call only; it is logged with its traceback. An
    exception that is not an ``mcpaxle.errors`` one shows its message to the client (a tool's
    as an ``isError`` result the model reads, other requests' as an internal error, -32603);
    ``mask_error_details=True`` replaces that message with ``Internal error in tool "name"``
    (and the like). A ``ToolError`` and the protocol errors (``InvalidParams``, ...) are sent
    as raised either way. ``handler_timeout_ms`` (default ``None``, no limit) bounds every
    call of every handler, and ``@server.tool(timeout_ms=...)`` one tool's: the call then ends
    with an error naming the
    handler and the limit, an ``async def`` is cancelled, and the thread of a plain ``def``
    (which cannot be stopped; it sees ``ctx.is_cancelled``) is abandoned and replaced.
    ``max_workers`` bounds the threads running plain ``def`` handlers (default
    ``min(32, cpu_count + 4)``; when all are busy a warning names the handlers holding them);
    ``max_abandoned_threads`` bounds the threads left running calls that were given up
    (default: ``max_workers``; past it a stuck thread keeps its place in the pool). Threads
    never delay the exit of the process. ``loop_block_warning_ms`` (default 500, ``None`` for
    off) warns when an ``async def`` handler blocks the event loop that long,
    naming it and how long it blocked.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        cache: CacheSpec | dict[str, CacheSpec] | None = None,
        state_secret: str | None = None,
        previous_state_secret: str | None = None,
        state_ttl_ms: int | datetime.timedelta | None = None,
        page_size: int | None = None,
        max_workers: int | None = None,
        enable: Sequence[Literal["tools", "resources", "prompts", "logging"]] | None = None,
        legacy: bool | Mapping[str, Any] = True,
        server_info_in_results: bool = True,
        handler_timeout_ms: int | datetime.timedelta | None = None,
        mask_error_details: bool = False,
        bus: str | Mapping[str, str] | None = None,
        tasks: Mapping[str, Any] | None = None,
        max_abandoned_threads: int | None = None,
        loop_block_warning_ms: int | datetime.timedelta | None = 500,
    ) -> None:
        # The core's server options by their Python names (the core reads them and applies
        # their defaults; None keeps the default).
        options = {
            "title": title,
            "state_secret": state_secret,
            "previous_state_secret": previous_state_secret,
            "instructions": instructions,
            "cache": _cache(cache),
            "state_ttl_ms": ms(state_ttl_ms),
            "page_size": page_size,
            "server_info_in_results": server_info_in_results,
            "enable": None if enable is None else list(enable),
            "legacy": legacy if isinstance(legacy, bool) else ms_options(legacy),
            "handler_timeout_ms": positive_ms(handler_timeout_ms, "handler_timeout_ms"),
            "mask_error_details": mask_error_details,
            "bus": bus if bus is None or isinstance(bus, str) else dict(bus),
            "tasks": None if tasks is None else ms_options(tasks),
        }
        self._native = _native.Server(name, version, options)
        self.name = name
        self.version = version
        try:
            self._pool = Pool(max_workers, max_abandoned_threads)
        except ValueError as e:
            raise UsageError(str(e)) from None
        block = ms(loop_block_warning_ms)
        self._block_warning = None if block is None else block / 1000
        self._watchdog: Watchdog | None = None
        self._tools: dict[str, dict[str, Any]] = {}
        self._resources: dict[str, dict[str, Any]] = {}
        self._templates: dict[str, dict[str, Any]] = {}
        self._prompts: dict[str, dict[str, Any]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._serving = 0

    def __repr__(self) -> str:
        return f"Server({self.name!r}, version={self.version!r})"

    # Middleware ---------------------------------------------------------------------------

    def middleware(self, fn: Middleware) -> Middleware:
        """Registers ``async def mw(request, call_next)`` around every request
        (``@server.middleware``); the first registered runs outermost. Returns it unchanged.

        ``request`` is a :class:`~mcpaxle.Request` (method, name, params, headers, principal,
        scopes, claims, era, session_id); ``await call_next()`` runs the rest of the chain and
        the method and returns the result dict the client would get (change it, or a copy, and
        return it), or raises the request's error as its :class:`~mcpaxle.McpError`. Raise an
        ``McpError`` to reject the request: the client gets a JSON-RPC error with its code
        (``McpError("Forbidden", code=-32003)``; over HTTP in the 2026-07-28 era, the HTTP
        status of that code). Any other exception is an internal error, logged, its message
        masked as the server's ``mask_error_details`` says.

        Every request of a method both eras share goes through the chain, over every transport
        (discover, the lists, ``tools/call``, ``resources/read``, ``prompts/get``, completions,
        ``subscriptions/listen``), once it is well-formed; the legacy handshake and session
        methods (``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe``) do not.
        A failing tool is an ``isError`` result, not an exception.

        >>> server = Server("demo")
        >>> @server.middleware
        ... async def audit(request, call_next):
        ...     result = await call_next()
        ...     print(request.method, request.name, request.principal)
        ...     return result
        """
        self._native.add_middleware(make_middleware(fn, f"middleware {getattr(fn, '__name__', fn)!r}"))
        return fn

    def visibility(self, fn: Visibility | None) -> Visibility | None:
        """Sets the visibility predicate, ``visible(item, request) -> bool`` (or ``async def``;
        ``@server.visibility``); ``None`` removes it. An :class:`~mcpaxle.Item` (``kind``,
        ``name``, ``definition``) it answers false for is hidden from that request: left out of
        ``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list``
        (pages are cut after filtering), and a call, read or get of it fails exactly as for an
        unknown one. It is asked once per request about every item the request lists or
        names. Returns ``fn``.

        >>> server = Server("demo")
        >>> @server.visibility
        ... def admins_see_admin_tools(item, request):
        ...     return not item.name.startswith("admin_") or "admin" in (request.claims or {}).get("roles", [])
        """
        if fn is None:
            self._native.set_visibility(None)
        else:
            self._native.set_visibility(make_visibility(fn, f"visibility predicate {getattr(fn, '__name__', fn)!r}"))
        return fn

    # Tools --------------------------------------------------------------------------------

    def tool(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
        timeout_ms: int | datetime.timedelta | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
    ) -> Any:
        """Registers a function as a tool (``@server.tool()`` or ``@server.tool``).

        The input schema comes from the parameters' type hints, the description from the
        docstring (parameter descriptions from its ``Args:`` section or from
        ``Annotated[T, "description"]``), the ``outputSchema`` from the return annotation: a
        dataclass, TypedDict, pydantic model or dict is returned as ``structuredContent``
        (plus its JSON as text); an int, list... as ``{"result": value}``; ``str`` and
        content (Image, Audio, EmbeddedResource) as content. A parameter annotated
        ``Context`` receives the request context. ``annotations`` are behaviour hints:
        ``{"read_only": True, "idempotent": True}``. ``timeout_ms`` (milliseconds or a
        ``timedelta``) is the longest one call may run, overriding the server's
        ``handler_timeout_ms``.

        ``task_support="optional"`` lets a call run as a task of the Tasks extension
        (``io.modelcontextprotocol/tasks``) when the client declares it: the call is answered
        at once with the task's handle and the function runs on, unchanged. Its
        ``ctx.elicit``/``ctx.sample`` become the task's input requests (the client answers
        them with ``tasks/update``), its ``ctx.progress`` messages the task's status message;
        ``tasks/cancel`` cancels it (``CancelledError`` in an ``async def``, ``ctx.is_cancelled``
        in a plain ``def``). ``"required"``: only as a task (other clients get -32021).
        ``defer_task=True``: the task is created when the function calls
        ``await ctx.start_task()``, its asks before then answered as in an ordinary call. The
        server's ``tasks`` option sets the TTL, polling interval and limits. Returns the
        function unchanged."""
        if callable(name):
            self.add_tool(name, localns=_caller())
            return name

        def register(fn: F) -> F:
            self.add_tool(fn, name, title=title, description=description, annotations=annotations, structured_output=structured_output, meta=meta, icons=icons, timeout_ms=timeout_ms, task_support=task_support, defer_task=defer_task, localns=_caller())
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        timeout_ms: int | datetime.timedelta | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
        localns: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Adds or replaces a tool at any time (listeners get ``tools/list_changed``);
        returns its definition. ``input_schema`` replaces the generated schema (the function
        then receives the arguments as keyword arguments as they are). ``timeout_ms``,
        ``task_support`` and ``defer_task`` as in :meth:`tool`."""
        localns = localns if localns is not None else _caller()
        params = params_of(fn, localns=localns)
        tool_name = name or fn.__name__
        if structured_output is False:
            schema = None
        else:
            schema, _ = output_schema(_return_hint(fn, localns), localns)
            if structured_output and schema is None:
                raise UsageError(f"tool {tool_name!r}: structured_output=True needs a return annotation with a JSON type")
        definition: dict[str, Any] = {"name": tool_name, "inputSchema": input_schema or params.schema}
        _common(definition, title, description if description is not None else params.description, meta, icons)
        if schema is not None:
            definition["outputSchema"] = schema
        ann = _annotations(annotations)
        if ann:
            definition["annotations"] = ann
        if input_schema is not None:
            params = dataclasses.replace(params, var_kw=True, converters={})

        invoke = make_invoker(fn, params, f"tool {tool_name!r}", binder(fn, params), self._pool)
        options = {
            "timeout_ms": positive_ms(timeout_ms, f"the timeout_ms of tool {tool_name!r}"),
            "task_support": task_support,
            "defer_task": defer_task,
        }
        self._native.add_tool(definition, invoke, options)
        self._tools[tool_name] = definition
        return definition

    def remove_tool(self, name: str) -> bool:
        """Removes a tool (listeners get ``tools/list_changed``); returns whether it existed."""
        self._tools.pop(name, None)
        return self._native.remove_tool(name)

    # Resources ----------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        cache: CacheSpec | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
        allow_path_traversal: bool = False,
    ) -> Callable[[F], F]:
        """Registers a function as a resource. A URI with ``{variables}`` (RFC 6570) makes a
        resource template: the function's parameters receive the variables (converted to
        their annotated types), e.g. ``@server.resource("note://{id}")`` with ``def
        note(id: int)``. A parameter named ``uri`` receives the URI read. Return ``str``
        (text), ``bytes`` (blob), any JSON-able value (JSON text), a
        :class:`~mcpaxle.ResourceContents` or a list of them. ``cache`` overrides the
        ``resources/read`` caching hint.

        A template's variables are checked against path traversal before the function runs:
        a read whose values hold a ``..`` segment, an encoded slash (``%2F``), a backslash,
        an absolute path or NUL gets "Resource not found". ``allow_path_traversal=True``
        hands them over as matched (for a function that never opens a file with them)."""

        def register(fn: F) -> F:
            self.add_resource(fn, uri, name=name, title=title, description=description, mime_type=mime_type, size=size, annotations=annotations, cache=cache, meta=meta, icons=icons, allow_path_traversal=allow_path_traversal, localns=_caller())
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        cache: CacheSpec | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
        allow_path_traversal: bool = False,
        localns: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Adds or replaces a resource or resource template at any time; returns its
        definition (``allow_path_traversal``: see :meth:`resource`)."""
        params = params_of(fn, localns=localns if localns is not None else _caller())
        variables = template_variables(uri)
        if allow_path_traversal and not variables:
            raise UsageError(f"resource {uri!r}: allow_path_traversal applies to resource templates (URIs with {{variables}}) only")
        wants_uri = "uri" in params.names and "uri" not in variables
        missing = [p for p in params.required if p not in variables and not (p == "uri" and wants_uri)]
        if missing:
            raise UsageError(f"resource {uri!r}: parameter(s) {', '.join(missing)} are not variables of the URI")
        key = "uriTemplate" if variables else "uri"
        definition: dict[str, Any] = {key: uri, "name": name or fn.__name__}
        _common(definition, title, description if description is not None else params.description, meta, icons)
        if mime_type:
            definition["mimeType"] = mime_type
        if size is not None and not variables:
            definition["size"] = size
        if annotations:
            definition["annotations"] = annotations
        hint = _hint(cache) if cache is not None else None
        bind = binder(fn, params, from_strings=True)

        def prepare(payload: tuple[str, dict[str, Any]]) -> dict[str, Any]:
            read_uri, values = payload
            if wants_uri:
                values["uri"] = read_uri
            return bind(values)

        invoke = make_invoker(fn, params, f"resource {uri!r}", prepare, self._pool)
        if variables:
            self._native.add_resource_template(definition, invoke, hint, {"allow_path_traversal": allow_path_traversal})
            self._templates[uri] = definition
        else:
            self._native.add_resource(definition, invoke, hint)
            self._resources[uri] = definition
        return definition

    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or a resource template (by its URI template); returns whether
        it existed."""
        if uri in self._templates or "{" in uri:
            self._templates.pop(uri, None)
            return self._native.remove_resource_template(uri)
        self._resources.pop(uri, None)
        return self._native.remove_resource(uri)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells listeners subscribed to ``uri`` that it changed
        (``notifications/resources/updated``)."""
        self._native.notify_resource_updated(uri)

    def notify_list_changed(self, list: Literal["tools", "prompts", "resources"]) -> None:  # noqa: A002 - the protocol's word
        """Tells listeners that a list changed (``notifications/<list>/list_changed``).
        Adding and removing tools, prompts and resources announces itself; call this when a
        list changes behind the server's back, e.g. the resources a template serves."""
        self._native.notify_list_changed(list)

    # Prompts ------------------------------------------------------------------------------

    def prompt(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
    ) -> Any:
        """Registers a function as a prompt (``@server.prompt()`` or ``@server.prompt``). Its
        parameters are the prompt's arguments (required when they have no default; values
        arrive as strings and are converted to int, float, bool or Enum when annotated so).
        Return a str (one user message), a :class:`~mcpaxle.Message`, content, or a list."""
        if callable(name):
            self.add_prompt(name, localns=_caller())
            return name

        def register(fn: F) -> F:
            self.add_prompt(fn, name, title=title, description=description, meta=meta, icons=icons, localns=_caller())
            return fn

        return register

    def add_prompt(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        icons: list[Any] | None = None,
        localns: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Adds or replaces a prompt at any time (listeners get ``prompts/list_changed``)."""
        params = params_of(fn, localns=localns if localns is not None else _caller())
        prompt_name = name or fn.__name__
        arguments = []
        for arg, s in params.schema["properties"].items():
            a: dict[str, Any] = {"name": arg}
            if s.get("description"):
                a["description"] = s["description"]
            if arg in params.required:
                a["required"] = True
            arguments.append(a)
        definition: dict[str, Any] = {"name": prompt_name}
        _common(definition, title, description if description is not None else params.description, meta, icons)
        if arguments:
            definition["arguments"] = arguments

        invoke = make_invoker(fn, params, f"prompt {prompt_name!r}", binder(fn, params, from_strings=True), self._pool)
        self._native.add_prompt(definition, invoke)
        self._prompts[prompt_name] = definition
        return definition

    def remove_prompt(self, name: str) -> bool:
        """Removes a prompt; returns whether it existed."""
        self._prompts.pop(name, None)
        return self._native.remove_prompt(name)

    # Completions --------------------------------------------------------------------------

    def completion(self, *, prompt: str | None = None, resource: str | None = None) -> Callable[[F], F]:
        """Registers the completion of a prompt's arguments (``prompt="name"``) or of a
        resource template's variables (``resource="note://{id}"``). The function takes
        ``argument`` (the name being completed), ``value`` (typed so far) and optionally
        ``context`` (arguments already resolved), by those names or in that order, and
        returns candidate strings (at most 100 are sent)."""

        def register(fn: F) -> F:
            self.set_completion(fn, prompt=prompt, resource=resource, localns=_caller())
            return fn

        return register

    def set_completion(self, fn: Callable[..., Any], *, prompt: str | None = None, resource: str | None = None, localns: dict[str, Any] | None = None) -> None:
        """Sets a completion handler (see :meth:`completion`)."""
        if (prompt is None) == (resource is None):
            raise UsageError("completion() takes exactly one of prompt= or resource=")
        params = params_of(fn, localns=localns if localns is not None else _caller())
        order = ("argument", "value", "context")
        names = [n for n in params.schema["properties"]]
        mapping = dict(zip(order, names)) if not set(names) <= set(order) else {n: n for n in names}

        def prepare(payload: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
            values = dict(zip(order, payload))
            return {param: values[field] for field, param in mapping.items()}

        kind, target = ("prompt", prompt) if prompt is not None else ("resource", resource)
        invoke = make_invoker(fn, params, f"completion of {kind} {target!r}", prepare, self._pool)
        self._native.set_completion(kind, target, invoke)

    def remove_completion(self, *, prompt: str | None = None, resource: str | None = None) -> bool:
        """Removes a completion handler; returns whether it existed."""
        kind, target = ("prompt", prompt) if prompt is not None else ("resource", resource)
        return self._native.remove_completion(kind, target)

    # Introspection ------------------------------------------------------------------------

    def list_tools(self) -> list[dict[str, Any]]:
        """The definitions of the tools registered through this object."""
        return list(self._tools.values())

    def list_resources(self) -> list[dict[str, Any]]:
        """The definitions of the direct resources registered through this object."""
        return list(self._resources.values())

    def list_resource_templates(self) -> list[dict[str, Any]]:
        """The definitions of the resource templates registered through this object."""
        return list(self._templates.values())

    def list_prompts(self) -> list[dict[str, Any]]:
        """The definitions of the prompts registered through this object."""
        return list(self._prompts.values())

    # Serving ------------------------------------------------------------------------------

    def _acquire(self, loop: asyncio.AbstractEventLoop) -> _native.Bridge:
        if self._serving and self._loop is not loop:
            raise UsageError("this server is already being served on another event loop")
        bridge = _bridge.acquire(loop)
        try:
            self._native.attach(bridge)
        except BaseException:
            _bridge.release(loop)
            raise
        self._loop = loop
        self._serving += 1
        if self._watchdog is None and self._block_warning is not None:
            self._watchdog = Watchdog(loop, self._block_warning)
        return bridge

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._serving -= 1
        if self._serving == 0:
            self._native.attach(None)
            self._loop = None
            if self._watchdog is not None:
                self._watchdog.stop()
                self._watchdog = None
        _bridge.release(loop)

    def _http_options(
        self,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body: int | None = None,
        keep_alive_ms: int | datetime.timedelta | None = None,
        drain_timeout_ms: int | datetime.timedelta | None = None,
        auth: BearerAuth | None = None,
        connections: ConnectionLimits | dict[str, Any] | None = None,
        cors: Cors | dict[str, Any] | None = None,
        health_path: str | None = None,
        metrics_path: str | None = None,
    ) -> dict[str, Any]:
        """The HTTP options dict of the native module (the core reads and checks it)."""
        connections = _typed(connections, ConnectionLimits, "connections")
        cors = _typed(cors, Cors, "cors")
        if auth is not None and not isinstance(auth, BearerAuth):
            raise UsageError(f"auth must be a mcpaxle.BearerAuth or None, not {type(auth).__name__}")
        return {
            "path": path,
            "allowed_hosts": allowed_hosts,
            "allowed_origins": allowed_origins,
            "max_body": max_body,
            "keep_alive_ms": ms(keep_alive_ms),
            "drain_timeout_ms": ms(drain_timeout_ms),
            "auth": auth._native(self._pool) if auth is not None else None,
            "connections": connections._native() if connections is not None else None,
            "cors": cors._native() if cors is not None else None,
            "health_path": health_path,
            "metrics_path": metrics_path,
        }

    def asgi_app(
        self,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body: int | None = None,
        keep_alive_ms: int | datetime.timedelta | None = None,
        drain_timeout_ms: int | datetime.timedelta | None = None,
        auth: BearerAuth | None = None,
        cors: Cors | dict[str, Any] | None = None,
    ) -> AsgiApp:
        """The MCP endpoint as an ASGI 3 application, to run under uvicorn or hypercorn or to
        mount in Starlette or FastAPI (``app.mount("/mcp", server.asgi_app(...))``). Every
        request it is given is the MCP endpoint's, whatever its path: the host routes. The
        request itself is served by the core, as by :meth:`start_http`, with the same options
        (checked when the app first runs): ``path`` only names the endpoint's public path for
        the protected resource metadata of ``auth`` (serve that path from the host, or give
        ``auth`` a ``resource`` at it). Behind a host application the Host check still applies:
        the default accepts loopback names only, so set ``allowed_hosts`` to the names the
        service is reached by. Connection limits are the ASGI server's business.

        Handlers run on the loop the ASGI server runs the app on. Lifespan ``shutdown`` ends
        open ``subscriptions/listen`` streams and legacy sessions and waits for the requests in
        flight (up to ``drain_timeout_ms``); a framework that does not pass lifespan events to
        a mounted app (Starlette's ``mount``) leaves that to :meth:`AsgiApp.shutdown`."""
        from ._asgi import AsgiApp

        options = self._http_options(
            path=path, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins, max_body=max_body,
            keep_alive_ms=keep_alive_ms, drain_timeout_ms=drain_timeout_ms, auth=auth, cors=cors,
        )
        return AsgiApp(self, options)

    async def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body: int | None = None,
        keep_alive_ms: int | datetime.timedelta | None = None,
        drain_timeout_ms: int | datetime.timedelta | None = None,
        auth: BearerAuth | None = None,
        connections: ConnectionLimits | dict[str, Any] | None = None,
        reuse_port: bool = False,
        cors: Cors | dict[str, Any] | None = None,
        health_path: str | None = None,
        metrics_path: str | None = None,
    ) -> Running:
        """Starts serving Streamable HTTP and returns once the port is bound (``port=0``
        picks a free one: see :attr:`Running.port`). Handlers run on the current loop. Stop
        with ``await running.stop()`` or ``async with await server.start_http(...):``.

        ``auth`` (a :class:`~mcpaxle.BearerAuth`) requires an OAuth bearer token on every
        request and publishes the protected resource metadata at
        ``/.well-known/oauth-protected-resource<path>``; handlers see the token's subject as
        ``ctx.principal``.

        ``connections`` (a :class:`ConnectionLimits`, or a dict of its fields) bounds the
        connections: header, body and idle timeouts, HTTP/2 pings, how many are open at once.
        ``cors`` (a :class:`Cors`, or a dict of its fields) lets browser pages of the listed
        origins call the endpoint. ``health_path`` (e.g. ``"/healthz"``; default none) is a
        route answered ``200 {"status": "ok"}`` to GET without auth and whatever the Host (load
        balancers probe by IP address). ``metrics_path`` (e.g. ``"/metrics"``; default none) is a
        route answering GET with the process's metrics in Prometheus's text format when
        :mod:`mcpaxle.telemetry` is configured with ``prometheus=True`` (503 otherwise); like
        the health route it has no auth and no Host check, so expose it only where metrics may
        be read. ``path`` (default ``/mcp``), ``max_body`` (bytes,
        default 4 MiB), ``allowed_hosts``, ``allowed_origins``, ``keep_alive_ms`` (default
        15000), ``drain_timeout_ms`` (default 10000) and ``reuse_port`` (``SO_REUSEPORT``, for
        several processes on one port; see ``run(workers=N)``) are the core's HTTP options, as
        in every binding."""
        options = self._http_options(
            path=path, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins, max_body=max_body,
            keep_alive_ms=keep_alive_ms, drain_timeout_ms=drain_timeout_ms, auth=auth, connections=connections,
            cors=cors, health_path=health_path, metrics_path=metrics_path,
        )
        options["reuse_port"] = reuse_port
        loop = asyncio.get_running_loop()
        bridge = self._acquire(loop)
        try:
            native = await self._native.start_http(bridge, host, port, options)
        except BaseException:
            self._release(loop)
            raise
        return Running(self, loop, bridge, native, path)

    async def serve_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serves Streamable HTTP on ``http://host:port/mcp`` until the awaiting task is
        cancelled (then shuts down gracefully: stop accepting, end listen streams, drain the
        requests in flight) or :meth:`Running.shutdown` is called. Options as
        :meth:`start_http`."""
        running = await self.start_http(host, port, **options)
        logger.info("mcpaxle: serving %s", running.url)
        await running.serve_forever()

    async def serve_stdio(
        self,
        *,
        redirect_stdout: bool = True,
        drain_timeout_ms: int | datetime.timedelta | None = None,
        max_outbound_queue: int | None = None,
        max_message_size: int | None = None,
    ) -> None:
        """Serves stdio (newline-delimited JSON-RPC on stdin/stdout) until stdin closes or
        the awaiting task is cancelled. With ``redirect_stdout`` (the default), anything
        else written to stdout while serving, a ``print()`` included, goes to stderr.
        ``max_outbound_queue`` (default 1024) bounds the messages waiting to be written: a
        client that stops reading stdout is not read from until it reads again.
        ``max_message_size`` (bytes, default 4 MiB) and ``drain_timeout_ms`` (default 5000)
        are the core's other stdio options."""
        loop = asyncio.get_running_loop()
        bridge = self._acquire(loop)
        saved = sys.stdout
        try:
            if redirect_stdout:
                try:
                    sys.stdout.flush()
                except Exception:
                    pass
            options = ms_options({"drain_timeout_ms": drain_timeout_ms, "max_outbound_queue": max_outbound_queue, "max_message_size": max_message_size})
            native = self._native.start_stdio(redirect_stdout, options)
        except BaseException:
            self._release(loop)
            raise
        if redirect_stdout:
            sys.stdout = sys.stderr
        try:
            await Running(self, loop, bridge, native, None).serve_forever()
        finally:
            if redirect_stdout and sys.stdout is sys.stderr:
                sys.stdout = saved

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        workers: int = 1,
        **options: Any,
    ) -> None:
        """Serves until stdin closes (stdio) or Ctrl-C / SIGTERM, then stops cleanly. Blocks;
        it runs its own asyncio loop. ``transport="http"`` serves on ``http://host:port/mcp``
        (options as :meth:`start_http`, ``auth=BearerAuth(...)`` included).

        ``workers=N`` (HTTP, POSIX) serves the port from N processes (``SO_REUSEPORT``: the
        kernel spreads connections among them), each with its own runtime and event loop, so
        that Python handlers use every core. The calling process supervises them: it restarts
        a worker that dies, and Ctrl-C / SIGTERM stops them all gracefully. Call it before
        anything else starts mcpaxle in the process; share ``state_secret`` and a ``bus``
        among workers as among any instances of a fleet (each worker has its own memory: a
        legacy session lives in the worker that opened it, so serve legacy clients with one
        worker, or route them by ``Mcp-Session-Id``)."""
        if transport not in ("stdio", "http"):
            raise UsageError(f"transport must be 'stdio' or 'http', not {transport!r}")
        if transport == "stdio" and workers != 1:
            raise UsageError("workers > 1 is for transport='http'; stdio has one client")
        workers = _workers.check(workers, port)

        async def main() -> None:
            loop = asyncio.get_running_loop()
            task = asyncio.current_task()
            assert task is not None
            installed = []
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, task.cancel)
                    installed.append(sig)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass
            try:
                if transport == "stdio":
                    await self.serve_stdio(**options)
                else:
                    await self.serve_http(host, port, **options)
            except asyncio.CancelledError:
                pass
            finally:
                for sig in installed:
                    loop.remove_signal_handler(sig)

        try:
            if workers > 1:
                options["reuse_port"] = True
                _workers.supervise(lambda: asyncio.run(main()), workers)
            else:
                asyncio.run(main())
        finally:
            self._pool.shutdown()


class Running:
    """A transport being served: ``address``, ``port`` and ``url`` (HTTP), ``shutdown()``,
    ``await wait()``, ``await stop()``; usable as ``async with``. ``shutdown``, ``wait`` and
    ``stop`` may be called any number of times, from several tasks at once: every ``wait`` and
    ``stop`` returns once the transport has stopped."""

    def __init__(self, server: Server, loop: asyncio.AbstractEventLoop, bridge: _native.Bridge, native: _native.Running, path: str | None) -> None:
        self._server, self._loop, self._bridge, self._native = server, loop, bridge, native
        self._path = path
        self._released = False
        self._stopped: asyncio.Future[None] | None = None

    @property
    def address(self) -> str:
        """``host:port`` of an HTTP server (the bound port), "stdio" for stdio."""
        return self._native.address

    @property
    def port(self) -> int | None:
        """The port an HTTP server listens on."""
        if self._path is None:
            return None
        return int(self.address.rsplit(":", 1)[1])

    @property
    def url(self) -> str | None:
        """The MCP endpoint of an HTTP server."""
        if self._path is None:
            return None
        return f"http://{self.address}{self._path}"

    def shutdown(self) -> None:
        """Starts a graceful shutdown (returns at once; again, it does nothing)."""
        if not self._released:
            self._native.shutdown()

    def _stop_future(self) -> asyncio.Future[None] | None:
        """The one native wait every waiter shares (made on first use; ``None`` once stopped
        and released). Its completion releases the loop's bridge, after which no native
        awaitable could complete, which is why a later wait must not make another one."""
        if self._released:
            return None
        if self._stopped is None:
            if self._native.done:
                self._release()
                return None
            self._stopped = asyncio.ensure_future(self._native.wait(self._bridge))
            self._stopped.add_done_callback(lambda _: self._release())
        return self._stopped

    async def wait(self) -> None:
        """Waits until the transport has stopped (at once if it has). Cancelling the waiting
        task stops the wait, not the transport."""
        stopped = self._stop_future()
        if stopped is not None:
            await asyncio.shield(stopped)

    async def stop(self) -> None:
        """Shuts down gracefully and waits until done."""
        self.shutdown()
        await self.wait()

    async def serve_forever(self) -> None:
        """Waits until the transport stops; if the awaiting task is cancelled, shuts down
        gracefully (requests in flight still run on this loop while draining), then re-raises."""
        try:
            await self.wait()
        except asyncio.CancelledError:
            await self.stop()
            raise

    def _release(self) -> None:
        if not self._released:
            self._released = True
            self._server._release(self._loop)

    async def __aenter__(self) -> Running:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

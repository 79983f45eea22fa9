"""The MCP client: the core's client (both protocol eras, stdio and Streamable HTTP, MRTR,
cache, subscriptions) driven from asyncio.

>>> async def main() -> None:  # doctest: +SKIP
...     async with Client.connect_http("http://127.0.0.1:3000/mcp") as client:
...         for tool in await client.list_tools():
...             print(tool["name"])
...         result = await client.call_tool("greet", {"name": "Ada"})

Results are plain dicts (the JSON objects of the protocol), typed for type checkers with the
``TypedDict`` classes of :mod:`mcpaxle.types`, generated from the schema: ``call_tool`` returns
a :class:`~mcpaxle.types.CallToolResult`, ``list_tools`` a list of
:class:`~mcpaxle.types.Tool`. Input handlers (``on_elicitation``,
``on_sampling``, ``on_roots``) are callables, ``async def`` or plain, taking the request's params
dict and returning the result dict; they run on the event loop that made the client.
Cancelling the task awaiting a call cancels the request. Errors are the classes of
:mod:`mcpaxle.errors`.

A server that requires authorization (it answers ``401``) is reached with
``connect_http(url, oauth=OAuth(...))``: the core runs the OAuth 2.1 flow and calls the
:class:`~mcpaxle.OAuth` ``authorize`` callback for the user-agent step.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import sys
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Literal,
    Mapping,
    Sequence,
    TypedDict,
    cast,
)

if sys.version_info >= (3, 11):
    from typing import NotRequired
elif TYPE_CHECKING:
    from typing_extensions import NotRequired

from . import _bridge, _native
from . import _otel as otel
from ._durations import ms_options
from ._oauth import OAuth
from ._server import Server
from .errors import UsageError
from .types import (
    CallToolResult,
    CompleteRequestParamsArgument,
    CompleteRequestParamsContext,
    CompleteResult,
    DiscoverResult,
    Error,
    GetPromptResult,
    Implementation,
    InputRequests,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    ServerCapabilities,
    ServerNotification,
    SubscriptionFilter,
    Tool,
)

__all__ = ["Client", "DetailedTask", "Subscription", "TaskStatus", "ToolTask"]

JsonObject = dict[str, Any]
InputHandler = Callable[[JsonObject], "JsonObject | Awaitable[JsonObject]"]

#: A task's status (the Tasks extension's ``TaskStatus``).
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class DetailedTask(TypedDict):
    """A task with what its status carries (the Tasks extension's ``DetailedTask``, the result
    of ``tasks/get``): ``inputRequests`` while ``input_required``, ``result`` (the
    ``CallToolResult``) once ``completed``, ``error`` once ``failed``."""

    taskId: str
    status: TaskStatus
    statusMessage: NotRequired[str]
    createdAt: str
    lastUpdatedAt: str
    ttlMs: int | None
    pollIntervalMs: NotRequired[int]
    inputRequests: NotRequired[InputRequests]
    result: NotRequired[CallToolResult]
    error: NotRequired[Error]


class ListenFilter(SubscriptionFilter, total=False):
    """What ``subscriptions/listen`` asks for: the protocol's ``SubscriptionFilter`` and the
    Tasks extension's ``taskIds``."""

    taskIds: list[str]


def _async(fn: Callable[[Any], Any]) -> Callable[[Any], Awaitable[Any]]:
    """``fn`` (sync or async) as a coroutine function, as the bridge calls it."""

    async def invoke(value: Any) -> Any:
        result = fn(value)
        if inspect.isawaitable(result):
            result = await result
        return result

    return invoke


def _event(fn: Callable[[Any], Any] | None) -> Callable[[Any], Awaitable[None]] | None:
    """A notification callback (sync or async) as a coroutine function returning ``None``."""
    if fn is None:
        return None

    async def invoke(value: Any) -> None:
        result = fn(value)
        if inspect.isawaitable(result):
            await result
        return None

    return invoke


def _call_options(
    timeout_ms: int | datetime.timedelta | None,
    meta: Mapping[str, Any] | None,
    log_level: LoggingLevel | None,
    bypass_cache: bool | None,
    on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
    on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
) -> dict[str, Any]:
    """The native call options: the core's ``CallOptions`` by their Python names (read by the
    core; ``None`` left out), beside the callbacks. The one place every request's options are
    made: ``meta`` gets the caller's OpenTelemetry context here (see :func:`mcpaxle._otel.inject`)."""
    meta = otel.inject(None if meta is None else dict(meta))
    o = ms_options({"timeout_ms": timeout_ms, "meta": meta, "log_level": log_level, "bypass_cache": bypass_cache})
    for key, fn in (("on_progress", on_progress), ("on_log", on_log)):
        if fn is not None:
            if not callable(fn):
                raise UsageError(f"{key} must be a callable, not {type(fn).__name__}")
            o[key] = _event(fn)
    return o


class _Connect:
    """What ``Client.connect_*`` returns: await it for the client, or ``async with`` it."""

    def __init__(self, start: Callable[[], Awaitable[Client]]) -> None:
        self._start = start
        self._client: Client | None = None

    def __await__(self) -> Generator[Any, None, Client]:
        return self._start().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._start()
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


class Client:
    """A connection to one MCP server. Make it with :meth:`connect_http`,
    :meth:`connect_stdio` or (tests) :meth:`connect_in_memory`; close it with :meth:`close`
    (or use ``async with``)."""

    def __init__(self, native: _native.Client, loop: asyncio.AbstractEventLoop, bridge: _native.Bridge,
                 release: Callable[[], None] | None = None) -> None:
        self._native = native
        self._loop = loop
        self._bridge = bridge
        self._closed = False
        # What close() gives back: the bridge, or (in memory) the server's hold on this loop.
        self._release = release or (lambda: _bridge.release(loop))

    @staticmethod
    def _options(options: Mapping[str, Any], on_elicitation: InputHandler | None, on_sampling: InputHandler | None,
                 on_roots: InputHandler | None, on_log: Callable[[LoggingMessageNotificationParams], Any] | None) -> dict[str, Any]:
        """The native options: the core's client options by their Python names (``*_ms``
        durations as milliseconds or ``timedelta``, ``None`` left out: the core's default),
        beside the input handlers and the log callback."""
        o = ms_options(options)
        for key in ("headers", "env"):
            if key in o:
                o[key] = dict(o[key])
        if "protocol_versions" in o:
            o["protocol_versions"] = list(o["protocol_versions"])
        if "cwd" in o:
            o["cwd"] = str(o["cwd"])
        for key, fn in (("on_elicitation", on_elicitation), ("on_sampling", on_sampling), ("on_roots", on_roots)):
            if fn is not None:
                o[key] = _async(fn)
        if on_log is not None:
            if not callable(on_log):
                raise UsageError(f"on_log must be a callable, not {type(on_log).__name__}")
            o["on_log"] = _event(on_log)
        return o

    @classmethod
    async def _connect(cls, kind: str, target: Any, options: dict[str, Any]) -> Client:
        loop = asyncio.get_running_loop()
        bridge = _bridge.acquire(loop)
        try:
            if kind == "http":
                native = await _native.connect_http(bridge, target, options)
            else:
                native = await _native.connect_stdio(bridge, target, options)
        except BaseException:
            _bridge.release(loop)
            raise
        return cls(native, loop, bridge)

    @classmethod
    def connect_http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
        oauth: OAuth | None = None,
        client_info: Mapping[str, Any] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_versions: Sequence[str] | None = None,
        request_timeout_ms: int | datetime.timedelta | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_request_timeout_ms: int | datetime.timedelta | None = None,
        cache: bool | None = None,
        max_input_rounds: int | None = None,
        log_level: str | None = None,
        legacy_get_stream: bool | None = None,
        max_message_size: int | None = None,
    ) -> _Connect:
        """Connects to the Streamable HTTP endpoint ``url``. The options are the core's client
        options (see the README: units and defaults, the same in every binding), e.g.
        ``request_timeout_ms`` (default 60000). ``oauth``: how to obtain access tokens when the
        server requires authorization (see :class:`~mcpaxle.OAuth`); a failed authorization
        fails the call that needed it (often the connect). ``on_log`` (sync or async)
        receives the params of every log message no call's own ``on_log`` takes (over stdio,
        all of them), in order; at most 1024 wait for it, and more are dropped with a warning
        of the ``mcpaxle`` logger. Await it, or use it with ``async with``.

        >>> oauth = OAuth(redirect_uri="http://127.0.0.1:8765/callback", authorize=open_browser)  # doctest: +SKIP
        >>> client = await Client.connect_http("https://mcp.example.com/mcp", oauth=oauth)  # doctest: +SKIP
        """
        data = {
            "headers": headers, "client_info": client_info, "capabilities": capabilities, "protocol_versions": protocol_versions,
            "request_timeout_ms": request_timeout_ms, "reset_timeout_on_progress": reset_timeout_on_progress,
            "max_request_timeout_ms": max_request_timeout_ms, "cache": cache, "max_input_rounds": max_input_rounds,
            "log_level": log_level, "legacy_get_stream": legacy_get_stream, "max_message_size": max_message_size,
        }
        options = cls._options(data, on_elicitation, on_sampling, on_roots, on_log)
        if oauth is not None:
            if not isinstance(oauth, OAuth):
                raise UsageError(f"connect_http's oauth must be an mcpaxle.OAuth, not {type(oauth).__name__}")
            options["oauth"] = oauth._native()
        return _Connect(lambda: cls._connect("http", url, options))

    @classmethod
    def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool | None = None,
        stderr: Literal["inherit", "null", "tracing"] | None = None,
        probe_timeout_ms: int | datetime.timedelta | None = None,
        shutdown_timeout_ms: int | datetime.timedelta | None = None,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_versions: Sequence[str] | None = None,
        request_timeout_ms: int | datetime.timedelta | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_request_timeout_ms: int | datetime.timedelta | None = None,
        cache: bool | None = None,
        max_input_rounds: int | None = None,
        log_level: str | None = None,
        max_message_size: int | None = None,
    ) -> _Connect:
        """Starts ``command`` (``[program, *args]``) as the server and connects over stdio.
        The server gets a small environment: ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``
        and ``USER`` from this process (as the official MCP SDKs do), plus ``env`` (whose values
        win), so that secrets in this process's environment do not leak into every server it
        starts; ``inherit_env=True`` passes the whole environment instead. ``stderr``: the
        server's standard error is inherited (default), discarded (``"null"``) or logged
        through the core's ``tracing`` (``"tracing"``). :meth:`close` shuts the server down
        (waiting ``shutdown_timeout_ms`` after closing stdin, and after SIGTERM). The other
        options as :meth:`connect_http`."""
        data = {
            "env": env, "cwd": cwd, "inherit_env": inherit_env, "stderr": stderr, "probe_timeout_ms": probe_timeout_ms,
            "shutdown_timeout_ms": shutdown_timeout_ms, "client_info": client_info, "capabilities": capabilities,
            "protocol_versions": protocol_versions, "request_timeout_ms": request_timeout_ms,
            "reset_timeout_on_progress": reset_timeout_on_progress, "max_request_timeout_ms": max_request_timeout_ms,
            "cache": cache, "max_input_rounds": max_input_rounds, "log_level": log_level, "max_message_size": max_message_size,
        }
        options = cls._options(data, on_elicitation, on_sampling, on_roots, on_log)
        return _Connect(lambda: cls._connect("stdio", [str(c) for c in command], options))

    @classmethod
    def connect_in_memory(
        cls,
        server: Server,
        *,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_versions: Sequence[str] | None = None,
        request_timeout_ms: int | datetime.timedelta | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_request_timeout_ms: int | datetime.timedelta | None = None,
        cache: bool | None = None,
        max_input_rounds: int | None = None,
        log_level: str | None = None,
        max_message_size: int | None = None,
    ) -> _Connect:
        """Connects to ``server``, an :class:`~mcpaxle.Server` of this process, with no port
        and no child process: the two are joined by the stdio transport over an in-memory
        pipe, so every request goes through the whole protocol (era detection, MRTR asks,
        progress, cancellation, listen streams) as over stdio. Made for tests (see the
        README's "Testing your server"). ``protocol_versions=["2025-11-25"]`` opens a legacy
        session. The server's handlers run on the current loop while the client is open (as
        while it is served); closing the client ends the server's side. The other options as
        :meth:`connect_http`.

        >>> async with Client.connect_in_memory(server) as client:  # doctest: +SKIP
        ...     result = await client.call_tool("forecast", {"city": "Paris"})
        """
        if not isinstance(server, Server):
            raise UsageError(f"connect_in_memory takes an mcpaxle.Server, not {type(server).__name__}")
        data = {
            "client_info": client_info, "capabilities": capabilities, "protocol_versions": protocol_versions,
            "request_timeout_ms": request_timeout_ms, "reset_timeout_on_progress": reset_timeout_on_progress,
            "max_request_timeout_ms": max_request_timeout_ms, "cache": cache, "max_input_rounds": max_input_rounds,
            "log_level": log_level, "max_message_size": max_message_size,
        }
        options = cls._options(data, on_elicitation, on_sampling, on_roots, on_log)

        async def start() -> Client:
            loop = asyncio.get_running_loop()
            bridge = server._acquire(loop)
            try:
                native = await _native.connect_in_memory(bridge, server._native, options)
            except BaseException:
                server._release(loop)
                raise
            return cls(native, loop, bridge, lambda: server._release(loop))

        return _Connect(start)

    # -- properties ---------------------------------------------------------------------------

    @property
    def era(self) -> str:
        """``"modern"`` (2026-07-28) or ``"legacy"`` (an ``initialize`` session)."""
        return self._native.era

    @property
    def protocol_version(self) -> str:
        return self._native.protocol_version

    @property
    def server_info(self) -> Implementation | None:
        return self._native.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self._native.server_capabilities

    @property
    def instructions(self) -> str | None:
        return self._native.instructions

    @property
    def process_id(self) -> int | None:
        """The pid of a server started by :meth:`connect_stdio`."""
        return self._native.process_id

    @property
    def session_id(self) -> str | None:
        return self._native.session_id

    # -- calls --------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout_ms: int | datetime.timedelta | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
        bypass_cache: bool | None = None,
        on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
    ) -> JsonObject:
        """Any request, through the whole pipeline (``_meta``, headers, cache, MRTR, retries):
        its result object. The per-call options as :meth:`call_tool`'s."""
        o = _call_options(timeout_ms, meta, log_level, bypass_cache, on_progress, on_log)
        return await self._native.request(self._bridge, method, params, o)

    async def discover(self) -> DiscoverResult:
        """``server/discover`` (built from the ``initialize`` result in a legacy session)."""
        return await self._native.discover(self._bridge)

    async def list_tools(self) -> list[Tool]:
        """Every tool, all pages."""
        return await self._native.list_tools(self._bridge)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_ms: int | datetime.timedelta | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
        bypass_cache: bool | None = None,
        on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
    ) -> CallToolResult:
        """``tools/call``: the ``CallToolResult``. The per-call options are the core's (as
        Node's and C's): ``timeout_ms`` (milliseconds or a ``timedelta``) overrides the
        client's ``request_timeout_ms`` for each round trip of this call; ``meta`` adds members
        to the request's ``_meta``; ``log_level`` overrides the client's for this call (2026-07-28:
        a legacy session keeps the level it set when connecting);
        ``bypass_cache`` skips the cache (the fresh result is still stored); ``on_progress``
        receives each progress notification's params and ``on_log`` each log message's (sync
        or async callables; they all run before the call returns). Over stdio a log message
        names no request, so it reaches no ``on_log``. Cancel the awaiting task to cancel the
        call. With ``opentelemetry`` installed, ``_meta`` carries the caller's current trace
        context (W3C ``traceparent``, ``tracestate``, ``baggage``) unless ``meta`` has a
        ``traceparent`` of its own: the call's span (see :mod:`mcpaxle.telemetry`) and the
        server's nest under the caller's span."""
        args = dict(arguments) if arguments is not None else None
        o = _call_options(timeout_ms, meta, log_level, bypass_cache, on_progress, on_log)
        return await self._native.call_tool(self._bridge, name, args, o)

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_ms: int | datetime.timedelta | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
        bypass_cache: bool | None = None,
        on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
        on_log: Callable[[LoggingMessageNotificationParams], Any] | None = None,
    ) -> ToolTask:
        """``tools/call``, holding the task the server may run it as (the Tasks extension)
        instead of following it: a :class:`ToolTask` with its ``task_id``, ``status()``,
        ``result()`` and ``cancel()``. When the server answers with the result itself (the tool
        does not run as a task), the handle is already complete: ``task_id`` is ``None`` and
        ``result()`` returns it. The options as :meth:`call_tool`'s; the callbacks serve this
        ``tools/call`` only, ``timeout_ms``, ``meta`` and ``log_level`` the handle's requests
        too. The task outlives the handle: dropping the handle (or cancelling an awaited
        ``result()``) does not cancel the task, only ``cancel()`` does.

        >>> task = await client.call_tool_as_task("rebuild_index")  # doctest: +SKIP
        >>> save(task.task_id)  # doctest: +SKIP
        >>> result = await task.result()  # doctest: +SKIP
        """
        args = dict(arguments) if arguments is not None else None
        o = _call_options(timeout_ms, meta, log_level, bypass_cache, on_progress, on_log)
        return ToolTask(self, await self._native.call_tool_as_task(self._bridge, name, args, o))

    def task(self, task_id: str) -> ToolTask:
        """The :class:`ToolTask` of a task created earlier, from its id alone (by this client or
        another one with the same credentials: e.g. before the application restarted). Sends
        nothing: an unknown id fails at the first request."""
        return ToolTask(self, self._native.task(task_id))

    async def list_resources(self) -> list[Resource]:
        return await self._native.list_resources(self._bridge)

    async def read_resource(
        self,
        uri: str,
        *,
        timeout_ms: int | datetime.timedelta | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
        bypass_cache: bool | None = None,
        on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
    ) -> ReadResourceResult:
        """``resources/read``; the per-call options as :meth:`call_tool`'s."""
        o = _call_options(timeout_ms, meta, log_level, bypass_cache, on_progress)
        return await self._native.read_resource(self._bridge, uri, o)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return await self._native.list_resource_templates(self._bridge)

    async def list_prompts(self) -> list[Prompt]:
        return await self._native.list_prompts(self._bridge)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout_ms: int | datetime.timedelta | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: LoggingLevel | None = None,
        bypass_cache: bool | None = None,
        on_progress: Callable[[ProgressNotificationParams], Any] | None = None,
    ) -> GetPromptResult:
        """``prompts/get`` with string arguments; the per-call options as :meth:`call_tool`'s."""
        o = _call_options(timeout_ms, meta, log_level, bypass_cache, on_progress)
        return await self._native.get_prompt(self._bridge, name, dict(arguments) if arguments else None, o)

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: CompleteRequestParamsArgument,
        context: CompleteRequestParamsContext | None = None,
    ) -> CompleteResult:
        """``completion/complete``: ``ref`` like ``{"type": "ref/prompt", "name": ...}``,
        ``argument`` like ``{"name": ..., "value": ...}``."""
        o = _call_options(None, None, None, None)
        return await self._native.complete(self._bridge, ref, argument, context, o)

    def subscribe(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resources: Sequence[str] | None = None,
        task_ids: Sequence[str] | None = None,
    ) -> Subscription:
        """A subscription to change notifications: ``async for n in client.subscribe(...)``
        (or ``sub = await client.subscribe(...)``, or ``async with``); each ``n`` is
        a :class:`~mcpaxle.types.ServerNotification` (``{"jsonrpc": "2.0", "method": ...,
        "params": ...}``). Close it with :meth:`Subscription.close`.

        ``task_ids`` follows tasks of the Tasks extension (``ToolTask.task_id``): the server
        sends each one's state at once, then a ``notifications/tasks`` (its params a
        :class:`DetailedTask`) at every change; ``acknowledged["taskIds"]`` names those it
        agreed to follow (the caller's own)."""
        f: ListenFilter = {}
        if tools_list_changed:
            f["toolsListChanged"] = True
        if prompts_list_changed:
            f["promptsListChanged"] = True
        if resources_list_changed:
            f["resourcesListChanged"] = True
        if resources:
            f["resourceSubscriptions"] = list(resources)
        if task_ids:
            f["taskIds"] = list(task_ids)
        return Subscription(self, f)

    async def close(self) -> None:
        """Closes the connection: pending calls fail; a stdio server is shut down."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._native.close(self._bridge)
        finally:
            self._release()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Subscription:
    """An open (or opening) subscription; iterate it with ``async for``."""

    def __init__(self, client: Client, filter: ListenFilter) -> None:
        self._client = client
        self._filter = filter
        self._native: _native.Subscription | None = None
        self._opening: asyncio.Future[_native.Subscription] | None = None
        self._closed = False

    async def _open(self) -> _native.Subscription:
        if self._native is None:
            if self._opening is None:
                self._opening = asyncio.ensure_future(self._client._native.subscribe(self._client._bridge, self._filter))
            self._native = await asyncio.shield(self._opening)
            if self._closed:
                self._native.close()
        return self._native

    def __await__(self) -> Generator[Any, None, Subscription]:
        async def opened() -> Subscription:
            await self._open()
            return self

        return opened().__await__()

    @property
    def acknowledged(self) -> ListenFilter | None:
        """The notification types the server agreed to send (once open)."""
        return cast(ListenFilter, self._native.acknowledged) if self._native is not None else None

    async def next(self) -> ServerNotification | None:
        """The next notification, ``None`` once the subscription ended."""
        native = await self._open()
        return await native.next(self._client._bridge)

    def __aiter__(self) -> AsyncIterator[ServerNotification]:
        return self

    async def __anext__(self) -> ServerNotification:
        n = await self.next()
        if n is None:
            raise StopAsyncIteration
        return n

    def close(self) -> None:
        """Ends the subscription."""
        self._closed = True
        if self._native is not None:
            self._native.close()

    async def __aenter__(self) -> Subscription:
        await self._open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class ToolTask:
    """A ``tools/call`` held as a task (:meth:`Client.call_tool_as_task`, :meth:`Client.task`).
    The task outlives this object: dropping it does not cancel the task."""

    def __init__(self, client: Client, native: _native.ToolTask) -> None:
        self._client = client
        self._native = native

    @property
    def task_id(self) -> str | None:
        """The task's id (keep it to pick the task up later with :meth:`Client.task`), or
        ``None`` when the server answered with the result at once."""
        return self._native.task_id

    async def status(self) -> DetailedTask:
        """``tasks/get``: the task's status and what it carries (its input requests, its result
        or its error). Raises :class:`~mcpaxle.errors.UsageError` when there is no task (the
        server answered with the result: see :meth:`result`)."""
        return await self._native.status(self._client._bridge)

    async def result(self) -> CallToolResult:
        """The call's result: follows the task to its end as :meth:`Client.call_tool` does
        (polling at the server's ``pollIntervalMs``, answering its input requests with the
        client's input handlers). A failed task raises its error, a cancelled one
        :class:`~mcpaxle.errors.Cancelled`. Cancelling the awaiting task stops following,
        not the task."""
        return await self._native.result(self._client._bridge)

    async def cancel(self) -> None:
        """``tasks/cancel``: the server acknowledges; the task may still end otherwise if its
        work finished first (:meth:`status` tells). Without a task, does nothing."""
        await self._native.cancel(self._client._bridge)

    def __repr__(self) -> str:
        return f"ToolTask(task_id={self.task_id!r})"

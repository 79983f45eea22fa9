# Stubs of the native module mcpaxle._native (bindings-python/src). Checked against the built
# module by mypy's stubtest (scripts/test.sh, allowlist scripts/stubtest-allowlist.txt): keep
# names, parameters and defaults in step with the Rust. Native classes are constructed by
# `__new__` and cannot be subclassed (`@final`).

import asyncio
from typing import Any, Awaitable, Callable, Literal, Mapping, final

from . import types
from ._client import DetailedTask

__version__: str

JsonObject = dict[str, Any]
#: What the Python layer registers: ``async def invoke(payload, ctx) -> value`` (the core
#: shapes the value into the result).
Invoke = Callable[[Any, RequestContext], Awaitable[Any]]

def runtime_started() -> bool:
    """Whether this process's runtime has started (and was started by this process)."""

def ensure_runtime() -> None:
    """Starts the runtime now; raises ForkError in a child forked after it started."""

def content_block(value: Any) -> JsonObject:
    """One content block made from a value by the core's shaping rule."""

def protocol_versions() -> list[str]:
    """The protocol revisions the core serves, newest first."""

def error_kinds() -> list[tuple[str, int]]:
    """Every kind of the core's errors as (name, JSON-RPC code), in the core's order."""

def options_schema() -> str:
    """The core's option names per options struct, as JSON text (camelCase; Python takes their snake_case forms)."""

def options_examples() -> str:
    """A valid value for every option of ``options_schema()``, by the same areas, as JSON text."""

def check_options(area: str, what: str, options: dict[str, Any]) -> None:
    """Checks ``options`` (Python names, ``None`` for absent) as the core's options of ``area``
    (a name of ``options_schema()``) by the core's rules; raises UsageError naming ``what`` and
    the option at fault."""

def check_token_info(answer: dict[str, Any]) -> None:
    """Checks a token verifier's answer (``{"subject", "scopes", "claims"}``) by the core's rule; raises
    UsageError saying what is wrong."""

def template_variables(uri: str) -> list[str]:
    """The distinct variable names of the URI template ``uri`` (empty without ``{``); raises
    UsageError for a malformed template."""

def telemetry_configure(options: dict[str, Any] | None = None) -> None:
    """Turns telemetry on for the process: ``options`` are the core's telemetry options by
    their Python names (``endpoint``, ``headers``, ``service_name``, ``sample_ratio``,
    ``traces``, ``metrics``, ``metrics_interval_ms``, ``prometheus``, ``record_principal``;
    ``None`` values keep the defaults); raises UsageError for a bad one."""

def telemetry_flush() -> None:
    """Exports every span and metric recorded so far and waits for the exporter (GIL released)."""

def telemetry_shutdown() -> None:
    """Exports what is left (GIL released) and turns telemetry off."""

def telemetry_is_enabled() -> bool:
    """Whether telemetry is on."""

def telemetry_prometheus_text() -> str | None:
    """The metrics in Prometheus's text format while telemetry is on with ``prometheus``, else None."""

@final
class Pool:
    """The native half of ``mcpaxle._pool.Pool``: its queue, its counts."""

    def __new__(cls, max_workers: int, max_abandoned: int) -> Pool: ...
    def submit(self, what: str, function: Callable[[], Any], done: Callable[[tuple[bool, Any]], Any]) -> PoolJob:
        """Queues ``function()`` (from the event loop); ``done((ok, value))`` hands its outcome back."""
    def give_up(self, job: PoolJob) -> None:
        """Gives a submitted job up (its awaiting task was cancelled)."""
    def take(self) -> PoolJob | None:
        """The next job for the calling pool thread (waits); None when the pool shut down."""
    def shutdown(self) -> None:
        """Stops the idle threads and drops the queued calls."""
    @property
    def abandoned(self) -> int: ...
    @property
    def workers(self) -> int: ...

@final
class PoolJob:
    """One job of a pool, as its thread sees it."""

    def begin(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """What to call, and with what."""
    def finish(self, ok: bool, value: Any) -> bool:
        """Hands the outcome over; whether the thread leaves the pool."""

@final
class PoolHandler:
    """A handler the server runs on a pool's threads: ``invoke(payload, ctx, loop)``."""

    def __new__(cls, pool: Pool, what: str, invoke: Callable[[Any, RequestContext, asyncio.AbstractEventLoop], Any]) -> PoolHandler: ...

@final
class Bridge:
    """The bridge between the runtime and one asyncio event loop."""

    def __new__(cls, event_loop: asyncio.AbstractEventLoop) -> Bridge: ...
    def fileno(self) -> int:
        """The file descriptor the loop watches."""
    def drain(self) -> None:
        """Runs every queued job (the loop's reader callback)."""
    def close(self) -> None:
        """Closes the bridge: later jobs are refused."""
    @property
    def closed(self) -> bool: ...

@final
class RequestContext:
    """The context of one request."""

    @property
    def request_id(self) -> int | str: ...
    @property
    def method(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def client_capabilities(self) -> JsonObject: ...
    @property
    def client_info(self) -> JsonObject | None: ...
    @property
    def meta(self) -> JsonObject: ...
    @property
    def trace_context(self) -> dict[str, str] | None:
        """The trace context of the request's span (``traceparent``, and ``tracestate`` and
        ``baggage`` when there are any) while telemetry is on, else None."""
    @property
    def principal(self) -> str | None: ...
    @property
    def progress_token(self) -> str | int | None: ...
    @property
    def headers(self) -> dict[str, str]: ...
    @property
    def claims(self) -> JsonObject | None: ...
    @property
    def scopes(self) -> list[str] | None: ...
    @property
    def is_cancelled(self) -> bool: ...
    def client_supports(self, capability: str) -> bool: ...
    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None: ...
    def close_stream(self, retry_ms: int) -> None: ...
    def log_enabled(self, level: str) -> bool: ...
    def log(self, level: str, data: Any, logger: str | None = None) -> None: ...
    def ask(self, kind: Literal["elicitation", "sampling", "roots"], key: str | None = None, params: JsonObject | None = None) -> tuple[bool, Any]:
        """(True, answer) now, or (False, awaitable); raises InputRequired to end the round."""
    def request_state(self) -> Any: ...
    def set_request_state(self, state: Any) -> None: ...
    def cancelled(self) -> Awaitable[None]: ...
    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (the Tasks extension), or None."""
    def start_task(self) -> Awaitable[bool]:
        """Whether the call now runs as a task (a tool registered with ``defer_task``)."""

@final
class CallNext:
    """A Python middleware's ``call_next``: awaiting it runs the rest of the chain."""

    def __call__(self, request: Any = None) -> Awaitable[JsonObject]: ...

#: What the Python layer registers as a middleware: ``async def invoke((request, call_next))``.
MiddlewareInvoke = Callable[[tuple[JsonObject, CallNext]], Awaitable[JsonObject]]

@final
class Running:
    """A running transport."""

    @property
    def address(self) -> str: ...
    @property
    def done(self) -> bool: ...
    def shutdown(self) -> None: ...
    def wait(self, bridge: Bridge) -> Awaitable[None]: ...

@final
class AsgiBody:
    """The body of a streamed (SSE) response of an ``AsgiService``."""

    def next(self, bridge: Bridge) -> asyncio.Future[bytes | None]:
        """The next frame's bytes, ``None`` at the end."""
    def close(self) -> None:
        """Drops the body: the request is cancelled."""

@final
class AsgiService:
    """One MCP endpoint for a host's ASGI application (``Server.asgi_service``)."""

    @property
    def max_body(self) -> int: ...
    @property
    def drain_timeout_ms(self) -> int: ...
    def handle(
        self, bridge: Bridge, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes, client: tuple[str, int] | None = None
    ) -> asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes | None, AsgiBody | None]]:
        """Serves one request the host routed here: ``(status, headers, body, stream)``, the
        whole ``body`` of a JSON answer or the ``stream`` of an SSE one. Cancelling it cancels
        the request."""
    def shutdown(self) -> None:
        """Ends open listen streams and the legacy sessions."""

@final
class Server:
    """An MCP server whose handlers are Python callables."""

    def __new__(cls, name: str, version: str, options: dict[str, Any] | None = None) -> Server:
        """``options``: the core's server options by their Python names (``title``,
        ``instructions``, ``page_size``, ``server_info_in_results``, ``enable``,
        ``state_secret``, ``previous_state_secret``, ``state_ttl_ms``, ``cache`` (kind ->
        ``{"ttl_ms", "cache_scope"}``), ``legacy`` (bool, or ``{"enabled", "max_sessions",
        "max_sessions_per_principal", "max_sessions_per_peer", "idle_timeout_ms",
        "uninitialized_timeout_ms", "request_timeout_ms"}``), ``handler_timeout_ms``,
        ``mask_error_details``, ``bus``, ``tasks`` (``{"ttl_ms", "poll_interval_ms", "max_tasks",
        "max_tasks_per_principal", "store"}``)); ``None`` values keep the defaults. State secrets left
        unset come from ``MCPAXLE_STATE_SECRET`` / ``MCPAXLE_PREVIOUS_STATE_SECRET``."""
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    def add_tool(self, definition: JsonObject, handler: Invoke | PoolHandler, options: dict[str, Any] | None = None) -> None:
        """``options``: the core's tool options (``timeout_ms``, ``task_support``: ``"forbidden"``,
        ``"optional"`` or ``"required"``, ``defer_task``)."""
    def remove_tool(self, name: str) -> bool: ...
    def add_middleware(self, handler: MiddlewareInvoke) -> None:
        """Appends a middleware to the chain (the first added runs outermost)."""
    def set_visibility(self, handler: Callable[[JsonObject], Awaitable[list[bool]]] | None = None) -> None:
        """Sets the visibility predicate, ``async (asked: {"request", "items"}) -> [bool]``; None removes it."""
    def add_resource(self, definition: JsonObject, handler: Invoke | PoolHandler, cache: dict[str, Any] | None = None) -> None:
        """``cache``: the core's cache hint, ``{"ttl_ms": int, "cache_scope": "public" | "private"}`` (scope default private)."""
    def remove_resource(self, uri: str) -> bool: ...
    def add_resource_template(self, definition: JsonObject, handler: Invoke | PoolHandler, cache: dict[str, Any] | None = None, options: dict[str, Any] | None = None) -> None:
        """``cache`` as in ``add_resource``; ``options``: the core's template options (``allow_path_traversal``)."""
    def remove_resource_template(self, uri_template: str) -> bool: ...
    def add_prompt(self, definition: JsonObject, handler: Invoke | PoolHandler) -> None: ...
    def remove_prompt(self, name: str) -> bool: ...
    def set_completion(self, kind: Literal["prompt", "resource"], name: str, handler: Invoke | PoolHandler) -> None: ...
    def remove_completion(self, kind: Literal["prompt", "resource"], name: str) -> bool: ...
    def notify_resource_updated(self, uri: str) -> None: ...
    def notify_list_changed(self, list: Literal["tools", "prompts", "resources"]) -> None: ...
    def attach(self, bridge: Bridge | None) -> None: ...
    def start_http(self, bridge: Bridge, host: str, port: int, options: dict[str, Any] | None = None) -> Awaitable[Running]:
        """Serves Streamable HTTP; resolves once the port is bound. ``options``: ``path``,
        ``max_body``, ``allowed_hosts``, ``allowed_origins``, ``keep_alive_ms``,
        ``drain_timeout_ms``, ``cors`` (``allowed_origins``, ``allowed_headers``,
        ``exposed_headers``, ``max_age_ms``), ``health_path``, ``metrics_path``, ``connections`` (the core's connection limits:
        ``max_connections``, ``header_read_timeout_ms``, ``body_read_timeout_ms``,
        ``idle_timeout_ms``, ``http2_keep_alive_interval_ms``, ``http2_keep_alive_timeout_ms``,
        ``max_header_bytes``, ``http2_max_concurrent_streams``, ``max_body_bytes_in_flight``;
        the camelCase names of the JSON form are accepted too), and ``auth``:
        ``mcpaxle.BearerAuth._native()``, i.e.
        ``resource``, ``authorization_servers``, ``scopes_supported``, ``required_scopes``,
        ``tool_scopes`` and ``verify`` (``async def (token: str) -> {"subject": str,
        "scopes": list[str]} | None``, called on the bridge's loop; raising means 503)."""
    def asgi_service(self, bridge: Bridge, options: dict[str, Any] | None = None) -> AsgiService:
        """The endpoint of ``Server.asgi_app()``: ``options`` as ``start_http``'s."""
    def start_stdio(self, redirect_stdout: bool = True, options: dict[str, Any] | None = None) -> Running:
        """``options``: the core's stdio options (``max_message_size``, ``drain_timeout_ms``, ``max_outbound_queue``)."""

def connect_http(bridge: Bridge, url: str, options: dict[str, Any] | None = None) -> Awaitable[Client]:
    """Connects to a Streamable HTTP endpoint (an awaitable on the bridge's loop).
    ``options["oauth"]`` is ``mcpaxle.OAuth._native()``: ``redirect_uri``, ``authorize``
    (``async def (authorization_url: str) -> str``; absent: the redirect is followed without
    a user), ``client_id``/``client_secret``/``issuer``, ``client_metadata_url``,
    ``client_name``, ``max_authorizations``, ``token_store`` (``"memory"`` or ``{"file": path}``)."""

def connect_stdio(bridge: Bridge, command: list[str], options: dict[str, Any] | None = None) -> Awaitable[Client]:
    """Spawns ``command[0]`` with the rest as arguments and connects over stdio."""

def connect_in_memory(bridge: Bridge, server: Server, options: dict[str, Any] | None = None) -> Awaitable[Client]:
    """Connects to ``server``, served in this process over an in-memory pipe (the core's
    ``Client::connect_in_memory``); its handlers run on the loop the Python layer attached."""

@final
class Client:
    """A connected MCP client (the core's client). Every call returns an awaitable on the
    bridge's loop; results are JSON objects."""

    @property
    def era(self) -> Literal["modern", "legacy"]: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def server_info(self) -> types.Implementation | None: ...
    @property
    def server_capabilities(self) -> types.ServerCapabilities: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def process_id(self) -> int | None: ...
    @property
    def session_id(self) -> str | None: ...
    def request(
        self,
        bridge: Bridge,
        method: str,
        params: JsonObject | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Awaitable[JsonObject]: ...
    def discover(self, bridge: Bridge) -> Awaitable[types.DiscoverResult]: ...
    def list_tools(self, bridge: Bridge) -> Awaitable[list[types.Tool]]: ...
    def call_tool(
        self,
        bridge: Bridge,
        name: str,
        arguments: JsonObject | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Awaitable[types.CallToolResult]: ...
    def call_tool_as_task(
        self,
        bridge: Bridge,
        name: str,
        arguments: JsonObject | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Awaitable[ToolTask]: ...
    def task(self, task_id: str) -> ToolTask:
        """The handle of a task created earlier; sends nothing."""
    def list_resources(self, bridge: Bridge) -> Awaitable[list[types.Resource]]: ...
    def list_resource_templates(self, bridge: Bridge) -> Awaitable[list[types.ResourceTemplate]]: ...
    def read_resource(self, bridge: Bridge, uri: str, options: Mapping[str, Any] | None = None) -> Awaitable[types.ReadResourceResult]: ...
    def list_prompts(self, bridge: Bridge) -> Awaitable[list[types.Prompt]]: ...
    def get_prompt(
        self, bridge: Bridge, name: str, arguments: dict[str, str] | None = None, options: Mapping[str, Any] | None = None
    ) -> Awaitable[types.GetPromptResult]: ...
    def complete(
        self,
        bridge: Bridge,
        reference: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Awaitable[types.CompleteResult]: ...
    def subscribe(self, bridge: Bridge, filter: Mapping[str, Any]) -> Awaitable[Subscription]: ...
    def close(self, bridge: Bridge) -> Awaitable[None]: ...

@final
class Subscription:
    """An open subscription."""

    @property
    def acknowledged(self) -> types.SubscriptionFilter: ...
    @property
    def closed(self) -> bool: ...
    def next(self, bridge: Bridge) -> Awaitable[types.ServerNotification | None]:
        """The next notification, None once ended."""
    def close(self) -> None: ...

@final
class ToolTask:
    """A ``tools/call`` held as a task (the core's ``ToolTask``); dropping it does not cancel
    the task."""

    @property
    def task_id(self) -> str | None: ...
    def status(self, bridge: Bridge) -> Awaitable[DetailedTask]:
        """``tasks/get``: the ``DetailedTask``."""
    def result(self, bridge: Bridge) -> Awaitable[types.CallToolResult]:
        """The call's result, the task followed to its end."""
    def cancel(self, bridge: Bridge) -> Awaitable[None]:
        """``tasks/cancel``."""

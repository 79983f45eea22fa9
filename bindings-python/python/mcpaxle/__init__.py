"""mcpaxle: Model Context Protocol servers and clients in Python on a Rust core.

>>> from mcpaxle import Server, Context
>>> server = Server("weather", version="1.0.0", instructions="Forecasts by city.")
>>> @server.tool()
... async def forecast(city: str, days: int = 3, ctx: Context | None = None) -> str:
...     '''Forecast for a city.'''
...     return f"Sunny in {city} for the next {days} days"
>>> # server.run()   # stdio; server.run("http", port=8000) for Streamable HTTP

The core speaks both protocol eras (2026-07-28, and 2025-11-25 sessions) on the same server;
the Python layer only turns functions into handlers and values into results.

Handlers: ``async def`` handlers run on the asyncio loop that serves the server; plain
``def`` handlers run on a bounded thread pool, never on the loop. An exception in a tool
becomes an ``isError`` result: :class:`~mcpaxle.errors.ToolError` with its message for the
model, anything else logged (``logging`` logger "mcpaxle") with its traceback while the model
reads "Internal error in tool '<name>'". Cancellation (the client cancels or disconnects)
cancels the handler's task: it sees ``asyncio.CancelledError``.

Multi Round-Trip Requests and the replay model: ``ctx.elicit``, ``ctx.sample`` and
``ctx.list_roots`` ask the client for input. When the request does not carry the answer yet,
the ask raises :class:`~mcpaxle.errors.InputRequired` (let it propagate), the client gets an
``InputRequiredResult``, answers, and retries, and **the handler runs again from the
start** with the answers available. Code before an ask therefore runs once per round: keep
side effects after the asks or make them idempotent (see :class:`Context`).

Authorization: ``server.run("http", auth=BearerAuth(...))`` makes the server an OAuth 2.1
resource server: every request needs a bearer token your ``verify`` function accepts (it
returns a :class:`TokenInfo`), the server publishes its protected resource metadata, answers
``401``/``403`` challenges that start a client's authorization flow (or step-up), and hands
handlers the token's subject as ``ctx.principal``. Issuing tokens is the authorization
server's job, not this library's (see :class:`BearerAuth`).

Traces and metrics: :mod:`mcpaxle.telemetry` turns on OpenTelemetry export (OTLP over HTTP) of a
span per request served and per call made, and of the request metrics; with the
``opentelemetry`` package installed, handlers run in their request's trace context and calls
join the caller's trace.

Processes: the library starts one Rust runtime per process on first use. A child forked
after that cannot use it and gets :class:`~mcpaxle.errors.ForkError`.
"""

from __future__ import annotations

from ._auth import BearerAuth, TokenInfo
from ._client import Client, DetailedTask, Subscription, TaskStatus, ToolTask
from ._content import Audio, EmbeddedResource, Image, Message, ResourceContents, ResourceLink, ToolResult, assistant, user
from ._context import Context, ElicitResult, Root, SampleResult
from ._middleware import CallNext, Item, Request
from ._oauth import OAuth, TokenStore
from ._schema import Field
from ._asgi import AsgiApp
from ._server import CacheHint, ConnectionLimits, Cors, Running, Server
from .errors import InputRequired, McpError, ToolError
from . import telemetry

__version__ = "0.1.0"

__all__ = [
    "AsgiApp",
    "Audio",
    "BearerAuth",
    "CacheHint",
    "CallNext",
    "Client",
    "ConnectionLimits",
    "Context",
    "Cors",
    "DetailedTask",
    "ElicitResult",
    "EmbeddedResource",
    "Field",
    "Image",
    "InputRequired",
    "Item",
    "McpError",
    "Message",
    "OAuth",
    "Request",
    "ResourceContents",
    "ResourceLink",
    "Root",
    "Running",
    "SampleResult",
    "Server",
    "Subscription",
    "TaskStatus",
    "TokenInfo",
    "TokenStore",
    "ToolError",
    "ToolResult",
    "ToolTask",
    "assistant",
    "telemetry",
    "user",
]

"""The MCP endpoint as an ASGI 3 application (:meth:`Server.asgi_app`): the request is served
in Rust (the core's ``McpService.handle_routed``); this module only moves ASGI messages.

It collects the request body from ``receive`` (up to the core's ``max_body``, past which the
core answers 413), hands the method, path, headers, body and client address to the native
endpoint, then sends ``http.response.start`` and the body: a JSON answer at once, an SSE
answer chunk by chunk (``more_body``) as the core yields its events. ``receive`` is watched
meanwhile: ``http.disconnect`` cancels the request (the handler sees ``CancelledError``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from . import _native
    from ._server import Server

__all__ = ["AsgiApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _first(a: asyncio.Future[Any], b: asyncio.Future[Any]) -> None:
    """Waits until ``a`` or ``b`` is done (``asyncio.wait`` for two, without its sets)."""
    waiter = asyncio.get_running_loop().create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    a.add_done_callback(wake)
    b.add_done_callback(wake)
    try:
        await waiter
    finally:
        a.remove_done_callback(wake)
        b.remove_done_callback(wake)


async def _disconnected(receive: Receive) -> None:
    """Returns once the client has gone (what else arrives, such as body past the limit, is
    dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


class AsgiApp:
    """An MCP endpoint for ASGI servers and frameworks (made by :meth:`Server.asgi_app`).

    Run it as it is (``uvicorn module:app``, ``hypercorn module:app``), or route one path of a
    Starlette or FastAPI application to it: ``app.add_route("/mcp", mcp)`` serves exactly
    ``/mcp`` (``app.mount("/mcp", mcp)`` serves ``/mcp/`` and what is below it: a client
    posting to ``/mcp`` gets Starlette's 307 redirect to ``/mcp/``, which not every client
    follows). Frameworks do not send lifespan events to a routed app: give the framework
    ``lifespan=mcp.lifespan`` (FastAPI, Starlette), or call :meth:`shutdown` when stopping.
    """

    def __init__(self, server: Server, options: dict[str, Any]) -> None:
        self._server = server
        self._options = options
        self._loop: asyncio.AbstractEventLoop | None = None
        self._bridge: _native.Bridge | None = None
        self._native: _native.AsgiService | None = None
        self._in_flight = 0
        self._idle = asyncio.Event()

    def __repr__(self) -> str:
        return f"<mcpaxle.AsgiApp of {self._server!r}>"

    def _endpoint(self) -> tuple[_native.Bridge, _native.AsgiService]:
        """The native endpoint on the running loop, made on first use (the options are read by
        the core then: a bad one raises :class:`~mcpaxle.errors.UsageError`)."""
        loop = asyncio.get_running_loop()
        if self._native is not None and self._bridge is not None:
            if self._loop is not loop:
                raise UsageError("this ASGI app is already served on another event loop")
            return self._bridge, self._native
        bridge = self._server._acquire(loop)
        try:
            native = self._server._native.asgi_service(bridge, self._options)
        except BaseException:
            self._server._release(loop)
            raise
        self._loop, self._bridge, self._native = loop, bridge, native
        self._idle = asyncio.Event()
        self._idle.set()
        return bridge, native

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI 3 entry point: ``http`` and ``lifespan`` scopes."""
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            raise UsageError(f"the MCP endpoint serves HTTP (ASGI scope 'http'), not {kind!r}")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self._endpoint()
                except Exception as e:
                    await send({"type": "lifespan.startup.failed", "message": str(e)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    @contextlib.asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """The endpoint's lifespan for a framework that routes to it:
        ``FastAPI(lifespan=mcp.lifespan)`` (``app`` is the framework's, unused). It starts
        the endpoint and, on exit, runs :meth:`shutdown`."""
        self._endpoint()
        try:
            yield
        finally:
            await self.shutdown()

    async def shutdown(self) -> None:
        """Ends open ``subscriptions/listen`` streams (each with its final response) and the
        legacy sessions, waits for the requests in flight (up to ``drain_timeout_ms``), then
        lets go of the loop. A request after it starts the endpoint again, with no sessions."""
        native, loop = self._native, self._loop
        if native is None or loop is None:
            return
        native.shutdown()
        if self._in_flight:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), native.drain_timeout_ms / 1000)
        if self._native is native:
            self._native = self._bridge = self._loop = None
            self._server._release(loop)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        bridge, native = self._endpoint()
        self._in_flight += 1
        self._idle.clear()
        try:
            await self._serve(bridge, native, scope, receive, send)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def _serve(self, bridge: _native.Bridge, native: _native.AsgiService, scope: Scope, receive: Receive, send: Send) -> None:
        limit = native.max_body
        chunks: list[bytes] = []
        size = 0
        # A body declared past the limit is not read: the core answers 413 from the header.
        declared = next((v for n, v in scope["headers"] if n == b"content-length"), b"")
        while not (declared.isdigit() and int(declared) > limit):
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            # Past the limit the core answers 413: no need to hold the rest.
            if size > limit or not message.get("more_body", False):
                break
        body = b"".join(chunks)
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target = bytes(target) + b"?" + bytes(scope["query_string"])
        client = scope.get("client")
        headers = [(bytes(n), bytes(v)) for n, v in scope["headers"]]
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            head = native.handle(bridge, scope["method"], bytes(target).decode("latin-1"), headers, body, (client[0], client[1]) if client else None)
            await _first(head, gone)
            if not head.done():
                head.cancel()
                return
            status, response_headers, full, stream = head.result()
            await send({"type": "http.response.start", "status": status, "headers": response_headers})
            if stream is None:
                await send({"type": "http.response.body", "body": full or b""})
                return
            try:
                while True:
                    chunk = stream.next(bridge)
                    await _first(chunk, gone)
                    if not chunk.done():
                        chunk.cancel()
                        return
                    data = chunk.result()
                    if data is None:
                        break
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                stream.close()
        finally:
            gone.cancel()

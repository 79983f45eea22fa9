"""Cancellation both ways: a client that goes away cancels the handler's task (it sees
asyncio.CancelledError); a cancelled task makes the request fail; cancelling an awaitable of
the library aborts the Rust work behind it; shutdown drains requests in flight."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from typing import Any

import pytest

from conftest import threaded
from mcpclient import request

from mcpaxle import Context, Server


async def test_client_disconnect_cancels_the_handler(serve: Any) -> None:
    server = Server("disconnect")
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    client = await serve(server)
    body = request("tools/call", {"name": "wait_forever"})
    conn = http.client.HTTPConnection(client.host, client.port, timeout=5)
    await asyncio.to_thread(conn.request, "POST", client.path, json.dumps(body), client.headers(body))
    await asyncio.wait_for(started.wait(), 5)
    conn.close()
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_sync_handler_sees_is_cancelled(serve: Any) -> None:
    server = Server("sync-cancel")
    started = threading.Event()
    saw = threading.Event()

    @server.tool()
    def poll(ctx: Context) -> str:
        started.set()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if ctx.is_cancelled:
                saw.set()
                return "stopped"
            time.sleep(0.01)
        return "timeout"

    client = await serve(server)
    body = request("tools/call", {"name": "poll"})
    conn = http.client.HTTPConnection(client.host, client.port, timeout=5)
    await asyncio.to_thread(conn.request, "POST", client.path, json.dumps(body), client.headers(body))
    assert await asyncio.to_thread(started.wait, 5)
    conn.close()
    assert await asyncio.to_thread(saw.wait, 5)


async def test_a_cancelled_task_fails_the_call(serve: Any) -> None:
    server = Server("self-cancel")

    @server.tool()
    async def gives_up() -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)
        return "never"

    client = await serve(server)
    r = await threaded(client.call_tool)("gives_up")
    assert r["isError"] is True
    assert "ancelled" in r["content"][0]["text"]


async def test_cancelling_an_awaitable_aborts_the_rust_side(serve: Any) -> None:
    server = Server("await-cancel")

    @server.tool()
    async def bounded(ctx: Context) -> str:
        try:
            await asyncio.wait_for(ctx.cancelled(), 0.05)
        except asyncio.TimeoutError:
            return "timed out waiting for cancellation"
        return "cancelled?"

    client = await serve(server)
    r = await threaded(client.call_tool)("bounded")
    assert r["content"][0]["text"] == "timed out waiting for cancellation"


async def test_shutdown_drains_requests_in_flight() -> None:
    server = Server("drain")
    started = asyncio.Event()

    @server.tool()
    async def slowish() -> str:
        started.set()
        await asyncio.sleep(0.3)
        return "finished"

    running = await server.start_http("127.0.0.1", 0)
    from mcpclient import Http

    client = Http(running.url or "")
    call = asyncio.create_task(threaded(client.call_tool)("slowish"))
    await asyncio.wait_for(started.wait(), 5)
    await running.stop()
    r = await call
    assert r["content"][0]["text"] == "finished"


async def test_stop_wait_and_shutdown_are_idempotent_and_concurrent() -> None:
    """Two tasks stopping at once both return once stopped; a later stop, wait or shutdown
    returns at once (they used to wait for a bridge already released, forever)."""
    from mcpaxle import _bridge

    server = Server("stop-twice")
    running = await server.start_http("127.0.0.1", 0)
    waiter = asyncio.create_task(running.wait())
    await asyncio.wait_for(asyncio.gather(running.stop(), running.stop(), waiter), 5)
    assert server._serving == 0
    assert asyncio.get_running_loop() not in _bridge._bridges
    await asyncio.wait_for(running.stop(), 5)
    await asyncio.wait_for(running.wait(), 5)
    running.shutdown()
    async with await server.start_http("127.0.0.1", 0) as again:
        await asyncio.wait_for(again.stop(), 5)
    assert server._serving == 0


async def test_a_cancelled_wait_leaves_the_server_running() -> None:
    server = Server("wait-cancelled")

    @server.tool()
    def ping() -> str:
        return "pong"

    running = await server.start_http("127.0.0.1", 0)
    waiter = asyncio.create_task(running.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert server._serving == 1
    from mcpclient import Http

    client = Http(running.url or "")
    r = await threaded(client.call_tool)("ping")
    assert r["content"][0]["text"] == "pong"
    await asyncio.wait_for(running.stop(), 5)
    assert server._serving == 0


async def test_serve_http_task_cancellation_stops_the_server() -> None:
    server = Server("cancel-serve")

    @server.tool()
    def ping() -> str:
        return "pong"

    task = asyncio.create_task(server.serve_http("127.0.0.1", 0))
    await asyncio.sleep(0.2)
    task.cancel()
    try:
        await asyncio.wait_for(task, 5)
    except asyncio.CancelledError:
        pass
    assert server._serving == 0
    # The same server can be served again afterwards.
    running = await server.start_http("127.0.0.1", 0)
    await running.stop()


async def test_port_in_use_is_a_transport_error() -> None:
    from mcpaxle.errors import TransportError

    first = Server("first")
    running = await first.start_http("127.0.0.1", 0)
    try:
        second = Server("second")
        try:
            await second.start_http("127.0.0.1", running.port or 0)
        except TransportError as e:
            assert "cannot listen" in str(e)
        else:
            raise AssertionError("a second server bound the same port")
        assert second._serving == 0
    finally:
        await running.stop()

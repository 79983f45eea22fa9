"""Fixtures: in-process servers served over HTTP on the test's event loop."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable, Callable

import pytest
from mcpclient import Http

from mcpaxle import Running, Server


@pytest.fixture
async def serve() -> Any:
    """``client = await serve(server)``: serves ``server`` on a free port for this test and
    returns an :class:`Http` client; stopped at the end of the test."""
    started: list[Running] = []

    async def start(server: Server, **options: Any) -> Http:
        running = await server.start_http("127.0.0.1", 0, **options)
        started.append(running)
        client = Http(running.url or "")
        client.running = running  # type: ignore[attr-defined]
        return client

    yield start
    for r in started:
        await r.stop()


def threaded(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """Runs a blocking client call off the loop (the server's handlers run on the loop)."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    return run

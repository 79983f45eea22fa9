"""The client's per-call options, the core's ``CallOptions`` by their Python names (as Node's
and C's): ``timeout_ms``, ``meta``, ``log_level``, ``bypass_cache``, ``on_progress``,
``on_log``, against a Python server on the same loop over HTTP, in both eras."""

from __future__ import annotations

import asyncio
import datetime
import sys
from typing import Any, AsyncIterator

import pytest

from mcpaxle import Client, Context, Running, Server
from mcpaxle.errors import McpError, UsageError

TRACE = "com.example/trace"


def make_server() -> Server:
    server = Server("call-options", version="1.0.0", cache={"read": 60_000})
    reads = {"n": 0}

    @server.tool()
    async def slow() -> str:
        """Takes longer than any timeout of these tests."""
        await asyncio.sleep(30)
        return "too late"

    @server.tool()
    def trace(ctx: Context) -> str:
        """The request's ``_meta`` trace member."""
        return str(ctx.meta.get(TRACE))

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at debug, info and warning."""
        await ctx.debug("debug line")
        await ctx.info("info line")
        await ctx.warning("warning line")
        return "logged"

    @server.resource("counter://reads", mime_type="text/plain")
    def counter() -> str:
        reads["n"] += 1
        return str(reads["n"])

    @server.prompt()
    def traced(ctx: Context) -> str:
        return f"trace {ctx.meta.get(TRACE)}"

    return server


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    r = await make_server().start_http("127.0.0.1", 0)
    yield r
    await r.stop()


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
async def client(request: pytest.FixtureRequest, running: Running) -> AsyncIterator[Client]:
    async with Client.connect_http(running.url or "", protocol_versions=[request.param]) as c:
        yield c


@pytest.mark.parametrize("limit", [150, datetime.timedelta(milliseconds=150)])
async def test_timeout_ms_fires(client: Client, limit: int | datetime.timedelta) -> None:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(McpError) as e:
        await asyncio.wait_for(client.call_tool("slow", timeout_ms=limit), 10)
    assert e.value.kind == "timeout"
    assert loop.time() - t0 < 5
    with pytest.raises(McpError) as e:
        await asyncio.wait_for(client.request("tools/call", {"name": "slow"}, timeout_ms=limit), 10)
    assert e.value.kind == "timeout"


async def test_a_bad_timeout_is_refused_by_the_core(client: Client) -> None:
    with pytest.raises(UsageError, match="timeoutMs|timeout_ms|millisecond"):
        await client.call_tool("trace", timeout_ms=0)
    with pytest.raises(UsageError):
        await client.call_tool("trace", timeout_ms="soon")  # type: ignore[arg-type]


async def test_meta_arrives_at_the_server(client: Client) -> None:
    r = await client.call_tool("trace", meta={TRACE: "t-1"})
    assert r["content"][0]["text"] == "t-1"
    r = await client.call_tool("trace")
    assert r["content"][0]["text"] == "None"
    r2 = await client.request("tools/call", {"name": "trace"}, meta={TRACE: "t-2"})
    assert r2["content"][0]["text"] == "t-2"
    p = await client.get_prompt("traced", meta={TRACE: "t-3"})
    assert p["messages"][0]["content"]["text"] == "trace t-3"


async def test_log_level_and_on_log(running: Running) -> None:
    """Modern only: a legacy session's level is the one set (``logging/setLevel``) at connect."""
    async with Client.connect_http(running.url or "", protocol_versions=["2026-07-28"]) as client:
        await logs(client)


async def logs(client: Client) -> None:
    seen: list[Any] = []
    await client.call_tool("chatty", log_level="info", on_log=lambda m: seen.append((m["level"], m["data"])))
    assert seen == [("info", "info line"), ("warning", "warning line")]
    seen.clear()

    async def collect(m: Any) -> None:
        seen.append(m["data"])

    await client.call_tool("chatty", log_level="debug", on_log=collect)
    assert seen == ["debug line", "info line", "warning line"]
    seen.clear()
    await client.call_tool("chatty", on_log=collect)
    assert seen == []
    with pytest.raises(UsageError, match="log_level|logLevel|variant"):
        await client.call_tool("chatty", log_level="loud")  # type: ignore[arg-type]


async def test_bypass_cache_skips_the_cache(running: Running) -> None:
    """Modern only: 2025-11-25 results carry no caching hints, so nothing is cached."""
    async with Client.connect_http(running.url or "", protocol_versions=["2026-07-28"]) as client:
        await reads(client)


async def reads(client: Client) -> None:
    first = (await client.read_resource("counter://reads"))["contents"][0]["text"]
    cached = (await client.read_resource("counter://reads"))["contents"][0]["text"]
    assert cached == first
    fresh = (await client.read_resource("counter://reads", bypass_cache=True))["contents"][0]["text"]
    assert int(fresh) == int(first) + 1
    # The fresh result was stored.
    assert (await client.read_resource("counter://reads"))["contents"][0]["text"] == fresh


async def test_a_callback_must_be_callable(client: Client) -> None:
    with pytest.raises(UsageError, match="on_log"):
        await client.call_tool("trace", on_log="print")  # type: ignore[arg-type]


async def until(predicate: Any, seconds: float = 5) -> None:
    """Waits (bounded) until ``predicate()``: the client's ``on_log`` runs after the call."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate() and loop.time() < deadline:
        await asyncio.sleep(0.01)


async def test_the_clients_on_log_takes_what_no_call_takes(running: Running) -> None:
    seen: list[Any] = []
    async with Client.connect_http(running.url or "", protocol_versions=["2026-07-28"],
                                   on_log=lambda m: seen.append(m["data"])) as client:
        own: list[Any] = []
        await client.call_tool("chatty", log_level="info", on_log=lambda m: own.append(m["data"]))
        assert own == ["info line", "warning line"]
        await client.call_tool("chatty", log_level="warning")
        await until(lambda: seen)
    assert seen == ["warning line"], "the call with its own on_log kept its messages"


async def test_the_clients_on_log_over_stdio() -> None:
    """Over stdio a log message names no request: all of them reach the client's ``on_log``."""
    from mcpclient import EXAMPLE

    seen: list[Any] = []

    async def collect(m: Any) -> None:
        seen.append(m["level"])

    async with Client.connect_stdio([sys.executable, str(EXAMPLE), "--stdio"], log_level="info", on_log=collect,
                                    stderr="null") as client:
        await client.call_tool("test_tool_with_logging")
        await until(lambda: len(seen) >= 3)
    assert len(seen) >= 3 and set(seen) <= {"info", "notice", "warning", "error"}, seen
    with pytest.raises(UsageError, match="on_log"):
        await Client.connect_stdio([sys.executable, str(EXAMPLE), "--stdio"], on_log="print")  # type: ignore[arg-type]

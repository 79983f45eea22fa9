"""The connection limits of ``start_http(connections=...)``: handed to the core, in effect (a
bare connect is closed past the header timeout, a slow body gets 408), and refused with a
UsageError naming the field when bad."""

from __future__ import annotations

import asyncio
import datetime
import json
import time

import pytest
from mcpaxle import ConnectionLimits, Server
from mcpaxle.errors import UsageError


def echo_server() -> Server:
    server = Server("conn-test", version="1")

    @server.tool()
    async def echo(text: str = "") -> str:
        """Echoes."""
        return text

    return server


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    try:
        while await asyncio.wait_for(reader.read(4096), seconds):
            pass
        return True
    except asyncio.TimeoutError:
        return False


async def test_header_and_body_timeouts_apply() -> None:
    limits = ConnectionLimits(header_read_timeout_ms=200, body_read_timeout_ms=datetime.timedelta(milliseconds=200), http2_keep_alive_interval_ms=0)
    running = await echo_server().start_http("127.0.0.1", 0, connections=limits)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        started = time.monotonic()
        assert await closed_within(reader, 5), "a bare connect outlived the header timeout"
        assert time.monotonic() - started >= 0.15
        writer.close()

        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:5]
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 5)
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), head
        assert "bodyReadTimeoutMs" in json.loads(payload)["error"]["message"]
        writer.close()
    finally:
        await running.stop()


@pytest.mark.parametrize(
    ("connections", "message"),
    [
        (ConnectionLimits(max_connections=0), "maxConnections must be at least 1"),
        (ConnectionLimits(max_header_bytes=10), "maxHeaderBytes must be at least 8192"),
        ({"idle_timeout_ms": 0}, "idleTimeoutMs must be more than 0"),
        ({"idle": 5}, "connections: .*idle"),
        ("fast", "connections must be a mcpaxle.ConnectionLimits"),
    ],
)
async def test_bad_limits_are_usage_errors(connections: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        await echo_server().start_http("127.0.0.1", 0, connections=connections)  # type: ignore[arg-type]


def test_limits_reach_the_native_side_in_milliseconds() -> None:
    limits = ConnectionLimits(max_connections=5, idle_timeout_ms=1500, http2_keep_alive_interval_ms=datetime.timedelta(seconds=2), max_body_bytes_in_flight=1 << 20)
    assert limits._native() == {"max_connections": 5, "idle_timeout_ms": 1500, "http2_keep_alive_interval_ms": 2000, "max_body_bytes_in_flight": 1 << 20}

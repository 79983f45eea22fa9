"""The core's log events in Python's ``logging`` (``mcpaxle/_logging.py``): each at the logger
named after where in the core it comes from (``mcpaxle.server.dispatch``), with its level and
its fields; delivered off the asyncio loop; and not printed at all when the application has not
configured logging."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest
from conftest import threaded

from mcpaxle import Server


def failing_server() -> Server:
    server = Server("logs")

    @server.tool()
    async def fails() -> str:
        raise RuntimeError("the disk is full")

    return server


def slow_server() -> Server:
    server = Server("logs")

    @server.tool(timeout_ms=50)
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    return server


async def test_the_cores_events_reach_python_logging(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    client = await serve(slow_server())
    with caplog.at_level(logging.DEBUG, logger="mcpaxle"):
        r = await threaded(client.call_tool)("slow")
        assert r["isError"] is True
        for _ in range(200):
            core = [rec for rec in caplog.records if rec.name == "mcpaxle.server.dispatch"]
            if core:
                break
            await asyncio.sleep(0.025)
    [record] = core
    assert record.levelno == logging.WARNING
    assert "timed out after 50 ms" in record.getMessage()
    assert "slow" in record.mcpaxle_fields["handler"]  # type: ignore[attr-defined]
    assert record.threadName != threading.current_thread().name, "delivered on the core's log thread"


async def test_a_handlers_exception_is_logged_once_with_its_traceback(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = await serve(failing_server())
    with caplog.at_level(logging.DEBUG, logger="mcpaxle"):
        r = await threaded(client.call_tool)("fails")
        assert r["isError"] is True
        await asyncio.sleep(0.3)  # the core's log thread would have delivered its record by now
    errors = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
    [record] = errors
    assert record.name == "mcpaxle"
    assert record.exc_info is not None and "the disk is full" in str(record.exc_info[1])


async def test_levels_below_the_loggers_are_not_logged(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    client = await serve(failing_server())
    with caplog.at_level(logging.CRITICAL, logger="mcpaxle"):
        await threaded(client.call_tool)("fails")
        await asyncio.sleep(0.3)
    assert not [rec for rec in caplog.records if rec.name.startswith("mcpaxle.server")]


def test_nothing_is_printed_unless_logging_is_configured() -> None:
    script = textwrap.dedent(
        """
        import asyncio
        from mcpaxle import Client, Server

        server = Server("quiet")

        @server.tool()
        async def fails() -> str:
            raise RuntimeError("the disk is full")

        async def main() -> None:
            running = await server.start_http("127.0.0.1", 0)
            async with Client.connect_http(running.url) as client:
                await client.call_tool("fails")
            await asyncio.sleep(0.3)
            await running.stop()

        asyncio.run(main())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "unexpected exception" not in out.stderr, out.stderr

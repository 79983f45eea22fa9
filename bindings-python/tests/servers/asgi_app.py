"""The ASGI apps test_asgi.py runs under real uvicorn and hypercorn processes: ``app`` (the
MCP endpoint alone) and ``fastapi_app`` (FastAPI with an ordinary route beside it).

``MCPAXLE_TEST_MARKS`` names a directory where the ``hang`` tool records that it started and
that it was cancelled, so that a test in another process can see the cancellation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastapi import FastAPI

from mcpaxle import Context, Server

server = Server("asgi-test", version="1.0.0")
MARKS = Path(os.environ.get("MCPAXLE_TEST_MARKS", "."))


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@server.tool()
async def steps(n: int, ctx: Context) -> str:
    """Reports n progress steps, then answers (an SSE answer)."""
    for i in range(n):
        await ctx.progress(i + 1, n)
    return f"{n} steps"


@server.tool()
async def hang() -> str:
    """Waits until cancelled."""
    (MARKS / "started").write_text("1")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        (MARKS / "cancelled").write_text("1")
        raise
    return "never"


@server.tool()
def change() -> str:
    """Announces that the tool list changed (for listen streams)."""
    server.notify_list_changed("tools")
    return "changed"


app = server.asgi_app()

mcp = server.asgi_app()
fastapi_app = FastAPI(lifespan=mcp.lifespan)
fastapi_app.add_route("/mcp", mcp)


@fastapi_app.get("/hello")
def hello() -> dict[str, str]:
    return {"hello": "world"}

#!/usr/bin/env python3
"""Drives a quick-start server with the installed mcpaxle client (packaging/test-dist.sh).

    python call_tool.py stdio 'python weather.py' forecast '{"city": "Paris"}' 'Paris'
    python call_tool.py http  http://127.0.0.1:PORT/mcp greet '{"name": "Ada"}' 'Ada'

Lists the tools, calls one, and fails (exit 1) unless the tool is listed and the text of its
result contains the expected string. Waits up to 30 s for an HTTP server to come up. Prints where
mcpaxle was imported from: the test checks it is the installed wheel, not a source tree.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time

import mcpaxle
from mcpaxle import Client


async def connect_http(url: str) -> Client:
    deadline = time.monotonic() + 30
    while True:
        try:
            return await Client.connect_http(url)
        except mcpaxle.errors.McpError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def main(transport: str, target: str, tool: str, arguments: str, expected: str) -> int:
    print(f"call_tool: mcpaxle from {mcpaxle.__file__}")
    client = await Client.connect_stdio(shlex.split(target)) if transport == "stdio" else await connect_http(target)
    async with client:
        names = [t["name"] for t in await client.list_tools()]
        result = await client.call_tool(tool, json.loads(arguments))
    text = "".join(block.get("text", "") for block in result["content"])
    print(f"call_tool: tools {names}; {tool} -> {text!r}")
    if tool not in names or expected not in text or result.get("isError"):
        print(f"call_tool: expected {tool} listed and {expected!r} in its result: {result}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:])))

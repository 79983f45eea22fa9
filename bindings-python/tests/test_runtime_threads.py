"""The runtime's worker threads: TOKIO_WORKER_THREADS sets how many, as in every binding (default:
one per core)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads thread names from /proc")

# Starts the runtime (a call through an in-memory pair), then prints its workers' count.
CHILD = """
import asyncio, os
import mcpaxle

server = mcpaxle.Server("threads", "1")

@server.tool()
async def echo(text: str) -> str:
    return text

async def main() -> None:
    async with mcpaxle.Client.connect_in_memory(server) as client:
        await client.call_tool("echo", {"text": "hi"})
        names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
        print(names.count("mcpaxle-rt"))

asyncio.run(main())
"""


def workers(env: dict[str, str]) -> int:
    base = {k: v for k, v in os.environ.items() if k != "TOKIO_WORKER_THREADS"}
    out = subprocess.run([sys.executable, "-c", CHILD], env={**base, **env}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_tokio_worker_threads_sets_the_runtime_workers() -> None:
    assert workers({"TOKIO_WORKER_THREADS": "1"}) == 1
    assert workers({"TOKIO_WORKER_THREADS": "3"}) == 3


"""``Server.run("http", workers=N)``: N worker processes on one port (SO_REUSEPORT), a
supervisor that restarts a worker that dies and stops them all on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpaxle import Client, Server
from mcpaxle.errors import TransportError, UsageError

SERVER = Path(__file__).parent / "servers" / "workers_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def pid_of_a_fresh_connection(url: str) -> int:
    async with Client.connect_http(url) as c:
        r = await c.call_tool("pid")
        return int(r["content"][0]["text"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_bad_workers_are_refused() -> None:
    server = Server("w")
    with pytest.raises(UsageError, match="fixed port"):
        server.run("http", port=0, workers=2)
    with pytest.raises(UsageError, match="positive int"):
        server.run("http", port=8000, workers=0)
    with pytest.raises(UsageError, match="for transport='http'"):
        server.run("stdio", workers=2)


async def test_two_workers_share_the_port_and_are_supervised() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port), "2"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the workers did not listen within 20 s"
                await asyncio.sleep(0.05)
        # Fresh connections are spread over both workers (30 all on one: 2**-29).
        pids = {await pid_of_a_fresh_connection(url) for _ in range(30)}
        assert len(pids) == 2, pids
        assert proc.pid not in pids, "the supervisor itself does not serve"

        # A worker that dies is replaced; the port keeps being served meanwhile. A connection
        # the kernel queued for the dying worker before it was gone is reset (SO_REUSEPORT
        # gives each worker its own queue): tolerated only while it dies.
        dead = min(pids)
        os.kill(dead, signal.SIGKILL)
        killed = time.monotonic()
        seen: set[int] = set()
        while not (seen - pids):
            assert time.monotonic() < killed + 20, f"no new worker within 20 s (seen {seen})"
            try:
                seen.add(await pid_of_a_fresh_connection(url))
            except TransportError:
                assert time.monotonic() < killed + 2, "connections still fail 2 s after the worker died"
        assert dead not in seen
        workers = (pids | seen) - {dead}
        # Then every connection is served.
        for _ in range(10):
            assert await pid_of_a_fresh_connection(url) in workers

        # SIGTERM to the supervisor stops every worker gracefully, and it exits 0.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        deadline = time.monotonic() + 5
        while any(alive(p) for p in workers):
            assert time.monotonic() < deadline, "a worker outlived its supervisor"
            await asyncio.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

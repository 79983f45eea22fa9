"""The ``bus`` option: Python servers of a fleet share change announcements through a real
Redis (the pinned Debian ``redis-server`` installed by scripts/debian-tool.sh, started and
stopped here on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from mcpaxle import Client, Server
from mcpaxle.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def redis_url() -> AsyncIterator[str]:
    exe = subprocess.run(
        ["bash", str(ROOT / "scripts" / "debian-tool.sh"), "redis-server"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "redis-server did not listen within 10 s"
            await asyncio.sleep(0.02)
    yield f"redis://127.0.0.1:{port}/0"
    proc.kill()
    proc.wait()


def test_a_bad_bus_is_refused_at_once_with_the_core_message() -> None:
    with pytest.raises(UsageError, match="is not a Redis URL"):
        Server("x", bus="http://127.0.0.1:6379")
    with pytest.raises(UsageError, match="must not be empty"):
        Server("x", bus={"url": "redis://127.0.0.1/0", "channel": ""})


async def test_a_change_on_one_instance_reaches_a_listener_of_another(redis_url: str) -> None:
    bus: dict[str, Any] = {"url": redis_url, "channel": "python:fleet"}
    a, b = Server("a", bus=bus, enable=["tools"]), Server("b", bus=bus, enable=["tools"])
    running_a = await a.start_http("127.0.0.1", 0)
    running_b = await b.start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running_b.url or "") as client:
            async with client.subscribe(tools_list_changed=True) as sub:
                # The bus subscribes to Redis in the background: add tools on a until b's
                # listener hears one (each try is a new change), within 10 s.
                deadline = time.monotonic() + 10
                n = None
                for i in range(100):
                    a.tool(f"made_on_a_{i}")(lambda: "ok")
                    try:
                        n = await asyncio.wait_for(sub.next(), 0.2)
                        break
                    except asyncio.TimeoutError:
                        assert time.monotonic() < deadline, "no change from a reached b within 10 s"
                assert n is not None and n["method"] == "notifications/tools/list_changed"
                # And again, now that both are connected (what is still pending read first).
                while True:
                    try:
                        await asyncio.wait_for(sub.next(), 0.5)
                    except asyncio.TimeoutError:
                        break
                a.tool("made_on_a_last")(lambda: "ok")
                n = await asyncio.wait_for(sub.next(), 5)
                assert n is not None and n["method"] == "notifications/tools/list_changed"
    finally:
        await running_a.stop()
        await running_b.stop()

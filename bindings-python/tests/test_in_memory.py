"""Client.connect_in_memory: the package's Client joined to a Server of this process with no
port and no child process, in both eras: calls, MRTR asks answered by the client's handlers,
progress, a listen stream, cancellation; the server's loop is held while a client is open;
the README's pytest example runs as pasted."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpaxle import Client, Context, Server
from mcpaxle.errors import UsageError


def make_server() -> tuple[Server, dict[str, Any]]:
    server = Server("in-memory")
    state: dict[str, Any] = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool()
    async def greet(who: str) -> str:
        return f"Hello, {who}!"

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Who are you?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"Hello, {answer.content['name']}!"

    @server.tool()
    async def progress(ctx: Context) -> str:
        for i in range(1, 4):
            await ctx.progress(i, 3)
        return "progressed"

    @server.tool()
    async def wait(ctx: Context) -> str:
        state["started"].set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "slept"

    return server, state


def accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize(("versions", "era"), [(["2026-07-28"], "modern"), (["2025-11-25"], "legacy")])
async def test_both_eras_calls_asks_progress_and_a_listen_stream(versions: list[str], era: str) -> None:
    server, _ = make_server()
    async with Client.connect_in_memory(server, protocol_versions=versions, on_elicitation=accept) as client:
        assert client.era == era
        info = client.server_info
        assert info is not None and info["name"] == "in-memory"
        r = await client.call_tool("greet", {"who": "Bob"})
        assert r["content"][0]["text"] == "Hello, Bob!"
        r = await client.call_tool("ask_name")
        assert r["content"][0]["text"] == "Hello, Ada!"
        seen: list[float] = []
        await client.call_tool("progress", on_progress=lambda p: seen.append(p["progress"]))
        assert seen == [1, 2, 3]
        async with client.subscribe(tools_list_changed=True) as sub:
            await sub

            @server.tool()
            async def added() -> str:
                return "new"

            n = await asyncio.wait_for(sub.next(), 5)
            assert n is not None and n["method"] == "notifications/tools/list_changed"


async def test_a_cancelled_call_is_cancelled_in_the_server() -> None:
    server, state = make_server()
    async with Client.connect_in_memory(server) as client:
        call = asyncio.ensure_future(client.call_tool("wait"))
        await asyncio.wait_for(state["started"].wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(state["cancelled"].wait(), 5)


async def test_clients_share_a_server_and_release_its_loop() -> None:
    server, _ = make_server()
    a = await Client.connect_in_memory(server)
    b = await Client.connect_in_memory(server)
    await a.close()
    r = await b.call_tool("greet", {"who": "B"})
    assert r["content"][0]["text"] == "Hello, B!"
    await b.close()
    assert server._serving == 0  # the server's handlers no longer hold this loop


async def test_it_takes_a_server() -> None:
    with pytest.raises(UsageError, match="takes an mcpaxle.Server, not dict"):
        Client.connect_in_memory({})  # type: ignore[arg-type]


def test_the_readme_example_runs_as_pasted(tmp_path: Path) -> None:
    """The README's pytest example ("Testing your server"), extracted and run by pytest."""
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, root / "packaging" / "quickstarts.py", tmp_path], check=True)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_weather.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout

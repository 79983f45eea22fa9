"""The client (mcpaxle.Client) against the Rust everything server over HTTP and stdio, in both
eras: list and call, MRTR answered by input handlers, progress, subscriptions, cancellation,
and a server that dies mid-call."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest

from mcpaxle import Client
from mcpaxle.errors import InvalidParams, McpError, TransportError

ROOT = Path(__file__).resolve().parents[2]
# MCPAXLE_EVERYTHING_SERVER names another build of it, as for the Rust and Node client tests.
RUST_SERVER = Path(os.environ.get("MCPAXLE_EVERYTHING_SERVER") or ROOT / "target" / "debug" / "examples" / "everything_server")
SERVERS = Path(__file__).resolve().parent / "servers"


@pytest.fixture(autouse=True, scope="module")
def _rust_server_built() -> None:
    """Fails (never skips) the module's tests when the Rust server was not built."""
    if not RUST_SERVER.exists():
        pytest.fail(f"{RUST_SERVER} is missing: build it with `make test-servers` (scripts/test.sh does)", pytrace=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def rust_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([str(RUST_SERVER), "--http", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("the Rust everything server did not start")
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.kill()
    proc.wait()



@pytest.fixture(params=["http-modern", "http-legacy", "stdio-modern", "stdio-legacy"])
async def client(request: pytest.FixtureRequest, rust_url: str) -> AsyncIterator[Client]:
    transport, era = request.param.split("-")
    versions = ["2025-11-25"] if era == "legacy" else ["2026-07-28"]

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    if transport == "http":
        c = await Client.connect_http(rust_url, on_elicitation=elicit, protocol_versions=versions)
    else:
        c = await Client.connect_stdio([str(RUST_SERVER), "--stdio"], on_elicitation=elicit, protocol_versions=versions)
    assert c.era == era
    yield c
    await c.close()


async def test_list_and_call(client: Client) -> None:
    tools = await client.list_tools()
    names = {t["name"] for t in tools}
    assert {"test_simple_text", "test_tool_with_progress", "test_trigger_tool_change"} <= names
    r = await client.call_tool("test_simple_text")
    assert r["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    r = await client.call_tool("test_error_handling")
    assert r["isError"] is True
    with pytest.raises(InvalidParams):
        await client.call_tool("no_such_tool")
    d = await client.discover()
    assert "capabilities" in d
    assert await client.list_prompts()
    assert await client.list_resources()
    read = await client.read_resource("test://static-text")
    assert read["contents"]


async def test_mrtr_elicitation(client: Client) -> None:
    r = await client.call_tool("test_input_required_result_elicitation")
    assert r["content"][0]["text"] == "Hello, Ada!"


async def test_async_input_handler_runs_on_the_loop(rust_url: str) -> None:
    loop = asyncio.get_running_loop()
    seen: list[Any] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        assert asyncio.get_running_loop() is loop
        seen.append(params)
        await asyncio.sleep(0.01)
        return {"action": "accept", "content": {"name": "Grace"}}

    async with Client.connect_http(rust_url, on_elicitation=elicit) as client:
        r = await client.call_tool("test_input_required_result_multi_round")
        assert r["content"][0]["text"] == "Rounds done: Grace and Grace"
        assert len(seen) == 2 and "requestedSchema" in seen[0]


async def test_input_handler_error_fails_the_call(rust_url: str) -> None:
    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        raise InvalidParams("no, thanks")

    async with Client.connect_http(rust_url, on_elicitation=elicit) as client:
        with pytest.raises(McpError):
            await client.call_tool("test_input_required_result_elicitation")


async def test_progress(client: Client) -> None:
    got: list[dict[str, Any]] = []
    r = await client.call_tool("test_tool_with_progress", on_progress=got.append)
    assert r["content"][0]["text"] == "Progress tool completed"
    # Every callback has run by the time the call returns, in order.
    assert [p["progress"] for p in got] == [0, 50, 100]
    assert got[0]["total"] == 100

    seen: list[float] = []

    async def slow(p: dict[str, Any]) -> None:
        await asyncio.sleep(0.02)
        seen.append(p["progress"])

    await client.call_tool("test_tool_with_progress", on_progress=slow)
    assert seen == [0, 50, 100]


async def test_subscription_tools_list_changed(client: Client) -> None:
    async with client.subscribe(tools_list_changed=True) as sub:
        await client.call_tool("test_trigger_tool_change")
        n = await asyncio.wait_for(sub.next(), 5)
        assert n is not None and n["method"] == "notifications/tools/list_changed"
    async for _ in sub:  # closed: the iteration ends
        pass
    await client.call_tool("test_trigger_tool_change")  # back to the original tool set


async def test_subscription_async_for(rust_url: str) -> None:
    async with Client.connect_http(rust_url) as client:
        sub = client.subscribe(tools_list_changed=True)
        await sub
        assert sub.acknowledged and sub.acknowledged.get("toolsListChanged") is True
        await client.call_tool("test_trigger_tool_change")
        async for n in sub:
            assert n["method"] == "notifications/tools/list_changed"
            sub.close()
        await client.call_tool("test_trigger_tool_change")


async def test_cancel_while_an_input_handler_waits(rust_url: str) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"action": "decline"}

    async with Client.connect_http(rust_url, on_elicitation=elicit) as client:
        task = asyncio.create_task(client.call_tool("test_input_required_result_elicitation"))
        await asyncio.wait_for(started.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(cancelled.wait(), 5)
        r = await client.call_tool("test_simple_text")  # the client still works
        assert r["content"][0]["text"].startswith("This is a simple text")


async def test_cancel_reaches_the_server(capfd: pytest.CaptureFixture[str]) -> None:
    # The stdio server (stderr inherited) says on stderr when its handler saw the cancellation.
    async with Client.connect_stdio([sys.executable, str(SERVERS / "stdio_server.py")]) as client:
        task = asyncio.create_task(client.call_tool("wait_for_cancel"))
        await asyncio.sleep(0.5)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 1
        seen = ""
        for _ in range(100):
            seen += capfd.readouterr().err
            if "handler saw CancelledError" in seen:
                break
            await asyncio.sleep(0.05)
        assert "handler saw CancelledError" in seen


async def test_stdio_server_gets_a_small_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPAXLE_TEST_SECRET", "s3cret")
    command = [sys.executable, str(SERVERS / "stdio_server.py")]

    async def environment(**kw: Any) -> dict[str, str]:
        async with Client.connect_stdio(command, env={"GIVEN": "yes"}, **kw) as client:
            r = await client.call_tool("environment")
            return r["structuredContent"]

    small = await environment()
    assert small["GIVEN"] == "yes"
    assert small["PATH"] == os.environ["PATH"]
    assert "MCPAXLE_TEST_SECRET" not in small, small
    everything = await environment(inherit_env=True)
    assert everything["MCPAXLE_TEST_SECRET"] == "s3cret"
    assert everything["GIVEN"] == "yes"


async def test_call_timeout(tmp_path: Path) -> None:
    async with Client.connect_stdio([sys.executable, str(SERVERS / "stdio_server.py")]) as client:
        with pytest.raises(McpError) as e:
            await client.call_tool("wait_for_cancel", timeout_ms=300)
        assert e.value.kind == "timeout"


async def test_server_killed_mid_call() -> None:
    async with Client.connect_stdio([sys.executable, str(SERVERS / "stdio_server.py")]) as client:
        pid = client.process_id
        assert pid
        task = asyncio.create_task(client.call_tool("wait_for_cancel"))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        t0 = time.monotonic()
        with pytest.raises(TransportError):
            await asyncio.wait_for(task, 5)
        assert time.monotonic() - t0 < 2


async def test_http_server_gone(rust_url: str) -> None:
    port = free_port()
    with pytest.raises(TransportError):
        await Client.connect_http(f"http://127.0.0.1:{port}/mcp", request_timeout_ms=5000)


async def test_complete_and_prompt(rust_url: str) -> None:
    async with Client.connect_http(rust_url) as client:
        p = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert p["messages"]
        c = await client.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, {"name": "arg1", "value": "te"})
        assert "completion" in c
        templates = await client.list_resource_templates()
        assert isinstance(templates, list)


async def test_all_input_handlers(rust_url: str) -> None:
    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}

    def roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}

    async with Client.connect_http(rust_url, on_elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}},
                                   on_sampling=sample, on_roots=roots) as client:
        r = await client.call_tool("test_input_required_result_multiple_inputs")
        assert r["content"][0]["text"] == "Hello, Ada; 2 root(s)"
        r = await client.call_tool("test_input_required_result_sampling")
        assert r["content"][0]["text"] == "The model said: Paris"


async def test_against_a_python_server_on_the_same_loop() -> None:
    from mcpaxle import Context, Server

    server = Server("py-server", version="1.0.0")

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Asks for a name."""
        answer = await ctx.elicit("Your name?", {"name": str})
        return f"Hello, {answer.content['name']}!" if answer.accepted else "no name"

    running = await server.start_http("127.0.0.1", 0)
    try:
        for versions in (["2026-07-28"], ["2025-11-25"]):
            async with Client.connect_http(running.url or "", protocol_versions=versions,
                                           on_elicitation=lambda p: {"action": "accept", "content": {"name": "Lin"}}) as client:
                assert [t["name"] for t in await client.list_tools()] == ["greet"]
                r = await client.call_tool("greet")
                assert r["content"][0]["text"] == "Hello, Lin!"
    finally:
        await running.stop()


async def test_a_stream_closed_mid_call_is_resumed() -> None:
    """ctx.close_stream: a legacy client reconnects with Last-Event-ID and gets what followed
    (progress and the result); a modern one just gets the result."""
    from mcpaxle import Context, Server
    from mcpaxle.errors import UsageError

    server = Server("polling", version="1.0.0")

    @server.tool()
    async def poll(ctx: Context) -> str:
        """Closes its stream mid-call."""
        await ctx.progress(1, 2, "before the close")
        ctx.close_stream(0.05)
        await asyncio.sleep(0.2)
        await ctx.progress(2, 2, "after it")
        with pytest.raises(UsageError):
            ctx.close_stream(-1)
        return "polled"

    running = await server.start_http("127.0.0.1", 0)
    try:
        for versions in (["2025-11-25"], ["2026-07-28"]):
            async with Client.connect_http(running.url or "", protocol_versions=versions) as client:
                seen: list[Any] = []
                r = await client.call_tool("poll", on_progress=lambda p: seen.append(p["message"]))
                assert r["content"][0]["text"] == "polled", versions
                assert seen == ["before the close", "after it"], versions
    finally:
        await running.stop()


async def test_results_match_their_types(client: Client) -> None:
    """What the client returns is what its annotation (a TypedDict of mcpaxle.types, generated
    from the schema) says, in both eras over both transports: every required key there, every
    value of its type."""
    from conforms import mismatches
    from mcpaxle import types as t

    prompt_ref: t.PromptReference = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
    checks: list[tuple[str, Any, Any]] = [
        ("server_info", client.server_info, t.Implementation),
        ("server_capabilities", client.server_capabilities, t.ServerCapabilities),
        ("discover", await client.discover(), t.DiscoverResult),
        ("list_tools", await client.list_tools(), list[t.Tool]),
        ("list_resources", await client.list_resources(), list[t.Resource]),
        ("list_resource_templates", await client.list_resource_templates(), list[t.ResourceTemplate]),
        ("list_prompts", await client.list_prompts(), list[t.Prompt]),
        ("read_resource text", await client.read_resource("test://static-text"), t.ReadResourceResult),
        ("read_resource blob", await client.read_resource("test://static-binary"), t.ReadResourceResult),
        ("get_prompt", await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}), t.GetPromptResult),
        ("get_prompt embedded", await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"}), t.GetPromptResult),
        ("complete", await client.complete(prompt_ref, {"name": "arg1", "value": "te"}), t.CompleteResult),
    ]
    for tool in ["test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
                 "test_multiple_content_types", "test_error_handling", "test_input_required_result_elicitation"]:
        checks.append((f"call_tool {tool}", await client.call_tool(tool), t.CallToolResult))
    async with client.subscribe(tools_list_changed=True) as sub:
        checks.append(("acknowledged", sub.acknowledged, t.SubscriptionFilter))
        await client.call_tool("test_trigger_tool_change")
        checks.append(("notification", await asyncio.wait_for(sub.next(), 5), t.ServerNotification))
    await client.call_tool("test_trigger_tool_change")  # back to the original tool set
    for what, value, hint in checks:
        assert mismatches(value, hint) == [], f"{what}: {value!r}"

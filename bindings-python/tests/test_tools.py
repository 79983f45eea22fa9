"""Tools end to end over HTTP on the test's loop: async and sync handlers, return values,
exceptions, the Context's metadata, progress and logs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
from typing import Any, TypedDict

import pytest
from conftest import threaded

from mcpaxle import Audio, Context, EmbeddedResource, Image, ResourceLink, Server, ToolError, ToolResult
from mcpaxle.errors import InvalidParams

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


async def test_async_and_sync_handlers(serve: Any) -> None:
    server = Server("handlers")
    threads: dict[str, str] = {}

    @server.tool()
    async def on_loop(x: int) -> int:
        threads["async"] = threading.current_thread().name
        return x * 2

    @server.tool()
    def on_pool(x: int) -> int:
        threads["sync"] = threading.current_thread().name
        return x + 1

    client = await serve(server)
    r = await threaded(client.call_tool)("on_loop", {"x": 21})
    assert r["structuredContent"] == {"result": 42}
    assert r["content"] == [{"type": "text", "text": "42"}]
    r = await threaded(client.call_tool)("on_pool", {"x": 1})
    assert r["structuredContent"] == {"result": 2}
    assert threads["async"] == threading.current_thread().name  # the loop's thread
    assert threads["sync"].startswith("mcpaxle-handler")


async def test_a_def_handler_is_answered_while_the_loop_is_blocked(serve: Any) -> None:
    """A plain def is handed to its thread straight from the runtime: the event loop is not in
    its path, so it is answered while the loop is blocked."""
    server = Server("off-loop")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    client = await serve(server)
    assert (await threaded(client.call_tool)("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
    answers: list[tuple[float, Any]] = []
    caller = threading.Thread(target=lambda: answers.append((time.monotonic(), client.call_tool("add", {"a": 2, "b": 3}))))
    blocked_at = time.monotonic()
    caller.start()
    time.sleep(1.0)  # blocks the loop (the mistake an async handler could make)
    unblocked_at = time.monotonic()
    caller.join(5)
    [(answered_at, result)] = answers
    assert result["structuredContent"] == {"result": 5}
    assert answered_at < unblocked_at, f"answered {answered_at - blocked_at:.2f} s in, after the loop was free again"


async def test_sync_handlers_never_block_the_loop(serve: Any) -> None:
    """A blocking def tool runs on the pool: the loop keeps ticking and another call on the
    loop answers while it sleeps."""
    server = Server("blocking")

    @server.tool()
    def slow() -> str:
        time.sleep(0.6)
        return "slow done"

    @server.tool()
    async def fast() -> str:
        return "fast done"

    client = await serve(server)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    t = asyncio.create_task(ticker())
    slow_call = asyncio.create_task(threaded(client.call_tool)("slow"))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    fast_result = await threaded(client.call_tool)("fast")
    fast_latency = time.monotonic() - started
    slow_result = await slow_call
    t.cancel()
    assert fast_result["content"][0]["text"] == "fast done"
    assert slow_result["content"][0]["text"] == "slow done"
    assert fast_latency < 0.4, f"the fast call waited for the slow one ({fast_latency:.2f}s)"
    assert ticks >= 30, f"the loop was blocked (only {ticks} ticks in ~0.6 s)"


async def test_return_values(serve: Any) -> None:
    server = Server("returns")

    @dataclasses.dataclass
    class Weather:
        city: str
        celsius: float

    class Row(TypedDict):
        id: int

    @server.tool()
    async def structured() -> Weather:
        return Weather("Paris", 21.5)

    @server.tool()
    async def typed_dict() -> Row:
        return {"id": 7}

    @server.tool()
    async def untyped():  # type: ignore[no-untyped-def]
        return {"a": [1, 2]}

    @server.tool()
    async def content() -> list:
        return ["text", Image(PNG), Audio(b"RIFF....WAVE", mime_type="audio/wav"), EmbeddedResource("test://x", "hello", mime_type="text/plain"), ResourceLink("test://y", "y")]

    @server.tool()
    async def raw_bytes() -> bytes:
        return PNG

    @server.tool()
    async def nothing() -> None:
        return None

    @server.tool()
    async def full() -> ToolResult:
        return ToolResult(["partial"], structured={"n": 1}, is_error=True, meta={"k": "v"})

    client = await serve(server)
    call = threaded(client.call_tool)
    r = await call("structured")
    assert r["structuredContent"] == {"city": "Paris", "celsius": 21.5}
    assert r["content"] == [{"type": "text", "text": '{"celsius":21.5,"city":"Paris"}'}]  # the core writes members in name order
    assert (await call("typed_dict"))["structuredContent"] == {"id": 7}
    assert (await call("untyped"))["structuredContent"] == {"a": [1, 2]}
    blocks = (await call("content"))["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "audio", "resource", "resource_link"]
    assert blocks[1]["mimeType"] == "image/png" and blocks[3]["resource"] == {"uri": "test://x", "mimeType": "text/plain", "text": "hello"}
    assert (await call("raw_bytes"))["content"][0]["type"] == "image"
    assert (await call("nothing"))["content"] == []
    r = await call("full")
    assert r["isError"] is True and r["structuredContent"] == {"n": 1} and r["_meta"]["k"] == "v"
    tools = {t["name"]: t for t in (await threaded(client.call)("tools/list")).result["tools"]}
    assert tools["structured"]["outputSchema"]["properties"]["celsius"] == {"type": "number"}


async def test_arguments_are_converted(serve: Any) -> None:
    import enum

    class Unit(enum.Enum):
        C = "celsius"
        F = "fahrenheit"

    @dataclasses.dataclass
    class Place:
        city: str
        unit: Unit = Unit.C

    server = Server("args")
    seen: dict[str, Any] = {}

    @server.tool()
    async def where(place: Place, days: float = 1.0, **extra: Any) -> str:
        seen.update(place=place, days=days, extra=extra)
        return "ok"

    client = await serve(server)
    await threaded(client.call_tool)("where", {"place": {"city": "Oslo", "unit": "fahrenheit"}, "days": 2, "other": True})
    assert seen["place"] == Place("Oslo", Unit.F)
    assert seen["days"] == 2.0 and isinstance(seen["days"], float)
    assert seen["extra"] == {"other": True}


async def test_exceptions_become_error_results(serve: Any, caplog: Any) -> None:
    server = Server("errors", mask_error_details=True)

    @server.tool()
    async def for_the_model() -> str:
        raise ToolError("the city is unknown")

    @server.tool()
    async def broken() -> str:
        raise ValueError("secret detail")

    @server.tool()
    def broken_sync() -> str:
        raise KeyError("secret")

    @server.tool()
    async def bad_params() -> str:
        raise InvalidParams("Invalid params: nope")

    client = await serve(server)
    call = threaded(client.call_tool)
    r = await call("for_the_model")
    assert r == {**r, "isError": True, "content": [{"type": "text", "text": "the city is unknown"}]}
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        r = await call("broken")
    assert r["isError"] is True
    assert r["content"][0]["text"] == 'Internal error in tool "broken"'
    assert "secret detail" not in r["content"][0]["text"]
    assert any("broken" in rec.getMessage() and rec.exc_info and "secret detail" in str(rec.exc_info[1]) for rec in caplog.records)
    r = await call("broken_sync")
    assert r["isError"] is True and r["content"][0]["text"] == 'Internal error in tool "broken_sync"'
    reply = await threaded(client.call)("tools/call", {"name": "bad_params"})
    assert reply.status == 400 and reply.final["error"]["code"] == -32602
    # The server goes on.
    assert (await call("for_the_model"))["isError"] is True


async def test_unexpected_exceptions_show_their_message_unless_masked(serve: Any) -> None:
    """The core's policy: the model reads what went wrong (it can correct itself); explicit
    errors read the same whether details are masked or not."""
    for mask in (False, True):
        server = Server("policy", mask_error_details=mask)

        @server.tool()
        async def broken() -> str:
            raise ValueError("the file is missing")

        @server.tool()
        def exits() -> str:
            raise SystemExit(3)

        @server.resource("test://broken")
        def resource() -> str:
            raise KeyError("k")

        @server.tool()
        async def refuses() -> str:
            raise ToolError("no such city")

        client = await serve(server)
        call = threaded(client.call_tool)
        r = await call("broken")
        assert r["isError"] is True
        assert r["content"][0]["text"] == ('Internal error in tool "broken"' if mask else "the file is missing")
        r = await call("exits")
        assert r["content"][0]["text"] == ('Internal error in tool "exits"' if mask else "Internal error in tool 'exits' (it raised SystemExit)")
        reply = await threaded(client.call)("resources/read", {"uri": "test://broken"})
        error = reply.final["error"]
        assert error["code"] == -32603
        assert error["message"] == ('Internal error in resource "test://broken"' if mask else "'k'")
        assert (await call("refuses"))["content"][0]["text"] == "no such city"


async def test_context_metadata_progress_and_logs(serve: Any) -> None:
    server = Server("context", enable=["logging"])
    seen: dict[str, Any] = {}

    @server.tool()
    async def inspect_ctx(ctx: Context) -> str:
        seen.update(
            id=ctx.request_id,
            method=ctx.method,
            version=ctx.protocol_version,
            caps=ctx.client_capabilities,
            info=ctx.client_info,
            meta=ctx.meta,
            principal=ctx.principal,
            cancelled=ctx.is_cancelled,
            sampling=ctx.client_supports("sampling"),
        )
        await ctx.progress(1, 2, "half")
        ctx.progress(2, 2)
        await ctx.info({"step": "done"}, logger="test")
        ctx.debug("not sent: below the requested level")
        return "ok"

    client = await serve(server)
    reply = await threaded(client.call)(
        "tools/call",
        {"name": "inspect_ctx", "_meta": {"progressToken": "p1", "io.modelcontextprotocol/logLevel": "info", "trace": "abc"}},
        id="req-7",
    )
    assert reply.result["content"][0]["text"] == "ok"
    assert seen["id"] == "req-7" and seen["method"] == "tools/call" and seen["version"] == "2026-07-28"
    assert seen["info"]["name"] == "mcpaxle-tests" and seen["meta"]["trace"] == "abc"
    assert seen["sampling"] is True and seen["principal"] is None and seen["cancelled"] is False
    kinds = [(n["method"], n["params"].get("progress")) for n in reply.notifications]
    assert kinds == [("notifications/progress", 1), ("notifications/progress", 2), ("notifications/message", None)]
    assert reply.notifications[0]["params"] == {"progressToken": "p1", "progress": 1, "total": 2, "message": "half"}
    assert reply.notifications[2]["params"] == {"level": "info", "logger": "test", "data": {"step": "done"}}


async def test_tool_without_arguments_member(serve: Any) -> None:
    server = Server("noargs")

    @server.tool()
    def simple() -> str:
        return "fine"

    client = await serve(server)
    assert (await threaded(client.call_tool)("simple"))["content"][0]["text"] == "fine"


async def test_python_values_become_json_by_one_rule(serve: Any) -> None:
    # Values cross into the core through convert.rs (pythonize plus the binding's JSON rules):
    # int keys as text, non-finite floats as null, tuples as lists, ints of at most 64 bits.
    server = Server("values")
    meta = {
        "ints": [1, -2, 2**64 - 1, -(2**63)],
        7: "an int key",
        "floats": [1.5, float("nan"), float("inf")],
        "tuple": (1, "a", None),
        "nested": {"t": True, "f": False},
    }

    @server.tool(meta=meta)
    def shown() -> str:
        return ""

    for bad, error, words in [
        (2**64, OverflowError, "does not fit in 64 bits"),
        (-(2**63) - 1, OverflowError, "does not fit in 64 bits"),
        (2**200, OverflowError, "does not fit in 64 bits"),
        (b"bytes", TypeError, "cannot be sent as JSON"),
        (object(), TypeError, "cannot be sent as JSON"),
        ({(1, 2): "a tuple key"}, TypeError, "cannot be sent as JSON"),
        ({True: "a bool key"}, TypeError, "dict keys must be strings"),
    ]:
        with pytest.raises(error, match=words):
            server.tool(name="refused", meta={"bad": bad})(shown)
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="nested too deeply"):
        server.tool(name="cyclic", meta={"bad": cyclic})(shown)

    client = await serve(server)
    tools = (await threaded(client.call)("tools/list")).result["tools"]
    assert [t["name"] for t in tools] == ["shown"]
    assert tools[0]["_meta"] == {
        "ints": [1, -2, 2**64 - 1, -(2**63)],
        "7": "an int key",
        "floats": [1.5, None, None],
        "tuple": [1, "a", None],
        "nested": {"t": True, "f": False},
    }

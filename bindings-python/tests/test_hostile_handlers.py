"""Handlers that cannot take the server down: whatever they raise (SystemExit,
KeyboardInterrupt, GeneratorExit, any BaseException) fails that call only; a plain def that
blocks forever times out, its thread abandoned and replaced while others are served; a busy
pool says who holds it; a process with a stuck thread still exits on SIGTERM and on stdin EOF
within its drain deadline; an async def that blocks the loop is named in a warning."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import threaded
from mcpclient import Http, Stdio, request

from mcpaxle import Context, Server
from mcpaxle.errors import UsageError

SERVERS = Path(__file__).resolve().parent / "servers"


class Custom(BaseException):
    """A BaseException of the user's own."""


KINDS = [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Custom("mine")]


def raising_server(exc: BaseException) -> Server:
    """Every kind of handler, def and async def, raising ``exc``; plus a tool that works."""
    server = Server("raising")

    def boom() -> Any:
        raise exc

    async def aboom() -> Any:
        raise exc

    server.add_tool(boom, "boom")
    server.add_tool(aboom, "aboom")
    server.add_resource(lambda: boom(), "test://boom", name="boom")
    server.add_resource(aboom, "test://aboom", name="aboom")
    server.add_prompt(lambda: boom(), "boom")
    server.add_prompt(aboom, "aboom")

    @server.completion(prompt="boom")
    def complete(argument: str, value: str) -> list[str]:
        raise exc

    @server.completion(prompt="aboom")
    async def acomplete(argument: str, value: str) -> list[str]:
        raise exc

    @server.tool()
    def hello() -> str:
        return "still serving"

    return server


@pytest.mark.parametrize("exc", KINDS, ids=lambda e: type(e).__name__)
async def test_a_base_exception_fails_that_call_only(serve: Any, exc: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    client = await serve(raising_server(exc))
    kind = type(exc).__name__
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        for tool in ("boom", "aboom"):
            r = await threaded(client.call_tool)(tool)
            assert r["isError"] is True and f"(it raised {kind})" in r["content"][0]["text"], r
            assert (await threaded(client.call_tool)("hello"))["content"][0]["text"] == "still serving"
        calls = [
            ("resources/read", {"uri": "test://boom"}),
            ("resources/read", {"uri": "test://aboom"}),
            ("prompts/get", {"name": "boom"}),
            ("prompts/get", {"name": "aboom"}),
            ("completion/complete", {"ref": {"type": "ref/prompt", "name": "boom"}, "argument": {"name": "x", "value": ""}}),
            ("completion/complete", {"ref": {"type": "ref/prompt", "name": "aboom"}, "argument": {"name": "x", "value": ""}}),
        ]
        for method, params in calls:
            reply = await threaded(client.call)(method, params)
            error = reply.final["error"]
            assert error["code"] == -32603 and f"(it raised {kind})" in error["message"], (method, params, error)
            assert (await threaded(client.call_tool)("hello"))["content"][0]["text"] == "still serving"
    logged = [r for r in caplog.records if r.name == "mcpaxle" and "only this call fails" in r.getMessage()]
    assert len(logged) == 8 and all(r.exc_info for r in logged)


async def test_a_stuck_def_times_out_while_others_are_served(serve: Any) -> None:
    server = Server("stuck", max_workers=2, max_abandoned_threads=4)
    release = threading.Event()
    saw_cancel = threading.Event()

    @server.tool(timeout_ms=300)
    def stuck(ctx: Context) -> str:
        while not release.wait(0.01):
            if ctx.is_cancelled:
                saw_cancel.set()
        return "released"

    @server.tool()
    def hello() -> str:
        return "hello"

    client = await serve(server)
    try:
        started = time.monotonic()
        stuck_calls = [asyncio.ensure_future(threaded(client.call_tool)("stuck")) for _ in range(3)]
        await asyncio.sleep(0.05)
        # Both threads are held: hello waits until the first timeout frees one (a replacement).
        assert (await threaded(client.call_tool)("hello"))["content"][0]["text"] == "hello"
        for r in await asyncio.gather(*stuck_calls):
            assert r["isError"] is True
            assert re.search(r"tool \"stuck\" handler did not finish within 300 ms \(its own timeout\)", r["content"][0]["text"]), r
        assert time.monotonic() - started < 3
        assert await asyncio.to_thread(saw_cancel.wait, 2), "the abandoned thread sees ctx.is_cancelled"
        assert 1 <= server._pool.abandoned <= 4
        # The pool still serves at full width with the stuck threads abandoned.
        results = await asyncio.gather(*[threaded(client.call_tool)("hello") for _ in range(4)])
        assert all(r["content"][0]["text"] == "hello" for r in results)
    finally:
        release.set()


async def test_the_server_wide_timeout_covers_async_handlers_and_resources(serve: Any) -> None:
    server = Server("slow", handler_timeout_ms=200)
    cancelled = asyncio.Event()

    @server.tool()
    async def sleepy() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    @server.resource("test://slow")
    def slow() -> str:
        time.sleep(1)
        return "late"

    client = await serve(server)
    r = await threaded(client.call_tool)("sleepy")
    assert r["isError"] is True and "200 ms (the server's handler timeout)" in r["content"][0]["text"], r
    await asyncio.wait_for(cancelled.wait(), 2)
    error = (await threaded(client.call)("resources/read", {"uri": "test://slow"})).final["error"]
    assert error["code"] == -32603 and 'resource "test://slow"' in error["message"], error


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(UsageError, match="handler_timeout"):
        Server("bad", handler_timeout_ms=0)
    server = Server("bad")
    with pytest.raises(UsageError, match="tool 'f'"):
        server.add_tool(lambda: "x", "f", timeout_ms=-1)


async def test_a_saturated_pool_logs_the_tools_holding_it(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    server = Server("busy", max_workers=1)
    release = threading.Event()
    started = threading.Event()

    @server.tool()
    def hog() -> str:
        started.set()
        release.wait(10)
        return "done"

    @server.tool()
    def hello() -> str:
        return "hello"

    client = await serve(server)
    with caplog.at_level(logging.WARNING, logger="mcpaxle"):
        hog_call = asyncio.ensure_future(threaded(client.call_tool)("hog"))
        assert await asyncio.to_thread(started.wait, 5)
        hello_call = asyncio.ensure_future(threaded(client.call_tool)("hello"))
        deadline = time.monotonic() + 5
        while not any("handler threads are busy" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        release.set()
        assert (await hello_call)["content"][0]["text"] == "hello"
        assert (await hog_call)["content"][0]["text"] == "done"
    [record] = [r for r in caplog.records if "handler threads are busy" in r.getMessage()]
    message = record.getMessage()
    assert "all 1 handler threads are busy (tool 'hog', running for up to" in message and "the tool 'hello' waits" in message, message


def stuck_process(args: list[str]) -> tuple[subprocess.Popen[bytes], str | None]:
    """Starts tests/servers/stuck_server.py; returns it and, for HTTP, its URL."""
    proc = subprocess.Popen([sys.executable, str(SERVERS / "stuck_server.py"), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = None
    if args:
        m = re.search(r"serving (http://\S+)", read_until(proc, "serving http://"))
        assert m
        url = m.group(1)
    return proc, url


def read_until(proc: subprocess.Popen[bytes], text: str) -> str:
    """The first line of the process's stderr holding ``text`` (at most 20 lines read)."""
    assert proc.stderr is not None
    seen = []
    for _ in range(20):
        line = proc.stderr.readline().decode()
        if text in line or not line:
            assert text in line, seen
            return line
        seen.append(line)
    raise AssertionError(seen)


def wait_started(proc: subprocess.Popen[bytes]) -> None:
    read_until(proc, "stuck: started")


def call_quietly(client: Http, body: dict[str, Any]) -> None:
    try:
        client.post(body, 30)
    except Exception:  # noqa: BLE001 - the server goes away under it: expected
        pass


def exit_within(proc: subprocess.Popen[bytes], seconds: float) -> float:
    started = time.monotonic()
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"still running {seconds} s later (killed)") from None
    return time.monotonic() - started


def test_sigterm_with_a_stuck_thread_exits_within_the_drain_deadline() -> None:
    proc, url = stuck_process(["--http"])
    client = Http(url or "")
    caller = threading.Thread(target=call_quietly, args=(client, request("tools/call", {"name": "stuck"})), daemon=True)
    caller.start()
    wait_started(proc)
    proc.send_signal(signal.SIGTERM)
    took = exit_within(proc, 1 + 3)  # the 1 s drain deadline, and the interpreter's exit
    assert proc.returncode == 0, proc.returncode
    assert took < 4


def test_stdin_eof_with_a_stuck_thread_exits_promptly() -> None:
    s = Stdio([str(SERVERS / "stuck_server.py")])
    s.send(request("tools/call", {"name": "stuck"}, id=1))
    wait_started(s.proc)
    assert s.proc.stdin is not None
    s.proc.stdin.close()
    exit_within(s.proc, 1 + 3)
    assert s.proc.returncode == 0


async def test_an_async_def_blocking_the_loop_is_named(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    server = Server("blocking", loop_block_warning_ms=200)

    @server.tool()
    async def nap() -> str:
        time.sleep(0.8)  # blocks the loop: the mistake being reported
        return "woke"

    @server.tool()
    async def polite() -> str:
        await asyncio.sleep(0.8)
        return "woke"

    client = await serve(server)
    with caplog.at_level(logging.WARNING, logger="mcpaxle"):
        assert (await threaded(client.call_tool)("polite"))["content"][0]["text"] == "woke"
        assert not [r for r in caplog.records if "blocked the event loop" in r.getMessage()], "awaiting is not blocking"
        assert (await threaded(client.call_tool)("nap"))["content"][0]["text"] == "woke"
        await asyncio.sleep(0.2)  # the loop's next tick reports the whole block
    final = [r.getMessage() for r in caplog.records if "blocked the event loop for" in r.getMessage()]
    assert len(final) == 1 and "tool 'nap'" in final[0], final
    seconds = float(re.search(r"for (\d+\.\d+) s", final[0]).group(1))  # type: ignore[union-attr]
    assert 0.5 <= seconds <= 2.0, final[0]  # a 0.8 s block, measured to within a tick (slack for a loaded machine)
    assert any("tool 'nap' has been blocking the event loop" in r.getMessage() for r in caplog.records)


async def test_sequential_calls_reuse_one_thread_and_never_warn(caplog: pytest.LogCaptureFixture) -> None:
    from mcpaxle._pool import Pool

    pool = Pool(4)
    with caplog.at_level(logging.WARNING, logger="mcpaxle"):
        for i in range(300):
            assert await pool.run("tool 'echo'", lambda i=i: i) == i
    assert pool._workers == 1, "a thread is free again before its result reaches the loop"
    assert not [r for r in caplog.records if r.name == "mcpaxle"]
    pool.shutdown()


async def test_abandoned_threads_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    from mcpaxle._pool import Pool

    pool = Pool(1, max_abandoned=1)
    release = threading.Event()
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        for _ in range(3):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(pool.run("tool 'stuck'", lambda: release.wait(10)), 0.2)
    # The first stuck thread was abandoned and replaced; the second, past the bound, keeps its
    # place (said once); the third call never got a thread and was dropped from the queue.
    assert pool.abandoned == 1 and pool._workers == 1
    deadline = time.monotonic() + 5  # the pool's log records reach logging on the core's log thread
    while not any("max_abandoned_threads" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    [record] = [r for r in caplog.records if "max_abandoned_threads" in r.getMessage()]
    assert "tool 'stuck' was given up" in record.getMessage()
    release.set()
    deadline = time.monotonic() + 5
    while pool.abandoned and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert pool.abandoned == 0 and pool._workers == 1, "a returning abandoned thread leaves a full pool"
    assert await pool.run("tool 'echo'", lambda: "served") == "served"
    pool.shutdown()

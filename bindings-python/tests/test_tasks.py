"""The Tasks extension from Python: ``@server.tool(task_support=...)`` runs an unchanged handler
as a task for a client that declares ``io.modelcontextprotocol/tasks``; its asks become the
task's input requests (answered with ``tasks/update``), ``tasks/cancel`` cancels it. The
client's explicit handle (``Client.call_tool_as_task``, ``Client.task``) polls, follows and
cancels such a task."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from conftest import threaded
from mcpclient import ALL_CAPS

import pytest

from mcpaxle import Client, Context, Server, ToolError, ToolTask
from mcpaxle.errors import Cancelled, InvalidParams, UsageError

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {**ALL_CAPS, "extensions": {TASKS: {}}}


def poll(client: Any, task_id: str, *statuses: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task = client.call("tasks/get", {"taskId": task_id}, caps=CAPS).result
        if task["status"] in statuses:
            return task
        assert time.monotonic() < deadline, f"task {task_id} stayed {task['status']}, never {statuses}"
        time.sleep(0.02)


async def test_an_unchanged_handler_runs_as_a_task_and_its_result_is_inlined(serve: Any) -> None:
    server = Server("tasks", tasks={"ttl_ms": 60_000, "poll_interval_ms": 250})
    seen: list[Any] = []

    @server.tool(task_support="optional")
    async def build(ctx: Context, target: str = "all") -> str:
        seen.append(ctx.task_id)
        ctx.progress(1, 2, message="compiling")
        await asyncio.sleep(0.05)
        return f"built {target}"

    @server.tool(task_support="optional")
    def plain_def(n: int = 2) -> int:
        return n * 21

    client = await serve(server)
    discover = (await threaded(client.call)("server/discover", caps=CAPS)).result
    assert discover["capabilities"]["extensions"] == {TASKS: {}}

    created = (await threaded(client.call)("tools/call", {"name": "build", "arguments": {"target": "docs"}}, caps=CAPS)).result
    assert created["resultType"] == "task" and created["status"] == "working"
    assert (created["ttlMs"], created["pollIntervalMs"]) == (60_000, 250)
    done = await threaded(poll)(client, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "built docs"
    assert done["statusMessage"] == "compiling"
    assert seen == [created["taskId"]]

    sync_def = (await threaded(client.call)("tools/call", {"name": "plain_def"}, caps=CAPS)).result
    assert (await threaded(poll)(client, sync_def["taskId"], "completed"))["result"]["structuredContent"] == {"result": 42}

    # Without the extension the same tool is an ordinary call.
    ordinary = (await threaded(client.call)("tools/call", {"name": "build"})).result
    assert ordinary["resultType"] == "complete" and ordinary["content"][0]["text"] == "built all"
    assert seen[-1] is None


async def test_asks_surface_in_tasks_get_and_tasks_update_answers_them(serve: Any) -> None:
    server = Server("asks")

    @server.tool(task_support="required")
    async def deploy(ctx: Context) -> str:
        answer = await ctx.elicit("Deploy to production?", {"confirm": bool}, key="confirm")
        if not answer.accepted:
            raise ToolError("not confirmed")
        return f"deployed: {answer.content}"

    client = await serve(server)
    refused = await threaded(client.call)("tools/call", {"name": "deploy"})
    assert refused.status == 400 and refused.final["error"]["code"] == -32021
    assert refused.final["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}

    task_id = (await threaded(client.call)("tools/call", {"name": "deploy"}, caps=CAPS)).result["taskId"]
    waiting = await threaded(poll)(client, task_id, "input_required")
    assert waiting["inputRequests"]["confirm"]["method"] == "elicitation/create"
    assert waiting["inputRequests"]["confirm"]["params"]["message"] == "Deploy to production?"
    update = {"taskId": task_id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}}
    ack = (await threaded(client.call)("tasks/update", update, caps=CAPS)).result
    assert ack["resultType"] == "complete" and "status" not in ack
    done = await threaded(poll)(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "deployed: {'confirm': True}"


async def test_tasks_cancel_cancels_the_coroutine(serve: Any) -> None:
    server = Server("cancel")
    cancelled = asyncio.Event()

    @server.tool(task_support="optional")
    async def forever() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    client = await serve(server)
    task_id = (await threaded(client.call)("tools/call", {"name": "forever"}, caps=CAPS)).result["taskId"]
    assert (await threaded(client.call)("tasks/get", {"taskId": task_id}, caps=CAPS)).result["status"] == "working"
    ack = (await threaded(client.call)("tasks/cancel", {"taskId": task_id}, caps=CAPS)).result
    assert ack["resultType"] == "complete"
    await asyncio.wait_for(cancelled.wait(), 5)
    assert (await threaded(poll)(client, task_id, "cancelled", "completed", "failed"))["status"] == "cancelled"
    unknown = await threaded(client.call)("tasks/get", {"taskId": "not-a-task"}, caps=CAPS)
    assert unknown.final["error"]["code"] == -32602


async def test_a_deferred_task_asks_through_mrtr_first(serve: Any) -> None:
    server = Server("deferred")

    @server.tool(task_support="required", defer_task=True)
    async def greet_later(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"name": str}, key="user_name")
        assert await ctx.start_task()
        return f"Hello, {answer.content['name']}!"

    client = await serve(server)
    round1 = (await threaded(client.call)("tools/call", {"name": "greet_later"}, caps=CAPS)).result
    assert round1["resultType"] == "input_required" and "taskId" not in round1
    retry = {
        "name": "greet_later",
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": round1["requestState"],
    }
    created = (await threaded(client.call)("tools/call", retry, caps=CAPS)).result
    assert created["resultType"] == "task" and "requestState" not in created
    done = await threaded(poll)(client, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Hello, Alice!"


async def status_until(task: ToolTask, status: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        current = dict(await task.status())
        if current["status"] == status:
            return current
        assert time.monotonic() < deadline, f"task {task.task_id} stayed {current['status']}, never {status}"
        await asyncio.sleep(0.02)


async def test_call_tool_as_task_returns_a_handle_to_poll_follow_and_cancel() -> None:
    server = Server("handles", tasks={"poll_interval_ms": 20})
    cancelled = asyncio.Event()

    @server.tool(task_support="required")
    async def deploy(ctx: Context) -> str:
        answer = await ctx.elicit("Deploy to production?", {"confirm": bool}, key="confirm")
        return f"deployed: {answer.content['confirm']}"

    @server.tool(task_support="optional")
    async def broken() -> str:
        raise InvalidParams("bad input for the job")

    @server.tool(task_support="optional")
    async def forever() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    @server.tool()
    def plain() -> str:
        return "at once"

    def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    async with Client.connect_in_memory(server, on_elicitation=confirm) as client:
        # The task's question shows in its status; result() answers it and follows to the end.
        task = await client.call_tool_as_task("deploy")
        assert task.task_id is not None
        waiting = await status_until(task, "input_required")
        assert waiting["taskId"] == task.task_id
        assert waiting["inputRequests"]["confirm"]["method"] == "elicitation/create"
        result = await task.result()
        assert result["content"][0]["text"] == "deployed: True"
        done = await task.status()
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "deployed: True"
        # Picked up again from its id alone.
        assert (await client.task(task.task_id).result())["content"] == result["content"]

        # A failed task: the error in its status, raised by result().
        failing = await client.call_tool_as_task("broken")
        with pytest.raises(InvalidParams, match="bad input for the job"):
            await failing.result()
        assert (await failing.status())["error"]["code"] == -32602

        # An ordinary tool: the handle is complete at once.
        at_once = await client.call_tool_as_task("plain")
        assert at_once.task_id is None
        assert (await at_once.result())["content"][0]["text"] == "at once"
        with pytest.raises(UsageError):
            await at_once.status()
        await at_once.cancel()

        # Neither dropping the handle nor cancelling a wait cancels the task; cancel() does.
        running = await client.call_tool_as_task("forever")
        task_id = running.task_id
        assert task_id is not None
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(running.result(), 0.1)
        del running
        await asyncio.sleep(0.1)
        assert not cancelled.is_set()
        again = client.task(task_id)
        assert (await again.status())["status"] == "working"
        await again.cancel()
        await asyncio.wait_for(cancelled.wait(), 5)
        await status_until(again, "cancelled")
        with pytest.raises(Cancelled):
            await again.result()

        with pytest.raises(InvalidParams):
            await client.task("not-a-task").status()


async def test_a_listen_stream_follows_the_callers_tasks() -> None:
    server = Server("followed", tasks={"poll_interval_ms": 20})

    @server.tool(task_support="required")
    async def deploy(ctx: Context) -> str:
        answer = await ctx.elicit("Deploy to production?", {"confirm": bool}, key="confirm")
        return f"deployed: {answer.content['confirm']}"

    def unused(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the test answers the task's question itself, with tasks/update")

    # on_elicitation declares the capability the task's question needs.
    async with Client.connect_in_memory(server, on_elicitation=unused) as client:
        task = await client.call_tool_as_task("deploy")
        assert task.task_id is not None
        async with client.subscribe(task_ids=[task.task_id, "someone-elses"]) as sub:
            assert sub.acknowledged == {"taskIds": [task.task_id]}
            seen = []
            while "completed" not in seen:
                n = await asyncio.wait_for(sub.next(), 10)
                assert n is not None and n["method"] == "notifications/tasks", n
                params = n["params"]
                assert params["taskId"] == task.task_id and params["status"] != "failed", params
                seen.append(params["status"])
                if params["status"] == "input_required":
                    answer = {"action": "accept", "content": {"confirm": True}}
                    update = {"taskId": task.task_id, "inputResponses": {"confirm": answer}}
                    await client.request("tasks/update", update)
            assert params["result"]["content"][0]["text"] == "deployed: True"
            assert "input_required" in seen, seen

"""Multi Round-Trip Requests: an ask ends the round with an InputRequiredResult, the retry
carries inputResponses and requestState, and the handler replays from the start."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from conftest import threaded

from mcpaxle import Context, Server
from mcpaxle.errors import InputRequired


@dataclasses.dataclass
class Person:
    name: str
    age: int = 0


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def test_elicit_replay_with_input_responses_and_request_state(serve: Any) -> None:
    server = Server("mrtr")
    runs: list[Any] = []

    @server.tool()
    async def greet(ctx: Context) -> str:
        runs.append(ctx.request_state)  # code before the ask runs once per round
        if ctx.request_state is None:
            ctx.set_request_state({"round": 1})
        answer = await ctx.elicit("Who are you?", Person, key="who")
        return f"Hello {answer.data.name} ({answer.data.age}), state {ctx.request_state}"

    client = await serve(server)
    first = (await threaded(client.call)("tools/call", {"name": "greet"})).result
    assert first["resultType"] == "input_required"
    ask = first["inputRequests"]["who"]
    assert ask["method"] == "elicitation/create"
    assert ask["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 0}},
        "required": ["name"],
    }
    state = first["requestState"]
    assert isinstance(state, str) and state

    retry = {"name": "greet", "inputResponses": {"who": accept({"name": "Ann", "age": 40})}, "requestState": state}
    done = (await threaded(client.call)("tools/call", retry)).result
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Hello Ann (40), state {'round': 1}"
    assert runs == [None, {"round": 1}]

    tampered = {**retry, "requestState": state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")}
    bad = await threaded(client.call)("tools/call", tampered)
    assert "error" in bad.final and bad.final["error"]["code"] == -32602


async def test_concurrent_asks_land_in_one_round_and_multi_round(serve: Any) -> None:
    server = Server("rounds")

    @server.tool()
    async def three(ctx: Context) -> str:
        name, sample, roots = await asyncio.gather(
            ctx.elicit("Name?", {"name": str}),
            ctx.sample("Say hi", max_tokens=10),
            ctx.list_roots(),
        )
        later = await ctx.elicit("Again?", {"name": str})
        return f"{name.content['name']}/{sample.text}/{len(roots)}/{later.content['name']}"

    client = await serve(server)
    r1 = (await threaded(client.call)("tools/call", {"name": "three"})).result
    assert sorted(r1["inputRequests"]) == ["elicitation_1", "roots_1", "sampling_1"]
    answers = {
        "elicitation_1": accept({"name": "A"}),
        "sampling_1": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "roots_1": {"roots": [{"uri": "file:///tmp"}]},
    }
    r2 = (await threaded(client.call)("tools/call", {"name": "three", "inputResponses": answers, "requestState": r1["requestState"]})).result
    assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["elicitation_2"]
    assert r2["requestState"] != r1["requestState"]
    r3 = (await threaded(client.call)("tools/call", {"name": "three", "inputResponses": {"elicitation_2": accept({"name": "B"})}, "requestState": r2["requestState"]})).result
    assert r3["content"][0]["text"] == "A/hi/1/B"


async def test_missing_capability_and_input_required_not_swallowed(serve: Any) -> None:
    server = Server("caps")

    @server.tool()
    async def needs_sampling(ctx: Context) -> str:
        await ctx.sample("x")
        return "sampled"

    @server.tool()
    async def catches_everything(ctx: Context) -> str:
        try:
            await ctx.sample("x")
        except Exception:  # InputRequired is a BaseException: it is not caught here
            return "swallowed"
        return "sampled"

    @server.tool()
    async def retry_later(ctx: Context) -> str:
        if ctx.request_state is None:
            ctx.set_request_state("later")
            raise InputRequired()
        return f"resumed with {ctx.request_state}"

    client = await serve(server)
    reply = await threaded(client.call)("tools/call", {"name": "needs_sampling"}, caps={})
    assert reply.status == 400
    assert reply.final["error"]["code"] == -32021
    assert reply.final["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    r = (await threaded(client.call)("tools/call", {"name": "catches_everything"})).result
    assert r["resultType"] == "input_required"
    r = (await threaded(client.call)("tools/call", {"name": "retry_later"})).result
    assert r["resultType"] == "input_required" and "inputRequests" not in r
    r = (await threaded(client.call)("tools/call", {"name": "retry_later", "requestState": r["requestState"]})).result
    assert r["content"][0]["text"] == "resumed with later"


async def test_sync_handler_asks_with_the_sync_twins(serve: Any) -> None:
    server = Server("sync-asks")

    @server.tool()
    def confirm(ctx: Context) -> str:
        answer = ctx.elicit_sync("Sure?", {"ok": bool}, key="ok")
        return f"ok={answer.content['ok']}"

    client = await serve(server)
    r1 = (await threaded(client.call)("tools/call", {"name": "confirm"})).result
    assert r1["inputRequests"]["ok"]["params"]["requestedSchema"]["properties"] == {"ok": {"type": "boolean"}}
    r2 = (await threaded(client.call)("tools/call", {"name": "confirm", "inputResponses": {"ok": accept({"ok": True})}, "requestState": r1["requestState"]})).result
    assert r2["content"][0]["text"] == "ok=True"


async def test_prompt_and_resource_asks(serve: Any) -> None:
    server = Server("non-tool")

    @server.prompt()
    async def poem(ctx: Context) -> str:
        who = await ctx.elicit("For whom?", {"name": str}, key="who")
        return f"A poem for {who.content['name']}"

    client = await serve(server)
    r1 = (await threaded(client.call)("prompts/get", {"name": "poem"})).result
    assert r1["resultType"] == "input_required"
    r2 = (await threaded(client.call)("prompts/get", {"name": "poem", "inputResponses": {"who": accept({"name": "Bo"})}, "requestState": r1["requestState"]})).result
    assert r2["messages"] == [{"role": "user", "content": {"type": "text", "text": "A poem for Bo"}}]

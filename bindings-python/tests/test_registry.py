"""Resources, templates, prompts and completions; changes at run time reaching a
subscriptions/listen stream; caching hints."""

from __future__ import annotations

import asyncio
import enum
from typing import Any

import pytest
from conftest import threaded
from mcpclient import request

from mcpaxle import CacheHint, EmbeddedResource, Image, Message, ResourceContents, Server, assistant, user
from mcpaxle.errors import UsageError


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


async def test_resources_and_templates(serve: Any) -> None:
    server = Server("resources")

    @server.resource("test://text", mime_type="text/plain", description="Some text")
    def text() -> str:
        return "hello"

    @server.resource("test://bytes")
    async def blob() -> bytes:
        return b"\x00\x01"

    @server.resource("test://json")
    def data() -> dict:
        return {"a": 1}

    @server.resource("note://{id}/{part}", name="note", mime_type="text/markdown")
    def note(id: int, part: str, uri: str) -> str:
        return f"note {id + 1} {part} at {uri}"

    @server.resource("test://many")
    def many() -> list:
        return [ResourceContents("one"), ResourceContents(b"two", mime_type="application/x-two", uri="test://many/2")]

    client = await serve(server)
    call = threaded(client.call)
    listed = (await call("resources/list")).result
    assert {r["uri"] for r in listed["resources"]} == {"test://text", "test://bytes", "test://json", "test://many"}
    templates = (await call("resources/templates/list")).result["resourceTemplates"]
    assert templates == [{"uriTemplate": "note://{id}/{part}", "name": "note", "mimeType": "text/markdown"}]

    async def read(uri: str) -> list[dict[str, Any]]:
        return (await call("resources/read", {"uri": uri})).result["contents"]

    assert await read("test://text") == [{"uri": "test://text", "mimeType": "text/plain", "text": "hello"}]
    assert await read("test://bytes") == [{"uri": "test://bytes", "mimeType": "application/octet-stream", "blob": "AAE="}]
    assert await read("test://json") == [{"uri": "test://json", "mimeType": "application/json", "text": '{"a":1}'}]
    assert (await read("note://41/intro"))[0]["text"] == "note 42 intro at note://41/intro"
    assert [c.get("text", c.get("blob")) for c in await read("test://many")] == ["one", "dHdv"]
    missing = await call("resources/read", {"uri": "test://nope"})
    assert missing.final["error"]["code"] == -32602


async def test_template_variables_are_checked_against_path_traversal(serve: Any) -> None:
    server = Server("paths")
    seen: list[str] = []

    @server.resource("file:///{+path}")
    def file(path: str) -> str:
        seen.append(path)
        return path

    @server.resource("calc://{expr}", allow_path_traversal=True)
    def calc(expr: str) -> str:
        return expr

    with pytest.raises(UsageError, match="allow_path_traversal"):
        server.add_resource(lambda: "x", "test://direct", allow_path_traversal=True)

    client = await serve(server)
    call = threaded(client.call)
    ok = (await call("resources/read", {"uri": "file:///docs/guide.md"})).result["contents"]
    assert ok[0]["text"] == "docs/guide.md"
    for uri in ["file:///../etc/passwd", "file:///docs/%2E%2E/%2E%2E/etc/passwd", "file:////etc/passwd", "file:///a%5Cb"]:
        refused = await call("resources/read", {"uri": uri})
        assert refused.final["error"]["code"] == -32602, uri
        assert "path traversal" in refused.final["error"]["message"]
        assert refused.final["error"]["data"] == {"uri": uri}
    assert seen == ["docs/guide.md"]
    # The opt-out hands the value over as matched.
    assert (await call("resources/read", {"uri": "calc://1%2F2"})).result["contents"][0]["text"] == "1/2"


async def test_prompts_and_completions(serve: Any) -> None:
    server = Server("prompts")

    @server.prompt(title="Greeting")
    def greet(name: str, times: int = 1, mood: Mood = Mood.HAPPY) -> str:
        """Greets someone.

        Args:
            name: Who to greet.
        """
        return f"{'hi ' * times}{name}, {mood.value}"

    @server.prompt()
    async def conversation() -> list[Message]:
        return [user("Look:"), user(Image(b"\x89PNG\r\n\x1a\n")), assistant("I see."), user(EmbeddedResource("test://x", "body"))]

    @server.completion(prompt="greet")
    def complete_name(argument: str, value: str, context: dict) -> list[str]:
        return [n for n in ("alice", "albert", "bob") if n.startswith(value)] + [f"arg={argument}"]

    @server.completion(prompt="conversation")
    def complete_many(value: str) -> list[str]:
        return [f"{value}{i}" for i in range(150)]

    client = await serve(server)
    call = threaded(client.call)
    prompts = {p["name"]: p for p in (await call("prompts/list")).result["prompts"]}
    assert prompts["greet"]["arguments"] == [
        {"name": "name", "description": "Who to greet.", "required": True},
        {"name": "times"},
        {"name": "mood"},
    ]
    assert prompts["greet"]["title"] == "Greeting" and prompts["greet"]["description"] == "Greets someone."
    got = (await call("prompts/get", {"name": "greet", "arguments": {"name": "Ann", "times": "2", "mood": "sad"}})).result
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "hi hi Ann, sad"}}]
    convo = (await call("prompts/get", {"name": "conversation"})).result["messages"]
    assert [(m["role"], m["content"]["type"]) for m in convo] == [("user", "text"), ("user", "image"), ("assistant", "text"), ("user", "resource")]
    missing_arg = await call("prompts/get", {"name": "greet", "arguments": {}})
    assert missing_arg.final["error"]["code"] == -32602

    ref = {"type": "ref/prompt", "name": "greet"}
    c = (await call("completion/complete", {"ref": ref, "argument": {"name": "name", "value": "al"}})).result["completion"]
    assert c["values"] == ["alice", "albert", "arg=name"]
    c = (await call("completion/complete", {"ref": {"type": "ref/prompt", "name": "conversation"}, "argument": {"name": "x", "value": "v"}})).result["completion"]
    assert len(c["values"]) == 100 and c["total"] == 150 and c["hasMore"] is True


async def test_run_time_changes_reach_listeners(serve: Any) -> None:
    server = Server("changes")

    @server.tool()
    def first() -> str:
        return "1"

    @server.resource("test://watched")
    def watched() -> str:
        return "w"

    @server.prompt()
    def existing() -> str:
        return "p"

    client = await serve(server)
    wanted = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["test://watched"]}
    listen = request("subscriptions/listen", {"notifications": wanted}, id="listen-1")
    stream = await asyncio.to_thread(client.open_stream, listen)
    try:
        await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/subscriptions/acknowledged")

        def later() -> str:
            return "2"

        server.add_tool(later)
        await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/tools/list_changed")
        tools = {t["name"] for t in (await threaded(client.call)("tools/list")).result["tools"]}
        assert tools == {"first", "later"}

        assert server.remove_tool("first") is True
        assert server.remove_tool("first") is False
        count = lambda: sum(m.get("method") == "notifications/tools/list_changed" for m in stream.messages)  # noqa: E731
        await asyncio.to_thread(stream.wait_for, lambda m: count() >= 2)

        server.add_prompt(lambda: "p", "dynamic")
        await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/prompts/list_changed")

        server.notify_resource_updated("test://watched")
        updated = await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/resources/updated")
        assert updated["params"]["uri"] == "test://watched"
        tools = {t["name"] for t in (await threaded(client.call)("tools/list")).result["tools"]}
        assert tools == {"later"}

        # A list that changes behind the registries (what a template serves) is announced
        # by name; a name that is not a list is a usage error, and nothing is sent.
        with pytest.raises(UsageError, match='unknown list "templates"'):
            server.notify_list_changed("templates")  # type: ignore[arg-type]
        server.notify_list_changed("resources")
        await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/resources/list_changed")
        assert not any(m.get("method") == "notifications/templates/list_changed" for m in stream.messages)
    finally:
        stream.close()


async def test_cache_hints(serve: Any) -> None:
    server = Server("cache", cache={"tools": (60_000, "public"), "resources": 5_000, "read": CacheHint(1_000, "private")})

    @server.tool()
    def t() -> str:
        return ""

    @server.resource("test://r")
    def r() -> str:
        return ""

    @server.resource("test://short", cache=10)
    def short() -> str:
        return ""

    client = await serve(server)
    call = threaded(client.call)
    tools = (await call("tools/list")).result
    assert (tools["ttlMs"], tools["cacheScope"]) == (60_000, "public")
    resources = (await call("resources/list")).result
    # A hint without a scope is private, in every binding (the core's default, the safe side).
    assert (resources["ttlMs"], resources["cacheScope"]) == (5_000, "private")
    read = (await call("resources/read", {"uri": "test://r"})).result
    assert (read["ttlMs"], read["cacheScope"]) == (1_000, "private")
    read = (await call("resources/read", {"uri": "test://short"})).result
    assert (read["ttlMs"], read["cacheScope"]) == (10, "private")


def test_template_variables_are_the_cores_reading() -> None:
    # The names come from the core's RFC 6570 parser: operators, modifiers and repeats are read
    # as the matcher reads them, and a malformed template is refused with the core's message.
    server = Server("templates")

    @server.resource("repo://{owner}/{+path}{?ref,owner}{&opts*}")
    def read(owner: str, path: str, ref: str = "", opts: Any = None) -> str:
        return owner

    with pytest.raises(UsageError, match="not a valid URI template.*never closed"):

        @server.resource("repo://{owner")
        def broken(owner: str) -> str:
            return owner

    with pytest.raises(UsageError, match="parameter.*missing.*not variables"):

        @server.resource("repo://{owner:3}/{+path}")
        def missing(owner: str, path: str, missing: str) -> str:
            return owner

"""@server.middleware in both eras over HTTP with bearer tokens: per-principal rate limiting,
the order of two audit middlewares, tool-level authorization rejecting with a chosen code,
a result rewrite, timing, what a middleware sees of a request, and the request's headers and
token claims on the handler's Context."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Callable

import pytest

from mcpaxle import BearerAuth, Client, Context, McpError, Request, Running, Server, TokenInfo
from mcpaxle.errors import InternalError, InvalidRequest, UsageError

TOKENS = {
    "alice": TokenInfo(subject="alice", scopes=["mcp"], claims={"tenant": "acme", "roles": ["admin"]}),
    "bob": TokenInfo(subject="bob", scopes=["mcp"], claims={"tenant": "globex", "roles": []}),
}

ERAS = [("2026-07-28", "modern"), ("2025-11-25", "legacy")]


async def verify(token: str) -> TokenInfo | None:
    return TOKENS.get(token)


def make_server() -> Server:
    server = Server("middleware-test", version="1.0.0")

    @server.tool()
    async def whoami(ctx: Context) -> dict[str, Any]:
        return {"principal": ctx.principal, "tenant_header": ctx.headers.get("x-tenant"), "claims": ctx.claims, "scopes": ctx.scopes}

    @server.tool()
    async def slow() -> str:
        await asyncio.sleep(0.03)
        return "done"

    @server.tool()
    def admin_reset() -> str:
        return "reset"

    @server.tool()
    def echo(text: str = "hi") -> str:
        return text

    return server


Connect = Callable[[str, str], Any]


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Server], Any]]:
    """``connect = await serve(server)``; ``async with connect(token, version) as client``."""
    started: list[Running] = []

    async def start(server: Server) -> Connect:
        auth = BearerAuth(resource="http://127.0.0.1/mcp", authorization_servers=["http://127.0.0.1:9/as"], verify=verify)
        running = await server.start_http("127.0.0.1", 0, auth=auth)
        started.append(running)

        def connect(token: str, version: str) -> Any:
            headers = {"Authorization": f"Bearer {token}", "X-Tenant": f"{token}-corp"}
            return Client.connect_http(running.url or "", headers=headers, protocol_versions=[version])

        return connect

    yield start
    for r in started:
        await r.stop()


@pytest.mark.parametrize("version, era", ERAS)
async def test_handlers_read_headers_and_claims(serve: Any, version: str, era: str) -> None:
    connect = await serve(make_server())
    async with connect("alice", version) as client:
        r = await client.call_tool("whoami")
    assert r["structuredContent"] == {"principal": "alice", "tenant_header": "alice-corp", "claims": {"tenant": "acme", "roles": ["admin"]}, "scopes": ["mcp"]}


@pytest.mark.parametrize("version, era", ERAS)
async def test_rate_limit_per_principal(serve: Any, version: str, era: str) -> None:
    server = make_server()
    calls: dict[str, int] = {}

    @server.middleware
    async def rate_limit(request: Request, call_next: Any) -> dict[str, Any]:
        if request.method == "tools/call":
            who = request.principal or ""
            calls[who] = calls.get(who, 0) + 1
            if calls[who] > 2:
                raise InvalidRequest(f"Rate limited: {who} may make 2 tool calls", data={"retryAfterMs": 1000})
        return await call_next(request)

    connect = await serve(server)
    async with connect("alice", version) as alice, connect("bob", version) as bob:
        for _ in range(2):
            assert (await alice.call_tool("echo"))["content"][0]["text"] == "hi"
        with pytest.raises(InvalidRequest, match="Rate limited: alice may make 2 tool calls") as e:
            await alice.call_tool("echo")
        assert e.value.code == -32600 and e.value.data == {"retryAfterMs": 1000}
        assert (await bob.call_tool("echo", {"text": "bob's own budget"}))["content"][0]["text"] == "bob's own budget"


@pytest.mark.parametrize("version, era", ERAS)
async def test_two_audit_middlewares_run_in_order(serve: Any, version: str, era: str) -> None:
    server = make_server()
    log: list[str] = []

    def audit(tag: str) -> Any:
        async def mw(request: Request, call_next: Any) -> dict[str, Any]:
            log.append(f"{tag} > {request.method} {request.name} {request.era} {request.principal}")
            try:
                result = await call_next()
            except McpError as e:
                log.append(f"{tag} < {type(e).__name__}")
                raise
            log.append(f"{tag} < ok")
            return result

        return mw

    server.middleware(audit("outer"))
    server.middleware(audit("inner"))
    connect = await serve(server)
    async with connect("bob", version) as bob:
        log.clear()
        await bob.call_tool("echo")
        with pytest.raises(McpError, match="Unknown tool: nope"):
            await bob.call_tool("nope")
    assert log[:4] == [f"outer > tools/call echo {era} bob", f"inner > tools/call echo {era} bob", "inner < ok", "outer < ok"]
    assert log[4:6] == [f"outer > tools/call nope {era} bob", f"inner > tools/call nope {era} bob"]
    assert log[6:8] == ["inner < InvalidParams", "outer < InvalidParams"]


@pytest.mark.parametrize("version, era", ERAS)
async def test_tool_authorization_rejects_with_the_chosen_code(serve: Any, version: str, era: str) -> None:
    server = make_server()

    @server.middleware
    async def authorize(request: Request, call_next: Any) -> dict[str, Any]:
        roles = (request.claims or {}).get("roles", [])
        if request.method == "tools/call" and (request.name or "").startswith("admin_") and "admin" not in roles:
            raise McpError(f"Forbidden: {request.name} needs the admin role", code=-32003)
        return await call_next()

    connect = await serve(server)
    async with connect("alice", version) as alice, connect("bob", version) as bob:
        assert (await alice.call_tool("admin_reset"))["content"][0]["text"] == "reset"
        with pytest.raises(McpError, match="Forbidden: admin_reset needs the admin role") as e:
            await bob.call_tool("admin_reset")
        assert e.value.code == -32003
        assert (await bob.call_tool("echo"))["content"][0]["text"] == "hi"


@pytest.mark.parametrize("version, era", ERAS)
async def test_result_rewrite_and_timing(serve: Any, version: str, era: str) -> None:
    server = make_server()
    timings: list[tuple[str, float]] = []

    @server.middleware
    async def timing(request: Request, call_next: Any) -> dict[str, Any]:
        started = time.monotonic()
        try:
            return await call_next()
        finally:
            timings.append((request.name or request.method, time.monotonic() - started))

    @server.middleware
    async def shout(request: Request, call_next: Any) -> dict[str, Any]:
        result = await call_next()
        if request.method == "tools/call":
            result["content"][0]["text"] = result["content"][0]["text"].upper()
            result.setdefault("_meta", {})["example.com/rewritten"] = True
        return result

    connect = await serve(server)
    async with connect("bob", version) as bob:
        timings.clear()
        r = await bob.call_tool("slow")
    assert r["content"][0]["text"] == "DONE"
    assert r["_meta"]["example.com/rewritten"] is True
    assert [n for n, _ in timings] == ["slow"]
    assert timings[0][1] >= 0.03


@pytest.mark.parametrize("version, era", ERAS)
async def test_what_a_middleware_sees_and_its_bugs(serve: Any, version: str, era: str) -> None:
    server = make_server()
    seen: list[Request] = []

    @server.middleware
    async def spy(request: Request, call_next: Any) -> Any:
        seen.append(request)
        if request.name == "admin_reset":
            raise RuntimeError("a bug in the middleware")
        if request.name == "slow":
            return "not a dict"
        return await call_next()

    connect = await serve(server)
    async with connect("alice", version) as alice:
        await alice.call_tool("echo", {"text": "x"})
        r = seen[-1]
        assert (r.method, r.name, r.principal, r.era, r.scopes) == ("tools/call", "echo", "alice", era, ("mcp",))
        assert r.headers["x-tenant"] == "alice-corp" and r.claims == {"tenant": "acme", "roles": ["admin"]}
        assert r.params["arguments"] == {"text": "x"}
        assert (r.session_id is not None) == (era == "legacy")
        with pytest.raises(InternalError, match="a bug in the middleware"):
            await alice.call_tool("admin_reset")
        with pytest.raises(InternalError, match="returned str; it must return the result dict"):
            await alice.call_tool("slow")
        assert (await alice.call_tool("echo"))["content"][0]["text"] == "hi", "the server goes on"


def test_a_middleware_must_be_async() -> None:
    server = Server("s")
    with pytest.raises(UsageError, match="must be an async def mw"):
        server.middleware(lambda request, call_next: None)  # type: ignore[arg-type,return-value]


def test_token_info_claims() -> None:
    assert TokenInfo(subject="a").claims == {}
    assert TokenInfo(subject="a", claims={"k": [1]}).claims == {"k": [1]}
    with pytest.raises(UsageError, match="claims: invalid type"):
        TokenInfo(subject="a", claims=["admin"])  # type: ignore[arg-type]


# Visibility per principal -------------------------------------------------------------------


def admin_only(item: Any, request: Request) -> bool:
    admin = "admin" in (request.claims or {}).get("roles", [])
    return admin or not item.name.startswith("admin_")


@pytest.mark.parametrize("version, era", ERAS)
async def test_visibility_filters_lists_and_hides_calls(serve: Any, version: str, era: str) -> None:
    server = make_server()
    asked: list[tuple[str, list[str]]] = []

    @server.visibility
    async def visible(item: Any, request: Request) -> bool:
        asked.append((request.method, item.kind))
        return admin_only(item, request)

    connect = await serve(server)
    async with connect("alice", version) as alice, connect("bob", version) as bob:
        assert sorted(t["name"] for t in await bob.list_tools()) == ["echo", "slow", "whoami"]
        assert sorted(t["name"] for t in await alice.list_tools()) == ["admin_reset", "echo", "slow", "whoami"]
        with pytest.raises(McpError, match="Unknown tool: admin_reset") as hidden:
            await bob.call_tool("admin_reset")
        with pytest.raises(McpError, match="Unknown tool: admin_nothing") as unknown:
            await bob.call_tool("admin_nothing")
        assert (hidden.value.code, type(hidden.value)) == (unknown.value.code, type(unknown.value))
        assert (await alice.call_tool("admin_reset"))["content"][0]["text"] == "reset"
        assert ("tools/call", "tool") in asked
        # Removed, everything is visible again.
        server.visibility(None)
        assert (await bob.call_tool("admin_reset"))["content"][0]["text"] == "reset"


async def test_a_plain_predicate_and_its_bugs(serve: Any) -> None:
    server = make_server()

    @server.visibility
    def visible(item: Any, request: Request) -> bool:
        if item.name == "slow":
            raise RuntimeError("a bug in the predicate")
        return admin_only(item, request)

    connect = await serve(server)
    async with connect("bob", "2026-07-28") as bob:
        with pytest.raises(McpError, match="Unknown tool: admin_reset"):
            await bob.call_tool("admin_reset")
        with pytest.raises(InternalError, match="a bug in the predicate"):
            await bob.call_tool("slow")
        assert (await bob.call_tool("echo"))["content"][0]["text"] == "hi"

"""Every server-side option of the core reaches Python by its snake_case name: each area of
the core's examples (a valid value for every option the core knows, ``options_examples()``)
goes through the Python API that takes it. An option added in the core is in its examples (the
core checks that), so these fail when Python does not take it."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from pathlib import Path

from mcpaxle import BearerAuth, Client, ConnectionLimits, Cors, OAuth, Server, _native, telemetry
from mcpaxle.errors import UsageError

SCHEMA: dict[str, list[str]] = json.loads(_native.options_schema())
EXAMPLES: dict[str, dict[str, Any]] = json.loads(_native.options_examples())
# Objects whose keys are data (header, variable or tool names), not option names.
DATA_KEYS = {"toolScopes", "headers", "env", "meta", "clientInfo", "capabilities"}
covered: set[str] = set()


def snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)


def python(area: str) -> dict[str, Any]:
    """The example of ``area`` by its Python names (nested option objects too)."""
    covered.add(area)

    def convert(v: Any, key: str = "") -> Any:
        if isinstance(v, dict) and key not in DATA_KEYS:
            return {snake(k): convert(x, k) for k, x in v.items()}
        return v

    return convert(EXAMPLES[area])


def test_the_schema_names_every_example() -> None:
    assert sorted(SCHEMA) == sorted(EXAMPLES)
    for area, names in SCHEMA.items():
        assert sorted(EXAMPLES[area]) == sorted(names), area


async def test_every_server_option_is_taken_by_its_python_name() -> None:
    server = Server("opts", **python("server"))
    Server("opts", legacy=python("legacy"), cache=python("cache"))
    server.tool(**python("tool"))(lambda: "ok")
    server.resource("test://r", cache=python("cacheHint"))(lambda: "r")
    server.resource("test://t/{id}", **python("template"))(lambda id: id)
    # The example sets jwt and introspection: the built-in verifiers, no verify callback.
    auth = BearerAuth(**python("bearerAuth"))
    built_in = BearerAuth(
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        jwt=python("jwt"),
        introspection=python("introspection"),
    )
    running = await server.start_http("127.0.0.1", 0, auth=built_in)
    await running.stop()
    running = await server.start_http("127.0.0.1", 0, **{**python("http"), "auth": auth})
    await running.stop()
    running = await server.start_http("127.0.0.1", 0, connections=ConnectionLimits(**python("connections")))
    await running.stop()
    running = await server.start_http("127.0.0.1", 0, cors=Cors(**python("cors")))
    await running.stop()


# The client options that only one transport takes.
HTTP_ONLY = {"headers", "oauth", "legacy_get_stream"}
STDIO_ONLY = {"env", "inherit_env", "cwd", "stderr", "probe_timeout_ms", "shutdown_timeout_ms"}


async def test_every_client_option_is_taken_by_its_python_name() -> None:
    client = python("client")
    assert {"headers", "oauth", "legacy_get_stream", "env", "stderr"} <= set(client)
    server = Server("opts")
    server.tool()(lambda: "ok")
    running = await server.start_http("127.0.0.1", 0)
    try:
        http = {k: v for k, v in client.items() if k not in STDIO_ONLY}
        http["oauth"] = OAuth(**python("oauth"))
        async with Client.connect_http(running.url or "", **http) as c:
            assert c.era == "modern"
    finally:
        await running.stop()
    stdio = {k: v for k, v in client.items() if k not in HTTP_ONLY}
    server_script = Path(__file__).parent / "servers" / "stdio_server.py"
    async with Client.connect_stdio([sys.executable, str(server_script)], **stdio) as c:
        assert (await c.call_tool("noisy"))["content"][0]["text"] == "quiet"


async def test_every_call_option_is_taken_by_its_python_name() -> None:
    call = python("call")
    server = Server("opts")
    server.tool("t")(lambda: "ok")
    server.resource("test://r")(lambda: "r")
    server.prompt("p")(lambda: "p")
    running = await server.start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "") as c:
            assert (await c.call_tool("t", **call))["content"][0]["text"] == "ok"
            assert (await c.request("tools/call", {"name": "t"}, **call))["content"][0]["text"] == "ok"
            assert (await c.read_resource("test://r", **call))["contents"][0]["text"] == "r"
            assert (await c.get_prompt("p", **call))["messages"]
    finally:
        await running.stop()


def test_every_stdio_option_is_taken_by_its_python_name() -> None:
    options = python("stdio")
    script = f"from mcpaxle import Server\nServer('opts').run('stdio', **{options!r})\nprint('served', flush=True)"
    r = subprocess.run([sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "served" in r.stdout


def test_every_telemetry_option_is_taken_by_its_python_name() -> None:
    telemetry.configure(**python("telemetry"))
    try:
        assert telemetry.is_enabled()
        assert telemetry.prometheus_text() is not None
    finally:
        telemetry.shutdown()
    assert not telemetry.is_enabled()


def test_durations_take_a_timedelta_and_unknown_names_are_refused() -> None:
    Server("opts", handler_timeout_ms=datetime.timedelta(seconds=2), legacy={"idle_timeout_ms": datetime.timedelta(minutes=1)})
    with pytest.raises(UsageError, match=r"legacy\.max_sesions: unknown field `max_sesions`, expected one of `enabled`"):
        Server("opts", legacy={"max_sesions": 1})
    with pytest.raises(UsageError, match="at least 1 millisecond"):
        Server("opts", state_ttl_ms=0)


def test_every_area_of_the_core_is_covered() -> None:
    assert covered == set(EXAMPLES)

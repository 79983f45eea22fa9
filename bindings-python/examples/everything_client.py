#!/usr/bin/env python3
"""The "everything" client: what the official MCP conformance suite's client scenarios ask of
a client, in one program (the Python twin of core/examples/everything_client.rs).

    MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 \\
        python bindings-python/examples/everything_client.py http://localhost:3000/mcp

The server URL is the last argument. ``MCP_CONFORMANCE_PROTOCOL_VERSION`` picks the wire
(2026-07-28: per-request ``_meta``; 2025-11-25 and earlier: the ``initialize`` session);
``MCP_CONFORMANCE_CONTEXT`` carries a scenario's test data (``toolCalls``, pre-registered
client credentials); with ``MCPAXLE_AUTO_ERA=1`` the client detects the era itself. Exits at
once on SIGTERM or Ctrl-C.

OAuth is on for every scenario (it only acts on a ``401``). The suite's authorization servers
approve at once, so the ``authorize`` callback is a plain GET of the authorization URL whose
redirect is read, not followed: a Python callback on purpose, where the Rust twin lets the
core do the same (``OAuthOptions::without_user``), so that the host-callback path is what
the suite scores. The client offers a Client ID Metadata Document URL and uses the
pre-registered credentials the scenario's context carries.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import urllib.error
import urllib.request
from typing import Any

from mcpaxle import Client, OAuth, __version__
from mcpaxle._native import protocol_versions


def sample_value(name: str, schema: Any) -> Any:
    """A plausible value for a property of a JSON Schema, by its declared type."""
    if not isinstance(schema, dict):
        schema = {}
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    ty = schema.get("type")
    if isinstance(ty, list):
        ty = ty[0] if ty else None
    values: dict[str, Any] = {"integer": 1, "number": 1.5, "boolean": True, "object": {}, "array": [], "null": None}
    if ty in values:
        return values[ty]
    return "us-east1" if "region" in name else "test"


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Every required property of a tool's input schema, with a plausible value."""
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    return {name: sample_value(name, props.get(name)) for name in schema.get("required") or []}


def apply_defaults(schema: dict[str, Any], content: dict[str, Any]) -> None:
    """SEP-1034: every property with a default gets it."""
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "default" in prop and name not in content:
            content[name] = prop["default"]


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("mode") == "url":
        return {"action": "accept"}
    schema = params.get("requestedSchema") or {}
    content: dict[str, Any] = {}
    apply_defaults(schema, content)
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in content:
            content[name] = sample_value(name, props.get(name))
    return {"action": "accept", "content": content}


def sample(_params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a sampled answer from the everything client."},
        "model": "mcpaxle-everything-client",
        "stopReason": "endTurn",
    }


def roots(_params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///tmp/mcpaxle-conformance", "name": "conformance"}]}


#: Where the suite's authorization servers send the user-agent back (never listened on: the
#: redirect is read, not followed).
REDIRECT_URI = "http://localhost:3000/callback"
#: The Client ID Metadata Document URL the suite expects (never fetched).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hands a redirect back as the response instead of following it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def redirect_of(authorization_url: str) -> str:
    """GETs the authorization URL and returns where the authorization server redirects."""
    try:
        response = _opener.open(authorization_url, timeout=20)
        status = response.status
    except urllib.error.HTTPError as e:  # a redirect not followed arrives as an HTTPError
        response, status = e, e.code
    with response:
        location = response.headers.get("Location")
        if 300 <= status < 400 and location:
            return location
        body = response.read(200).decode("utf-8", "replace")
        raise RuntimeError(f"the authorization server answered {status} and no redirect: it needs a user ({body})")


async def authorize(authorization_url: str) -> str:
    print(f"authorizing at {authorization_url}", file=sys.stderr)
    return await asyncio.to_thread(redirect_of, authorization_url)


def oauth(scenario: str, context: Any) -> OAuth:
    pre = context if isinstance(context, dict) and isinstance(context.get("client_id"), str) else {}
    if scenario.startswith("auth/client-credentials"):
        # A machine client: its secret, or its private key for private_key_jwt.
        return OAuth(
            grant_type="client_credentials",
            client_id=pre.get("client_id"),
            client_secret=pre.get("client_secret"),
            private_key_pem=pre.get("private_key_pem"),
            signing_algorithm=pre.get("signing_algorithm"),
        )
    return OAuth(
        redirect_uri=REDIRECT_URI,
        authorize=authorize,
        client_metadata_url=CLIENT_METADATA_URL,
        client_id=pre.get("client_id"),
        client_secret=pre.get("client_secret"),
        issuer=pre.get("issuer"),
    )


def find(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for t in tools:
        if t["name"] == name:
            return t
    raise LookupError(f"the server lists no tool {name}")


async def call_each(client: Client, tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        r = await client.call_tool(tool["name"], sample_arguments(tool))
        print(f"called {tool['name']}: isError={r.get('isError')}", file=sys.stderr)


async def run(url: str, scenario: str, version: str, context: Any) -> None:
    versions = None if os.environ.get("MCPAXLE_AUTO_ERA") else [version]
    async with Client.connect_http(
        url, request_timeout_ms=25_000, on_elicitation=elicit, on_sampling=sample, on_roots=roots, protocol_versions=versions,
        client_info={"name": "mcpaxle-everything-client", "version": __version__}, oauth=oauth(scenario, context),
    ) as client:
        print(f"connected: era {client.era}, protocol version {client.protocol_version}", file=sys.stderr)
        tools = await client.list_tools()
        print(f"tools: {[t['name'] for t in tools]}", file=sys.stderr)
        if scenario in ("initialize", "request-metadata", "json-schema-ref-no-deref"):
            pass
        elif scenario == "tools_call":
            r = await client.call_tool("add_numbers", {"a": 5, "b": 3})
            print(f"add_numbers: {r.get('content')}", file=sys.stderr)
        elif scenario == "sep-2322-client-request-state":
            names = ["test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"]
            results = await asyncio.gather(*(client.call_tool(n, {}) for n in names))
            for n, r in zip(names, results):
                print(f"{n}: {r.get('content')}", file=sys.stderr)
        elif scenario == "http-standard-headers":
            await call_each(client, tools)
            for r in await client.list_resources():
                await client.read_resource(r["uri"])
            for p in await client.list_prompts():
                await client.get_prompt(p["name"])
        elif scenario == "http-custom-headers":
            calls = context.get("toolCalls") if isinstance(context, dict) else None
            for call in calls or []:
                await client.call_tool(call.get("name", ""), call.get("arguments") or {})
        elif scenario == "json-schema-2020-12-preservation":
            focal = find(tools, "json_schema_2020_12_tool")
            r = await client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})
            print(f"json_schema_echo: {r.get('content')}", file=sys.stderr)
        elif scenario == "elicitation-sep1034-client-defaults":
            find(tools, "test_client_elicitation_defaults")
            r = await client.call_tool("test_client_elicitation_defaults", {})
            print(f"test_client_elicitation_defaults: {r.get('content')}", file=sys.stderr)
        elif scenario == "sse-retry":
            r = await client.call_tool("test_reconnection", {})
            print(f"test_reconnection: {r.get('content')}", file=sys.stderr)
        else:
            # http-invalid-tool-headers and anything else: every listed tool (the invalid ones
            # were dropped by list_tools).
            await call_each(client, tools)


async def main() -> int:
    if len(sys.argv) < 2:
        print("usage: everything_client.py SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", protocol_versions()[0])
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "null"))
    except ValueError:
        context = None
    print(f"everything_client: scenario {scenario!r}, protocol {version}, server {url}", file=sys.stderr)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # Exit at once: nothing of this program needs an orderly shutdown.
        loop.add_signal_handler(sig, os._exit, 143)
    try:
        await run(url, scenario, version, context)
    except Exception as e:  # noqa: BLE001
        print(f"everything_client: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = asyncio.run(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

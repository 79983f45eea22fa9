#!/usr/bin/env python3
"""A typed MCP client: what a server offers, and one tool call, written against the protocol's
types (:mod:`mcpaxle.types`, generated from the schema). ``mypy --strict`` checks this file
(scripts/test.sh), so what the client returns is checked the way user code would use it.

    python typed_client.py -- python notes_server.py --stdio
    python typed_client.py --call add_note '{"title": "Milk", "body": "2 l"}' -- python notes_server.py --stdio

Results are the plain dicts the server sent; their types tell a type checker which keys there
are. An object the schema leaves open (a tool's ``inputSchema``, ``_meta``) is read through
``Mapping[str, Any]`` for the members it does not name.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from mcpaxle import Client
from mcpaxle.types import CallToolResult, ContentBlock, Implementation, Tool


def describe(block: ContentBlock) -> str:
    """One content block as a line of text (the union is narrowed by ``type``)."""
    if block["type"] == "text":
        return block["text"]
    if block["type"] == "image" or block["type"] == "audio":
        return f"<{block['type']} {block['mimeType']}, {len(block['data'])} base64 characters>"
    if block["type"] == "resource_link":
        return f"<link {block['uri']}>"
    return f"<resource {block['resource']['uri']}>"


def signature(tool: Tool) -> str:
    """``name(required, optional?)`` from the tool's input schema."""
    schema: Mapping[str, Any] = tool["inputSchema"]
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    return f"{tool['name']}({', '.join(p if p in required else p + '?' for p in properties)})"


async def main(command: Sequence[str], call: tuple[str, dict[str, Any]] | None) -> int:
    async with Client.connect_stdio(command) as client:
        info: Implementation | None = client.server_info
        print(f"server {info['name'] if info else '?'} {info['version'] if info else ''} ({client.era}, {client.protocol_version})")
        for tool in await client.list_tools():
            print(f"tool {signature(tool)}")
        for resource in await client.list_resources():
            print(f"resource {resource['uri']} {resource.get('mimeType', '')}".rstrip())
        for template in await client.list_resource_templates():
            print(f"template {template['uriTemplate']}")
        for prompt in await client.list_prompts():
            print(f"prompt {prompt['name']}({', '.join(a['name'] for a in prompt.get('arguments', []))})")
        if call is None:
            return 0
        name, arguments = call
        result: CallToolResult = await client.call_tool(name, arguments)
        for block in result["content"]:
            print(describe(block))
        return 1 if result.get("isError") else 0


def parse(argv: list[str]) -> tuple[list[str], tuple[str, dict[str, Any]] | None]:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        raise SystemExit("usage: typed_client.py [--call TOOL JSON_ARGUMENTS] -- COMMAND [ARGS...]")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    if not options:
        return command, None
    if len(options) != 3 or options[0] != "--call":
        raise SystemExit("usage: typed_client.py [--call TOOL JSON_ARGUMENTS] -- COMMAND [ARGS...]")
    arguments = json.loads(options[2])
    if not isinstance(arguments, dict):
        raise SystemExit("the tool's arguments must be a JSON object")
    return command, (options[1], arguments)


if __name__ == "__main__":
    command, call = parse(sys.argv[1:])
    sys.exit(asyncio.run(main(command, call)))

"""Shorthand return values, shaped by the core's one rule: every case of the table shared with
the core, Node and C (tests/shaping_cases.json) served by a Python handler and read back."""

from __future__ import annotations

import base64
import json
import pathlib
from typing import Any, TypedDict

from conftest import threaded
from mcpclient import Http

from mcpaxle import Server

CASES = json.loads((pathlib.Path(__file__).parents[2] / "tests" / "shaping_cases.json").read_text())["cases"]


def host(tagged: dict[str, Any]) -> Any:
    """A case's value as a Python handler returns it (bytes as ``bytes``)."""
    if "json" in tagged:
        return tagged["json"]
    if "bytes" in tagged:
        return base64.b64decode(tagged["bytes"])
    if "list" in tagged:
        return [host(x) for x in tagged["list"]]
    return {k: host(v) for k, v in tagged["object"].items()}


def bare(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("resultType", "_meta", "ttlMs", "cacheScope")}


class City(TypedDict):
    city: str


def register(server: Server, case: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Registers a handler returning the case's value; the request that reads it back."""
    value = host(case["returned"])

    def handler(**_: Any) -> Any:
        return value

    kind = case["kind"]
    if kind == "tool":
        schema = case.get("outputSchema")
        if schema is None:
            server.add_tool(handler, "t", structured_output=False)
        else:
            # The output schema comes from the return annotation, as a Python user writes it.
            handler.__annotations__["return"] = int if "result" in schema["properties"] else City
            defined = server.add_tool(handler, "t")
            assert defined["outputSchema"]["required"] == schema["required"]
        return "tools/call", {"name": "t"}
    if kind == "resource":
        server.add_resource(handler, case["uri"], name="r", mime_type=case.get("mimeType"))
        return "resources/read", {"uri": case["uri"]}
    if kind == "prompt":
        server.add_prompt(handler, "p")
        return "prompts/get", {"name": "p"}

    def prompt(a: str = "") -> str:
        return a

    server.add_prompt(prompt, "p")

    def complete(argument: str, value_: str) -> Any:
        return value

    server.set_completion(complete, prompt="p")
    return "completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}


async def test_every_shared_case_gives_the_same_result_as_in_the_core() -> None:
    assert len(CASES) >= 20
    for case in CASES:
        server = Server("shaping")
        method, params = register(server, case)
        running = await server.start_http("127.0.0.1", 0)
        try:
            reply = await threaded(Http(running.url or "").call)(method, params)
            assert bare(reply.result) == case["expected"], case["name"]
        finally:
            await running.stop()

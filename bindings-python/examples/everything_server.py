"""The "everything" server in Python: every fixture the official MCP conformance suite
exercises, with handlers in Python (the port of core/examples/everything_server.rs).

    python everything_server.py --http 127.0.0.1:3000     # endpoint /mcp
    python everything_server.py --asgi 127.0.0.1:3000     # the same through server.asgi_app() under uvicorn
    python everything_server.py --stdio
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

from mcpaxle import Audio, Context, EmbeddedResource, Image, Message, ResourceContents, Server, ToolError, user
from mcpaxle.errors import InvalidParams, MissingCapability

#: A 1x1 red PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
#: A minimal WAV file (44-byte header, 8 silent samples).
WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

server = Server(
    "mcpaxle-everything-server",
    version="0.1.0",
    title="mcpaxle everything server (Python)",
    instructions="A server with every fixture of the MCP conformance suite.",
    enable=["logging"],
)


def compact(v: object) -> str:
    return json.dumps(v, separators=(",", ":"))


# Content --------------------------------------------------------------------------------------


@server.tool()
def test_simple_text() -> str:
    """Returns a simple text response"""
    return "This is a simple text response for testing."


@server.tool()
async def test_image_content() -> Image:
    """Returns an image"""
    return Image(base64=PNG, mime_type="image/png")


@server.tool()
async def test_audio_content() -> Audio:
    """Returns audio"""
    return Audio(base64=WAV, mime_type="audio/wav")


@server.tool()
async def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded resource"""
    return EmbeddedResource("test://embedded-resource", "This is an embedded resource content.", mime_type="text/plain")


@server.tool()
async def test_multiple_content_types() -> list:
    """Returns text, image and a resource"""
    return [
        "Multiple content types test:",
        Image(base64=PNG, mime_type="image/png"),
        EmbeddedResource("test://mixed-content-resource", '{"test":"data","value":123}', mime_type="application/json"),
    ]


@server.tool()
async def test_error_handling() -> str:
    """Always fails with a tool error"""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100"""
    for p in (0, 50, 100):
        await ctx.progress(p, 100, f"Completed step {p / 50}")
        await asyncio.sleep(0.02)
    return "Progress tool completed"


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes the response stream mid-call; the result comes after the client reconnects"""
    # SEP-1699 polling: a legacy client resumes with Last-Event-ID and gets the result.
    ctx.close_stream(0.5)
    await asyncio.sleep(0.1)
    return "Reconnection test completed"


async def logging_tool(ctx: Context) -> str:
    """Logs three messages at info level (only when the request sets a log level)"""
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.info(step, logger="everything_server")
        await asyncio.sleep(0.01)
    return "Logging tool completed"


server.add_tool(logging_tool, "test_logging_tool")
server.add_tool(logging_tool, "test_tool_with_logging")

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def json_schema_2020_12_tool(**args: object) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return f"ok: {compact(args)}"


server.add_tool(json_schema_2020_12_tool, input_schema=JSON_SCHEMA_2020_12)


def test_custom_header(region: str, query: str | None = None) -> str:
    """Mirrors its region argument into the Mcp-Param-Region header"""
    return f"region={region}"


server.add_tool(
    test_custom_header,
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
            "query": {"type": "string"},
        },
        "required": ["region"],
    },
)


# Changes at run time --------------------------------------------------------------------------


def dynamic_tool() -> str:
    """Added at run time"""
    return "dynamic"


def dynamic_prompt() -> str:
    """Added at run time"""
    return "dynamic"


@server.tool()
async def test_trigger_tool_change() -> str:
    """Adds or removes a tool, firing tools/list_changed"""
    if not server.remove_tool("test_dynamic_tool"):
        server.add_tool(dynamic_tool, "test_dynamic_tool")
    return "Tool list changed"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt, firing prompts/list_changed"""
    if not server.remove_prompt("test_dynamic_prompt"):
        server.add_prompt(dynamic_prompt, "test_dynamic_prompt")
    return "Prompt list changed"


@server.tool()
async def test_trigger_resource_update() -> str:
    """Announces an update of test://watched-resource"""
    server.notify_resource_updated("test://watched-resource")
    return "Resource updated"


# Multi Round-Trip Requests --------------------------------------------------------------------


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability"""
    answer = await ctx.sample("Summarize: MCP", max_tokens=100, key="summary")
    return f"Sampled: {answer.text}"


async def ask_name(ctx: Context) -> str:
    """Asks for the user's name (MRTR elicitation)"""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"


for _name in ("test_streaming_elicitation", "test_input_required_result_elicitation", "test_input_required_result_tampered_state"):
    server.add_tool(ask_name, _name)


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client to sample an LLM (MRTR)"""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_of_france")
    return f"The model said: {answer.text}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots (MRTR)"""
    roots = await ctx.list_roots(key="roots")
    return f"The client has {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """MRTR with request state"""
    if ctx.request_state is None:
        ctx.set_request_state({"started": True})
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    name = (answer.content or {}).get("name", "stranger")
    return f"Hello, {name} (state {compact(ctx.request_state)})"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for elicitation, sampling and roots in one round"""
    name, _sample, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
        ctx.sample("Write a greeting", max_tokens=100, key="greeting"),
        ctx.list_roots(key="roots"),
    )
    return f"Hello, {(name.content or {}).get('name', 'stranger')}; {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Three rounds: two asks, then the result"""
    first = await ctx.elicit("Round 1: what is your name?", NAME_FORM, key="step_1")
    second = await ctx.elicit("Round 2: what is your name again?", NAME_FORM, key="step_2")
    return f"Rounds done: {(first.content or {}).get('name', 'stranger')} and {(second.content or {}).get('name', 'stranger')}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the client supports"""
    if ctx.client_supports("elicitation"):
        a = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(a.content or {}).get('name', 'stranger')}!"
    if ctx.client_supports("sampling"):
        await ctx.sample("Say hello", max_tokens=100, key="fallback")
        return "Sampled a greeting"
    if ctx.client_supports("roots"):
        await ctx.list_roots(key="roots")
        return "Listed roots"
    raise MissingCapability.requires("elicitation")


# Fixtures of the tasks-* scenarios (the Tasks extension, SEP-2663): plain handlers that run as
# tasks for a client that declares the extension; their asks become the task's input requests.


@server.tool()
def greet(name: str = "World") -> str:
    """Greets by name (never a task)"""
    return f"Hello, {name}!"


@server.tool(task_support="optional")
async def slow_compute(seconds: float = 1.0, label: str = "result") -> str:
    """Sleeps `seconds` seconds, then answers (a task when the client can)"""
    await asyncio.sleep(min(max(seconds, 0.0), 3600.0))
    return f"Computed {label} after {seconds} s"


@server.tool(task_support="required")
async def failing_job() -> str:
    """Fails with a tool error after a second (only as a task)"""
    await asyncio.sleep(1)
    raise ToolError("The job failed: the input could not be processed")


@server.tool(task_support="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error: the task fails"""
    await asyncio.sleep(0.1)
    # A protocol error, not a tool error (which, like any other exception, is an isError result).
    raise InvalidParams("protocol_error_job: a deliberate protocol error, reported as a failed task")


CONFIRM_FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


@server.tool(task_support="optional")
async def confirm_delete(ctx: Context, filename: str = "the file") -> str:
    """Asks the user to confirm, then deletes (pretends to)"""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_FORM, key="confirm")
    yes = answer.accepted and (answer.content or {}).get("confirm") is not False
    return f"Deleted {filename}" if yes else f"Kept {filename}"


@server.tool(task_support="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once"""
    first, second = await asyncio.gather(
        ctx.elicit("First name?", NAME_FORM, key="first"), ctx.elicit("Second?", NAME_FORM, key="second")
    )
    return f"Got {(first.content or {}).get('name')} and {(second.content or {}).get('name')}"


@server.tool(task_support="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Asks for a name (MRTR), then greets as a task"""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"


# Fixtures of the 2025-11-25 suite: under a legacy session these asks are real requests to the
# client; under 2026-07-28 the same code is an MRTR round.


@server.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM to answer a prompt"""
    answer = await ctx.sample(prompt, max_tokens=100, key="sampling")
    return f"LLM response: {answer.text}"


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and email"""
    form = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, form, key="elicitation")
    return f"User response: action={answer.action}, content={compact(answer.content)}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation with defaults for every primitive type"""
    form = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", form, key="defaults")
    return f"Elicitation completed: action={answer.action}, content={compact(answer.content)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with the five enum schema variants"""
    form = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "description": "Titled single-select",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy titled enum",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    answer = await ctx.elicit("Please select options from the enum fields", form, key="enums")
    return f"Elicitation completed: action={answer.action}, content={compact(answer.content)}"


# Prompts --------------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"],
    arg2: Annotated[str, "Second test argument"],
) -> str:
    """A prompt with two arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.completion(prompt="test_prompt_with_arguments")
def complete_arguments(argument: str, value: str) -> list[str]:
    options = ["test", "testing", "tested", "value", "paris", "park"]
    return [o for o in options if o.startswith(value)]


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: Annotated[str, "URI of the resource"]) -> list[Message]:  # noqa: N803
    """A prompt with an embedded resource"""
    return [
        user(EmbeddedResource(resourceUri, "Embedded resource content for testing.", mime_type="text/plain")),
        user("Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[Message]:
    """A prompt with an image"""
    return [user(Image(base64=PNG, mime_type="image/png")), user("Please analyze the image above.")]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """Asks for the user's name first (MRTR)"""
    answer = await ctx.elicit("Who is this prompt for?", NAME_FORM, key="user_name")
    return f"Write a short poem for {(answer.content or {}).get('name', 'stranger')}."


# Resources ------------------------------------------------------------------------------------


@server.resource("test://static-text", name="Static text resource", mime_type="text/plain", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="Static binary resource", mime_type="image/png", description="A static binary resource")
def static_binary() -> ResourceContents:
    import base64

    return ResourceContents(base64.b64decode(PNG), mime_type="image/png")


@server.resource(
    "test://watched-resource",
    name="Watched resource",
    mime_type="text/plain",
    description="Subscribe to it, then call test_trigger_resource_update",
)
def watched() -> str:
    return "Watched resource content"


@server.resource("test://template/{id}/data", name="Template resource", mime_type="application/json", description="Data for an id")
def template_data(id: str) -> str:  # noqa: A002 - the template's variable
    return compact({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


def main(argv: list[str]) -> None:
    if argv == ["--stdio"]:
        server.run("stdio")
    elif len(argv) == 2 and argv[0] == "--http":
        host, _, port = argv[1].rpartition(":")
        print(f"everything_server: listening on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        server.run("http", host=host, port=int(port))
    elif len(argv) == 2 and argv[0] == "--asgi":
        import uvicorn

        host, _, port = argv[1].rpartition(":")
        print(f"everything_server: listening on http://{host}:{port}/mcp (ASGI, uvicorn)", file=sys.stderr, flush=True)
        # The endpoint answers every path it is given, /mcp included; 1 s for listen streams
        # to end at shutdown, as the built-in server's drain.
        uvicorn.run(server.asgi_app(), host=host, port=int(port), log_level="warning", timeout_graceful_shutdown=1)
    else:
        print("usage: everything_server.py --http HOST:PORT | --asgi HOST:PORT | --stdio", file=sys.stderr)
        raise SystemExit(2)


if __name__ == "__main__":
    main(sys.argv[1:])

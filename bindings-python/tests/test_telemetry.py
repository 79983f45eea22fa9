"""Traces and metrics (``mcpaxle.telemetry``) end to end, over real HTTP on 127.0.0.1: the core
exports its spans and metrics to the test collector (``tests/otel/collector.py``), and so does
the application's own OpenTelemetry SDK (service ``py-app``). One call made inside an
application span is one trace: the application's ``agent-turn`` span, the core's client span,
its server span with the MCP semantic conventions' attributes, and the span the handler's code
starts (an ``async def`` on the loop and a plain ``def`` on the thread pool alike); a legacy
session's span names its session; an error is recorded with its JSON-RPC code; the duration
metrics count a known load, exported over OTLP and scraped in Prometheus's format; and the
``OTEL_*`` environment turns telemetry on as the runtime starts (a process of its own).

Telemetry is process-wide: configured once for this module and shut down at its end."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from opentelemetry import baggage, context, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from mcpaxle import Client, Server, telemetry
from mcpaxle.errors import InvalidParams, McpError, UsageError

ROOT = Path(__file__).resolve().parents[2]
JsonList = list[dict[str, Any]]


class Otel:
    """The collector's URL and the application's tracer (its own SDK, exporting there too)."""

    def __init__(self, url: str, tracer: trace.Tracer) -> None:
        self.url = url
        self.tracer = tracer

    def get(self, path: str) -> JsonList:
        with urllib.request.urlopen(self.url + path, timeout=5) as r:
            held: JsonList = json.load(r)
            return held

    async def eventually(self, path: str, what: str, pick: Callable[[JsonList], Any], timeout: float = 20) -> Any:
        """Flushes the core's telemetry, then polls the collector's ``path`` until ``pick``
        finds what the test waits for (a truthy value)."""
        await asyncio.to_thread(telemetry.flush)
        deadline = time.monotonic() + timeout
        while True:
            held = await asyncio.to_thread(self.get, path)
            found = pick(held)
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"the collector has no {what} after {timeout} s; it holds {str(held)[-3000:]}")
            await asyncio.sleep(0.1)

    async def spans_of(self, trace_id: str, count: int) -> JsonList:
        """The spans of a trace, once there are ``count`` of them."""
        spans: JsonList = await self.eventually(
            "/spans",
            f"{count} spans in trace {trace_id}",
            lambda held: (got := [s for s in held if s["traceId"] == trace_id]) and len(got) >= count and got,
        )
        return spans


def start_collector() -> tuple[subprocess.Popen[str], str]:
    """The test collector in its own venv (made by tests/otel/setup.sh), and its URL."""
    setup = subprocess.run(["bash", str(ROOT / "tests/otel/setup.sh")], capture_output=True, text=True, timeout=600)
    assert setup.returncode == 0, f"tests/otel/setup.sh failed:\n{setup.stderr}"
    python = setup.stdout.strip().splitlines()[-1]
    proc = subprocess.Popen(
        [python, str(ROOT / "tests/otel/collector.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise AssertionError(f"the test collector did not start: {line!r}\n{proc.stderr.read()}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


@pytest.fixture(scope="module")
def otel() -> Iterator[Otel]:
    proc, url = start_collector()
    provider = TracerProvider(resource=Resource.create({"service.name": "py-app"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    try:
        telemetry.configure(endpoint=url, service_name="mcpaxle-py", metrics_interval_ms=500, prometheus=True)
        assert telemetry.is_enabled()
        yield Otel(url, provider.get_tracer("test_telemetry"))
    finally:
        telemetry.shutdown()
        provider.shutdown()
        proc.kill()
        proc.wait()


def hex_id(n: int, width: int) -> str:
    return format(n, f"0{width}x")


def one(spans: JsonList, name: str, kind: str | None = None) -> dict[str, Any]:
    [span] = [s for s in spans if s["name"] == name and (kind is None or s["kind"] == kind)]
    return span


def traced_server(otel: Otel, sync: bool) -> Server:
    """A server whose tool ``lookup`` starts a ``db.query`` span and answers with the caller's
    ``user`` baggage."""
    server = Server("traced")

    def query(key: str) -> str:
        with otel.tracer.start_as_current_span("db.query", attributes={"db.key": key}):
            return f"{key} for {baggage.get_baggage('user')}"

    if sync:

        @server.tool()
        def lookup(key: str) -> str:
            return query(key)

    else:

        @server.tool()
        async def lookup(key: str) -> str:
            await asyncio.sleep(0)
            return query(key)

    return server


@pytest.mark.parametrize("sync", [False, True], ids=["async_def", "def"])
async def test_one_call_is_one_trace_from_the_agent_to_the_database(otel: Otel, sync: bool) -> None:
    running = await traced_server(otel, sync).start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "") as client:
            token = context.attach(baggage.set_baggage("user", "ada"))
            try:
                with otel.tracer.start_as_current_span("agent-turn") as turn:
                    result = await client.call_tool("lookup", {"key": "k1"})
            finally:
                context.detach(token)
    finally:
        await running.stop()
    assert result["content"][0]["text"] == "k1 for ada", "the caller's baggage reaches the handler"

    spans = await otel.spans_of(hex_id(turn.get_span_context().trace_id, 32), 4)
    assert sorted(s["name"] for s in spans) == ["agent-turn", "db.query", "tools/call lookup", "tools/call lookup"]
    agent = one(spans, "agent-turn")
    sent = one(spans, "tools/call lookup", "client")
    served = one(spans, "tools/call lookup", "server")
    query = one(spans, "db.query")
    assert agent["parentSpanId"] == "" and agent["service"] == "py-app"
    assert sent["parentSpanId"] == agent["spanId"] and sent["service"] == "mcpaxle-py"
    assert served["parentSpanId"] == sent["spanId"] and served["service"] == "mcpaxle-py"
    assert query["parentSpanId"] == served["spanId"] and query["service"] == "py-app"
    assert query["attributes"]["db.key"] == "k1"
    a = served["attributes"]
    assert a["mcp.method.name"] == "tools/call"
    assert a["gen_ai.tool.name"] == "lookup"
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["mcp.protocol.version"] == "2026-07-28"
    assert a["network.transport"] == "tcp"
    assert a["jsonrpc.request.id"]
    assert "mcp.session.id" not in a
    assert sent["attributes"]["gen_ai.tool.name"] == "lookup"
    assert served["status"]["code"] == sent["status"]["code"] == "unset"


async def test_every_request_joins_the_callers_trace_and_its_handler_runs_in_the_server_span(otel: Otel) -> None:
    current: dict[str, str] = {}

    def seen(method: str) -> None:
        current[method] = hex_id(trace.get_current_span().get_span_context().span_id, 16)

    server = Server("requests")
    server.tool("t")(lambda: "ok")

    @server.resource("test://r")
    def r() -> str:
        seen("resources/read")
        return "r"

    @server.prompt()
    async def p(topic: str) -> str:
        seen("prompts/get p")
        return topic

    @server.completion(prompt="p")
    def complete_topic(argument: str, value: str) -> list[str]:
        seen("completion/complete")
        return ["otel"]

    running = await server.start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "") as client:
            with otel.tracer.start_as_current_span("agent-turn") as turn:
                await client.read_resource("test://r")
                await client.get_prompt("p", {"topic": "t"})
                await client.complete({"type": "ref/prompt", "name": "p"}, {"name": "topic", "value": "o"})
                await client.request("tools/list")
    finally:
        await running.stop()

    spans = await otel.spans_of(hex_id(turn.get_span_context().trace_id, 32), 9)
    agent = one(spans, "agent-turn")
    for method in ("resources/read", "prompts/get p", "completion/complete", "tools/list"):
        sent = one(spans, method, "client")
        served = one(spans, method, "server")
        assert sent["parentSpanId"] == agent["spanId"], method
        assert served["parentSpanId"] == sent["spanId"], method
        if method != "tools/list":
            assert current[method] == served["spanId"], f"the {method} handler runs in its server span"


async def test_a_traceparent_of_the_callers_meta_wins_over_the_current_span(otel: Otel) -> None:
    server = Server("meta")
    server.tool("echo")(lambda: "ok")
    theirs = "4bf92f3577b34da6a3ce929d0e0e4736"
    running = await server.start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "") as client:
            with otel.tracer.start_as_current_span("agent-turn"):
                await client.call_tool("echo", meta={"traceparent": f"00-{theirs}-00f067aa0ba902b7-01"})
    finally:
        await running.stop()
    spans = await otel.spans_of(theirs, 2)
    assert one(spans, "tools/call echo", "client")["parentSpanId"] == "00f067aa0ba902b7"


async def test_a_legacy_sessions_span_names_its_session(otel: Otel) -> None:
    running = await traced_server(otel, sync=False).start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "", protocol_versions=["2025-11-25"]) as client:
            assert client.era == "legacy"
            with otel.tracer.start_as_current_span("agent-turn") as turn:
                await client.call_tool("lookup", {"key": "k2"})
            session = client.session_id
    finally:
        await running.stop()
    spans = await otel.spans_of(hex_id(turn.get_span_context().trace_id, 32), 4)
    served = one(spans, "tools/call lookup", "server")
    assert session and served["attributes"]["mcp.session.id"] == session
    assert served["attributes"]["mcp.protocol.version"] == "2025-11-25"
    assert one(spans, "db.query")["parentSpanId"] == served["spanId"]


async def test_an_error_is_recorded_with_its_json_rpc_code(otel: Otel) -> None:
    server = Server("failing")

    @server.tool()
    async def refuse(key: str) -> str:
        raise InvalidParams(f"no such key: {key}")

    running = await server.start_http("127.0.0.1", 0)
    try:
        async with Client.connect_http(running.url or "") as client:
            with otel.tracer.start_as_current_span("agent-turn") as turn:
                with pytest.raises(McpError) as raised:
                    await client.call_tool("refuse", {"key": "k3"})
    finally:
        await running.stop()
    code = str(raised.value.code)
    assert code == "-32602"
    spans = await otel.spans_of(hex_id(turn.get_span_context().trace_id, 32), 3)
    for kind in ("server", "client"):
        span = one(spans, "tools/call refuse", kind)
        assert span["attributes"].get("error.type") == code, span
        assert span["attributes"].get("rpc.response.status_code") == code, span
        assert span["status"]["code"] == "error", span
        assert "no such key: k3" in span["status"]["message"], span


def duration_count(points: JsonList, name: str, tool: str) -> int:
    """The count of the latest export's ``name`` histogram point of ``tool`` (cumulative)."""
    counts = [p["count"] for p in points if p["name"] == name and p["attributes"].get("gen_ai.tool.name") == tool]
    return max(counts, default=0)


async def test_the_duration_metrics_count_a_known_load(otel: Otel) -> None:
    calls = 7
    server = Server("metered")
    server.tool("tally")(lambda: "ok")
    running = await server.start_http("127.0.0.1", 0, metrics_path="/metrics")
    try:
        async with Client.connect_http(running.url or "") as client:
            for _ in range(calls):
                await client.call_tool("tally")
        for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
            await otel.eventually(
                "/metrics", f"{calls} {name} points of tally", lambda held: duration_count(held, name, "tally") >= calls
            )
            assert duration_count(otel.get("/metrics"), name, "tally") == calls, name
        for point in otel.get("/metrics"):
            if point["name"] == "mcp.server.operation.duration":
                assert point["service"] == "mcpaxle-py" and point["unit"] == "s" and point["kind"] == "histogram"

        text = telemetry.prometheus_text()
        assert text is not None and "mcp_server_operation_duration" in text
        tally = [
            line
            for line in text.splitlines()
            if line.startswith("mcp_server_operation_duration") and "_count" in line and 'gen_ai_tool_name="tally"' in line
        ]
        assert tally and tally[0].endswith(f" {calls}"), tally
        scraped = await asyncio.to_thread(
            lambda: urllib.request.urlopen(f"http://{running.address}/metrics", timeout=5).read().decode()
        )
        assert "mcp_server_operation_duration" in scraped and 'gen_ai_tool_name="tally"' in scraped
    finally:
        await running.stop()


def test_options_are_checked_by_the_core(otel: Otel) -> None:
    with pytest.raises(UsageError, match=r"sample_ratio: 2(\.0)? is not a ratio between 0\.0 and 1\.0"):
        telemetry.configure(sample_ratio=2)
    with pytest.raises(UsageError, match="unknown field `endpont`"):
        telemetry.configure(endpont="http://127.0.0.1:4318")
    assert telemetry.is_enabled(), "a refused configuration leaves the one in force"



ENV_SCRIPT = """
import asyncio
from mcpaxle import Client, Server, telemetry

async def main() -> None:
    server = Server("env")
    server.tool("from_env")(lambda: "ok")
    running = await server.start_http("127.0.0.1", 0)
    async with Client.connect_http(running.url) as client:
        await client.call_tool("from_env")
    await running.stop()
    print("enabled", telemetry.is_enabled(), flush=True)
    telemetry.shutdown()

asyncio.run(main())
"""


def run_script(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run([sys.executable, "-c", script], env=clean | env, capture_output=True, text=True, timeout=60)


async def test_the_otel_environment_turns_telemetry_on_as_the_runtime_starts(otel: Otel) -> None:
    done = await asyncio.to_thread(
        run_script, ENV_SCRIPT, {"OTEL_EXPORTER_OTLP_ENDPOINT": otel.url, "OTEL_SERVICE_NAME": "mcpaxle-env"}
    )
    assert done.returncode == 0 and "enabled True" in done.stdout, done.stderr
    spans = await otel.eventually(
        "/spans",
        "the spans of the process configured by its environment",
        lambda held: (got := [s for s in held if s["service"] == "mcpaxle-env"]) and len(got) >= 2 and got,
    )
    assert {s["kind"] for s in spans if s["name"] == "tools/call from_env"} == {"client", "server"}


def test_a_bad_otel_environment_is_a_warning_in_python_logging() -> None:
    script = "import logging, time\nlogging.basicConfig()\n" + ENV_SCRIPT + "time.sleep(0.5)\n"
    done = run_script(script, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://not a host:4318"})
    assert done.returncode == 0 and "enabled False" in done.stdout, done.stderr
    assert "WARNING:mcpaxle.telemetry:telemetry from the OTEL_* environment is off" in done.stderr, done.stderr
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in done.stderr

"""HTTP end to end against the example server in its own process (raw http.client POSTs
with the MCP headers and _meta), and server.run() stopping cleanly on SIGINT and SIGTERM."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from typing import Iterator

import pytest
from mcpclient import EXAMPLE, Http, request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_example() -> tuple[subprocess.Popen[bytes], Http]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--http", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, Http(f"http://127.0.0.1:{port}/mcp")
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "the server died")
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("the example did not start listening")


@pytest.fixture
def example() -> Iterator[tuple[subprocess.Popen[bytes], Http]]:
    proc, client = start_example()
    yield proc, client
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_example_over_http(example: tuple[subprocess.Popen[bytes], Http]) -> None:
    _, client = example
    d = client.call("server/discover")
    assert d.status == 200 and d.result["resultType"] == "complete"
    assert {"ttlMs", "cacheScope", "supportedVersions", "capabilities"} <= set(d.result)
    r = client.call_tool("test_simple_text")
    assert r["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    r = client.call_tool("test_error_handling")
    assert r["isError"] is True
    prompt = client.call("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}).result
    assert prompt["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"
    c = client.call("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "te"}}).result
    assert c["completion"]["values"] == ["test", "testing", "tested"]

    body = request("tools/call", {"name": "test_simple_text"})
    headers = client.headers(body)
    headers["Mcp-Name"] = "something_else"
    import http.client

    conn = http.client.HTTPConnection(client.host, client.port, timeout=5)
    conn.request("POST", client.path, json.dumps(body), headers)
    resp = conn.getresponse()
    err = json.loads(resp.read())
    conn.close()
    assert resp.status == 400 and err["error"]["code"] == -32020

    old = request("tools/list")
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    reply = client.post(old)
    assert reply.status == 400 and reply.final["error"]["code"] in (-32022, -32020)

    streamed = client.call("tools/call", {"name": "test_tool_with_progress", "_meta": {"progressToken": "t"}})
    assert streamed.content_type.startswith("text/event-stream")
    assert [n["params"]["progress"] for n in streamed.notifications] == [0, 50, 100]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_stops_cleanly_on_signals(sig: signal.Signals) -> None:
    proc, client = start_example()
    assert client.call_tool("test_simple_text")["content"]
    proc.send_signal(sig)
    try:
        code = proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 0, err
    assert "Traceback" not in err, err

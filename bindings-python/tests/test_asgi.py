"""``Server.asgi_app()``: the MCP endpoint under real uvicorn and hypercorn processes (both
eras, an SSE answer with progress, a listen stream, a request cancelled by the client's
disconnect, shutdown), mounted in FastAPI beside an ordinary route, the README's FastAPI quick
start as pasted, bad input answered as ``start_http`` answers it, and the lifespan protocol
driven by hand (shutdown ends a listen stream with its final response)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from mcpclient import Http, request

from mcpaxle import AsgiApp, Client, Cors, Server

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
ROOT = HERE.parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    """An ASGI server process on 127.0.0.1, in a process group of its own: hypercorn serves from
    a worker process it spawns, which outlives its parent unless the whole group is killed."""

    def __init__(self, args: list[str], port: int, cwd: Path, env: dict[str, str]) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.proc = subprocess.Popen(
            args, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError(self.output())
                time.sleep(0.05)
        self.kill()
        raise AssertionError(f"{args} did not start listening: {self.output()}")

    def kill(self) -> None:
        """Kills the server and every process it started."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def output(self) -> str:
        if self.proc.poll() is None:
            self.kill()
        out, _ = self.proc.communicate(timeout=10)
        return out.decode(errors="replace")

    def stop(self) -> None:
        self.kill()
        self.proc.wait(10)


def asgi_server(kind: str, target: str, marks: Path, *extra: str) -> Process:
    port = free_port()
    if kind == "uvicorn":
        args = [sys.executable, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *extra]
    else:
        args = [sys.executable, "-m", "hypercorn", target, "--bind", f"127.0.0.1:{port}", *extra]
    return Process(args, port, SERVERS, {"MCPAXLE_TEST_MARKS": str(marks), "PYTHONPATH": str(SERVERS)})


@pytest.fixture(params=["uvicorn", "hypercorn"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Process, Path]]:
    p = asgi_server(request.param, "asgi_app:app", tmp_path)
    yield p, tmp_path
    p.stop()


async def wait_for(path: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} was not written"
        await asyncio.sleep(0.02)


async def test_both_eras_progress_listen_and_cancel_under_a_real_server(served: tuple[Process, Path]) -> None:
    p, marks = served
    async with Client.connect_http(p.url) as c:
        assert c.era == "modern"
        assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        progress: list[Any] = []
        r = await c.call_tool("steps", {"n": 3}, on_progress=progress.append)
        assert r["content"][0]["text"] == "3 steps"
        assert [x["progress"] for x in progress] == [1, 2, 3]
        async with c.subscribe(tools_list_changed=True) as sub:
            assert (await c.call_tool("change"))["content"][0]["text"] == "changed"
            n = await asyncio.wait_for(sub.next(), 10)
            assert n is not None and n["method"] == "notifications/tools/list_changed"
    async with Client.connect_http(p.url, protocol_versions=["2025-11-25"]) as c:
        assert c.era == "legacy" and c.session_id
        assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
        progress = []
        assert (await c.call_tool("steps", {"n": 2}, on_progress=progress.append))["content"][0]["text"] == "2 steps"
        assert len(progress) == 2

    # The client goes away mid-request: the handler is cancelled.
    body = request("tools/call", {"name": "hang", "arguments": {}})
    conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
    conn.request("POST", "/mcp", json.dumps(body), Http(p.url).headers(body))
    await wait_for(marks / "started")
    assert conn.sock is not None
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    await wait_for(marks / "cancelled")


def raw(port: int, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body, headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


BAD_INPUT: list[tuple[str, bytes, dict[str, str]]] = [
    ("POST", b"{not json", {"Content-Type": "application/json"}),
    ("POST", b"{}", {"Content-Type": "text/plain"}),
    # Declared past the limit (4 MiB): refused before the body is read.
    ("POST", b"{}", {"Content-Type": "application/json", "Content-Length": str((4 << 20) + 1)}),
    ("GET", b"", {"Accept": "text/event-stream"}),
    ("DELETE", b"", {"Mcp-Session-Id": "nope"}),
    ("POST", json.dumps(request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})).encode(), {"Content-Type": "application/json", "Host": "evil.example"}),
    ("POST", json.dumps(request("tools/call", {"name": "add"})).encode(), {"Content-Type": "application/json", "Origin": "https://evil.example"}),
    ("POST", json.dumps(request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})).encode(), {"Content-Type": "application/json", "Accept": "image/png"}),
]


async def test_bad_input_gets_the_statuses_of_start_http(served: tuple[Process, Path]) -> None:
    p, _ = served
    server = Server("reference")
    server.tool()(lambda a, b: a + b)
    async with await server.start_http("127.0.0.1", 0) as reference:
        assert reference.port is not None
        ref_port = reference.port
        mounted = p.port
        statuses = []
        for method, body, headers in BAD_INPUT:
            want, want_body = await asyncio.to_thread(raw, ref_port, method, "/mcp", body, headers)
            got, got_body = await asyncio.to_thread(raw, mounted, method, "/mcp", body, headers)
            statuses.append(got)
            assert got == want, (method, headers, got_body)
            if want_body.startswith(b"{"):
                assert json.loads(got_body)["error"]["code"] == json.loads(want_body)["error"]["code"]
    assert statuses == [400, 415, 413, 405, 404, 403, 403, 406]


@pytest.mark.parametrize("kind", ["uvicorn", "hypercorn"])
async def test_mounted_in_fastapi_beside_an_ordinary_route(kind: str, tmp_path: Path) -> None:
    p = asgi_server(kind, "asgi_app:fastapi_app", tmp_path)
    try:
        status, body = await asyncio.to_thread(raw, p.port, "GET", "/hello", b"", {})
        assert (status, json.loads(body)) == (200, {"hello": "world"})
        async with Client.connect_http(p.url) as c:
            assert (await c.call_tool("add", {"a": 20, "b": 22}))["structuredContent"] == {"result": 42}
        async with Client.connect_http(p.url, protocol_versions=["2025-11-25"]) as c:
            assert (await c.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
    finally:
        p.stop()


def quickstart(name: str) -> str:
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import quickstarts
    finally:
        sys.path.pop(0)
    found, problems = quickstarts.extract([ROOT / "bindings-python" / "README.md"])
    assert not problems
    return found[name][0]


async def test_the_readme_fastapi_quick_start_runs_as_pasted(tmp_path: Path) -> None:
    code = quickstart("fastapi_app.py")
    assert len([line for line in code.splitlines() if line.strip()]) <= 10, "the quick start stays ten lines"
    assert f"```python\n{code}```" in (ROOT / "README.md").read_text(), "the root README shows the same ten lines"
    (tmp_path / "main.py").write_text(code)
    port = free_port()
    p = Process([sys.executable, "-m", "uvicorn", "main:app", "--port", str(port), "--log-level", "warning"], port, tmp_path, {})
    try:
        async with Client.connect_http(p.url) as c:
            tools = [t["name"] for t in await c.list_tools()]
            assert "add" in tools
            assert (await c.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == {"result": 4}
        status, body = await asyncio.to_thread(raw, port, "GET", "/", b"", {})
        assert status == 200
    finally:
        p.stop()


async def test_uvicorn_stops_cleanly_with_a_listen_stream_open(tmp_path: Path) -> None:
    # uvicorn sends lifespan.shutdown once its connections are done: the listen stream is cut
    # at --timeout-graceful-shutdown, then the app's shutdown runs and the process ends.
    p = asgi_server("uvicorn", "asgi_app:app", tmp_path, "--timeout-graceful-shutdown", "1", "--log-level", "info")
    try:
        client = Http(p.url)
        stream = await asyncio.to_thread(client.open_stream, request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        await asyncio.to_thread(stream.wait_for, lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        p.proc.send_signal(signal.SIGTERM)
        # uvicorn re-raises the signal it caught once it has shut down.
        assert await asyncio.to_thread(p.proc.wait, 15) in (0, -signal.SIGTERM)
        out = p.output()
        assert "Application shutdown complete" in out, out
        # The only exception: uvicorn's cancellation of the stream at its graceful timeout.
        errors = [line for line in out.splitlines() if "Error" in line and "CancelledError: Task cancelled, timeout graceful shutdown" not in line]
        assert not errors, out
        stream.close()
    finally:
        p.stop()


class Asgi:
    """Drives an ASGI app by hand: what it sends, and a receive that yields given messages
    then waits (or returns what ``push`` adds)."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for m in messages:
            self.inbox.put_nowait(m)
        self.sent: list[dict[str, Any]] = []
        self.sent_event = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.sent_event.set()

    async def sent_where(self, predicate: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for m in self.sent:
                if predicate(m):
                    return m
            self.sent_event.clear()
            await asyncio.wait_for(self.sent_event.wait(), max(0.01, deadline - time.monotonic()))


def http_scope(body: dict[str, Any]) -> dict[str, Any]:
    headers = [(k.lower().encode(), v.encode()) for k, v in Http("http://127.0.0.1/mcp").headers(body).items()]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers], "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }


async def test_lifespan_shutdown_ends_listen_streams_with_their_final_response() -> None:
    server = Server("lifespan")
    server.tool()(lambda: "ok")
    app = server.asgi_app(drain_timeout_ms=5000)
    assert isinstance(app, AsgiApp)
    life = Asgi({"type": "lifespan.startup"})
    lifespan = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}}, life.receive, life.send))
    await life.sent_where(lambda m: m["type"] == "lifespan.startup.complete")

    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    h = Asgi({"type": "http.request", "body": json.dumps(listen).encode(), "more_body": False})
    call = asyncio.ensure_future(app(http_scope(listen), h.receive, h.send))
    start = await h.sent_where(lambda m: m["type"] == "http.response.start")
    assert start["status"] == 200 and (b"content-type", b"text/event-stream") in start["headers"]
    await h.sent_where(lambda m: b"notifications/subscriptions/acknowledged" in m.get("body", b""))

    life.inbox.put_nowait({"type": "lifespan.shutdown"})
    await asyncio.wait_for(call, 10)
    final = [m for m in h.sent if m["type"] == "http.response.body" and b'"result"' in m.get("body", b"")]
    assert final, h.sent
    assert h.sent[-1] == {"type": "http.response.body", "body": b""}
    await life.sent_where(lambda m: m["type"] == "lifespan.shutdown.complete")
    await asyncio.wait_for(lifespan, 10)


async def test_a_disconnect_cancels_the_request_and_options_are_the_cores() -> None:
    server = Server("cancel")
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def hang() -> str:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    app = server.asgi_app(cors=Cors(allowed_origins=["https://app.example.com"]))
    body = request("tools/call", {"name": "hang", "arguments": {}})
    h = Asgi({"type": "http.request", "body": json.dumps(body).encode(), "more_body": False})
    call = asyncio.ensure_future(app(http_scope(body), h.receive, h.send))
    await asyncio.wait_for(started.wait(), 10)
    h.inbox.put_nowait({"type": "http.disconnect"})
    await asyncio.wait_for(cancelled.wait(), 10)
    await asyncio.wait_for(call, 10)
    assert h.sent == []
    await app.shutdown()

    # A CORS preflight from the listed origin, through the core.
    scope = {**http_scope(body), "method": "OPTIONS", "headers": [(b"host", b"localhost"), (b"origin", b"https://app.example.com"), (b"access-control-request-method", b"POST")]}
    h = Asgi({"type": "http.request", "body": b"", "more_body": False})
    await asyncio.wait_for(app(scope, h.receive, h.send), 10)
    assert h.sent[0]["status"] == 204
    assert (b"access-control-allow-origin", b"https://app.example.com") in h.sent[0]["headers"]
    await app.shutdown()

    from mcpaxle.errors import UsageError

    bad = server.asgi_app(max_body=-1)
    with pytest.raises(UsageError, match="max_body"):
        await bad(http_scope(body), Asgi().receive, Asgi().send)


async def test_bearer_auth_goes_through_the_binding_verifier() -> None:
    from mcpaxle import BearerAuth, Context, TokenInfo

    server = Server("guarded")

    @server.tool()
    def whoami(ctx: Context) -> str:
        return ctx.principal or "nobody"

    seen: list[str] = []

    async def verify(token: str) -> TokenInfo | None:
        seen.append(token)
        return TokenInfo("alice", ["notes:read"]) if token == "good" else None

    auth = BearerAuth(resource="http://127.0.0.1:8000/mcp", authorization_servers=["https://as.example.com"], verify=verify)
    app = server.asgi_app(auth=auth)
    body = request("tools/call", {"name": "whoami", "arguments": {}})

    async def call(token: str | None) -> Asgi:
        scope = http_scope(body)
        if token is not None:
            scope["headers"] = [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]
        h = Asgi({"type": "http.request", "body": json.dumps(body).encode(), "more_body": False})
        await asyncio.wait_for(app(scope, h.receive, h.send), 10)
        return h

    h = await call(None)
    assert h.sent[0]["status"] == 401
    challenge = dict(h.sent[0]["headers"])[b"www-authenticate"]
    assert b'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in challenge
    assert (await call("forged")).sent[0]["status"] == 401
    h = await call("good")
    assert h.sent[0]["status"] == 200
    assert json.loads(h.sent[1]["body"])["result"]["content"][0]["text"] == "alice"
    assert seen == ["forged", "good"]
    # The protected resource metadata, should the host route its path here too.
    scope = {**http_scope(body), "method": "GET", "path": "/.well-known/oauth-protected-resource/mcp", "raw_path": b"/.well-known/oauth-protected-resource/mcp"}
    h = Asgi({"type": "http.request", "body": b"", "more_body": False})
    await asyncio.wait_for(app(scope, h.receive, h.send), 10)
    assert h.sent[0]["status"] == 200
    assert json.loads(h.sent[1]["body"])["authorization_servers"] == ["https://as.example.com"]
    await app.shutdown()

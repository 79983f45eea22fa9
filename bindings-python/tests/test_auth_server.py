"""A Python server protected by OAuth bearer tokens (mcpaxle.BearerAuth), in process: the
protected resource metadata, the 401/403/503 answers and their challenges (raw HTTP), the
token's subject as ctx.principal, mcpaxle.Client with a bearer header in both eras, async and
sync verifiers, a verifier that fails, and option checking.

Getting tokens through a real OAuth flow needs an authorization server, which a Python server
is not: test_oauth.py runs the client's flows against the Rust oauth_server fixture."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import threading
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import pytest
from auth_cases import AUTH_CASES, expected, kwargs
from mcpclient import request

from mcpaxle import BearerAuth, Client, Context, Running, Server, TokenInfo
from mcpaxle.errors import TransportError, UsageError

RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

TOKENS = {
    "reader": TokenInfo(subject="alice", scopes=["notes:read"]),
    "writer": TokenInfo(subject="bob", scopes=["notes:read", "notes:write"]),
    "nobody": TokenInfo(subject="eve"),
}


async def verify(token: str) -> TokenInfo | None:
    if token == "boom":
        raise RuntimeError("the introspection endpoint is down")
    return TOKENS.get(token)


def notes_server() -> Server:
    server = Server("notes", version="1.0.0")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        return f"principal {ctx.principal}"

    @server.tool()
    def write_note(text: str) -> str:
        return f"saved: {text}"

    return server


def auth_with(fn: Callable[[str], Any], **options: Any) -> BearerAuth:
    options.setdefault("required_scopes", ["notes:read"])
    options.setdefault("tool_scopes", {"write_note": ["notes:write"]})
    return BearerAuth(resource=RESOURCE, authorization_servers=[ISSUER], verify=fn, **options)


@pytest.fixture
async def serve() -> Any:
    """``running = await serve(verify, **auth_options)``: the notes server behind BearerAuth
    on a free port, stopped at the end of the test."""
    started: list[Running] = []

    async def start(fn: Callable[[str], Any] = verify, **options: Any) -> Running:
        running = await notes_server().start_http("127.0.0.1", 0, auth=auth_with(fn, **options))
        started.append(running)
        return running

    yield start
    for r in started:
        await r.stop()


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def challenge(self) -> str:
        return self.headers.get("www-authenticate", "")


def _send(url: str, method: str, path: str, body: dict[str, Any] | None, headers: dict[str, str]) -> Answer:
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=10)
    try:
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        r = conn.getresponse()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


async def post(running: Running, method: str, params: dict[str, Any] | None = None, token: str | None = None) -> Answer:
    """Posts a 2026-07-28 request to the endpoint (on a thread: the server runs on this loop)."""
    body = request(method, params)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if method == "tools/call" and params:
        headers["Mcp-Name"] = params["name"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return await asyncio.to_thread(_send, running.url or "", "POST", "/mcp", body, headers)


async def get(running: Running, path: str) -> Answer:
    return await asyncio.to_thread(_send, running.url or "", "GET", path, None, {})


def result_text(a: Answer) -> str:
    assert a.status == 200, (a.status, a.body)
    msg = a.json() if a.headers.get("content-type", "").startswith("application/json") else _last_sse(a.body)
    return msg["result"]["content"][0]["text"]


def _last_sse(raw: bytes) -> dict[str, Any]:
    events = [line[5:].strip() for line in raw.decode().splitlines() if line.startswith("data:")]
    return json.loads(events[-1])


# Raw HTTP ----------------------------------------------------------------------------------


async def test_metadata_document(serve: Any) -> None:
    running = await serve()
    a = await get(running, "/.well-known/oauth-protected-resource/mcp")
    assert a.status == 200
    assert a.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:read"],
    }
    running = await serve(scopes_supported=["notes:read", "notes:write", "offline_access"])
    a = await get(running, "/.well-known/oauth-protected-resource/mcp")
    assert a.json()["scopes_supported"] == ["notes:read", "notes:write", "offline_access"]


async def test_no_token_is_challenged(serve: Any) -> None:
    running = await serve()
    a = await post(running, "tools/list")
    assert a.status == 401
    assert a.challenge.startswith("Bearer ")
    assert f'resource_metadata="{METADATA_URL}"' in a.challenge
    assert 'scope="notes:read"' in a.challenge
    assert "error=" not in a.challenge


async def test_invalid_token(serve: Any) -> None:
    running = await serve()
    a = await post(running, "tools/list", token="forged")
    assert a.status == 401
    assert 'error="invalid_token"' in a.challenge
    assert f'resource_metadata="{METADATA_URL}"' in a.challenge
    assert a.json()["error"] == "invalid_token"


async def test_missing_required_scope(serve: Any) -> None:
    running = await serve()
    a = await post(running, "tools/list", token="nobody")
    assert a.status == 403
    assert 'error="insufficient_scope"' in a.challenge and 'scope="notes:read"' in a.challenge


async def test_tool_scopes(serve: Any) -> None:
    running = await serve()
    a = await post(running, "tools/call", {"name": "write_note", "arguments": {"text": "hi"}}, token="reader")
    assert a.status == 403
    assert 'error="insufficient_scope"' in a.challenge
    assert 'scope="notes:read notes:write"' in a.challenge
    a = await post(running, "tools/call", {"name": "write_note", "arguments": {"text": "hi"}}, token="writer")
    assert result_text(a) == "saved: hi"


async def test_principal_is_the_subject(serve: Any) -> None:
    running = await serve()
    a = await post(running, "tools/call", {"name": "whoami"}, token="reader")
    assert result_text(a) == "principal alice"
    a = await post(running, "tools/call", {"name": "whoami"}, token="writer")
    assert result_text(a) == "principal bob"


async def test_failing_verifier_answers_503_and_logs(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    running = await serve()
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        a = await post(running, "tools/list", token="boom")
    assert a.status == 503
    assert a.json()["error"] == "temporarily_unavailable"
    [record] = [r for r in caplog.records if r.name == "mcpaxle"]
    assert "token verifier" in record.getMessage() and "RuntimeError" in record.getMessage()
    assert record.exc_info is not None and "introspection endpoint is down" in str(record.exc_info[1])
    assert "Traceback" in caplog.text


async def test_wrong_verifier_result_answers_503_and_logs(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    async def sloppy(token: str) -> Any:
        return {"sub": "alice"}

    running = await serve(sloppy)
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        a = await post(running, "tools/list", token="reader")
    assert a.status == 503
    [record] = [r for r in caplog.records if r.name == "mcpaxle"]
    assert "returned dict" in record.getMessage() and "TokenInfo" in record.getMessage()


@pytest.mark.parametrize("case", AUTH_CASES["tokenInfo"]["cases"], ids=lambda c: c["name"])
async def test_every_shared_bad_answer_answers_503_and_logs(serve: Any, caplog: pytest.LogCaptureFixture, case: dict[str, Any]) -> None:
    answer = case["answer"]
    # A Python verifier answers a TokenInfo, whose fields the core checks when it is built; an
    # answer that cannot even be one is the wrong type.
    as_token_info = isinstance(answer, dict) and set(answer) <= {"subject", "scopes", "claims"}

    async def answering(token: str) -> Any:
        return TokenInfo(**answer) if as_token_info else answer

    running = await serve(answering)
    with caplog.at_level(logging.ERROR, logger="mcpaxle"):
        a = await post(running, "tools/list", token="reader")
    assert a.status == 503
    assert a.json()["error"] == "temporarily_unavailable"
    [record] = [r for r in caplog.records if r.name == "mcpaxle"]
    assert record.levelno == logging.ERROR
    if as_token_info:
        assert "raised UsageError" in record.getMessage()
        assert record.exc_info is not None and case["message"] in str(record.exc_info[1])
    else:
        assert f"returned {type(answer).__name__}" in record.getMessage() and "TokenInfo" in record.getMessage()


async def test_sync_verifier_runs_on_the_handler_pool(serve: Any) -> None:
    threads: list[str] = []

    def verify_sync(token: str) -> TokenInfo | None:
        threads.append(threading.current_thread().name)
        return TOKENS.get(token)

    running = await serve(verify_sync)
    a = await post(running, "tools/call", {"name": "whoami"}, token="reader")
    assert result_text(a) == "principal alice"
    assert (await post(running, "tools/list", token="forged")).status == 401
    assert threads and all(t.startswith("mcpaxle-handler") for t in threads), threads


async def test_verifier_may_return_an_awaitable(serve: Any) -> None:
    def verify_later(token: str) -> Awaitable[TokenInfo | None]:
        return verify(token)

    running = await serve(verify_later)
    assert result_text(await post(running, "tools/call", {"name": "whoami"}, token="writer")) == "principal bob"


# mcpaxle.Client ----------------------------------------------------------------------------


@pytest.mark.parametrize("version, era", [("2026-07-28", "modern"), ("2025-11-25", "legacy")])
async def test_client_with_a_bearer_header(serve: Any, version: str, era: str) -> None:
    running = await serve()
    url = running.url or ""
    async with Client.connect_http(url, headers={"Authorization": "Bearer reader"}, protocol_versions=[version]) as client:
        assert client.era == era
        assert {t["name"] for t in await client.list_tools()} == {"whoami", "write_note"}
        r = await client.call_tool("whoami")
        assert r["content"][0]["text"] == "principal alice"
        with pytest.raises(TransportError, match="403 Forbidden.*insufficient_scope"):
            await client.call_tool("write_note", {"text": "hi"})
    async with Client.connect_http(url, headers={"Authorization": "Bearer writer"}, protocol_versions=[version]) as client:
        r = await client.call_tool("write_note", {"text": "hi"})
        assert r["content"][0]["text"] == "saved: hi"
    with pytest.raises(TransportError, match="401 Unauthorized.*invalid_token"):
        await Client.connect_http(url, headers={"Authorization": "Bearer forged"}, protocol_versions=[version])


# Options -----------------------------------------------------------------------------------


def test_token_info() -> None:
    info = TokenInfo(subject="alice", scopes=["a", "b"])
    assert info.scopes == ("a", "b")
    assert TokenInfo("bob").scopes == ()
    with pytest.raises(UsageError, match="subject"):
        TokenInfo(subject="")
    with pytest.raises(UsageError, match="subject"):
        TokenInfo(subject=42)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="scopes: invalid type: string"):
        TokenInfo(subject="alice", scopes="notes:read notes:write")
    with pytest.raises(UsageError, match="without spaces"):
        TokenInfo(subject="alice", scopes=["notes:read notes:write"])


@pytest.mark.parametrize("case", AUTH_CASES["bearerAuth"]["cases"], ids=lambda c: c["name"])
def test_bearer_auth_refuses_every_shared_case_at_its_option(case: dict[str, Any]) -> None:
    with pytest.raises(UsageError) as e:
        BearerAuth(verify=verify, **kwargs("bearerAuth", case))
    assert str(e.value).startswith("BearerAuth: "), str(e.value)
    assert expected(case) in str(e.value)


def test_bearer_auth_checks_verify_is_a_callable() -> None:
    with pytest.raises(UsageError, match="verify must be a callable"):
        BearerAuth(resource=RESOURCE, authorization_servers=[ISSUER], verify="verify")  # type: ignore[arg-type]


def test_bearer_auth_is_frozen_and_normalised() -> None:
    auth = auth_with(verify, scopes_supported=["notes:read"])
    assert auth.authorization_servers == (ISSUER,)
    assert auth.required_scopes == ("notes:read",)
    assert auth.tool_scopes == {"write_note": ("notes:write",)}
    assert "verify" not in repr(auth)
    with pytest.raises(AttributeError):
        auth.resource = "https://other.example.com/mcp"  # type: ignore[misc]


async def test_start_http_checks_auth() -> None:
    with pytest.raises(UsageError, match="auth must be a mcpaxle.BearerAuth"):
        await notes_server().start_http("127.0.0.1", 0, auth={"resource": RESOURCE})  # type: ignore[arg-type]

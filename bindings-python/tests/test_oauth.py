"""OAuth (mcpaxle.OAuth) against the Rust oauth_server fixture, a protected MCP server with an
authorization server that approves at once: the authorize callback (async, sync, none), its
errors, pre-registered credentials, step-up, refresh, cancellation, and option checking."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from auth_cases import AUTH_CASES, expected, kwargs

from mcpaxle import Client, OAuth
from mcpaxle.errors import TransportError, UsageError

ROOT = Path(__file__).resolve().parents[2]
OAUTH_SERVER = ROOT / "target" / "debug" / "oauth_server"
REDIRECT_URI = "http://127.0.0.1:8765/callback"


@pytest.fixture
def _oauth_server_built() -> None:
    """Fails (never skips) a test that needs the fixture when it was not built."""
    if not OAUTH_SERVER.exists():
        pytest.fail(f"{OAUTH_SERVER} is missing: build it with `cargo build --release -p mcpaxle-fixtures` (scripts/test.sh does)", pytrace=False)


needs_server = pytest.mark.usefixtures("_oauth_server_built")


class OAuthServer:
    """A running oauth_server: its MCP endpoint and counters."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str) -> None:
        self.proc = proc
        self.url = url
        self.issuer = url.removesuffix("/mcp")

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.issuer}/stats", timeout=5) as r:
            return json.load(r)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Any]:
    """``start_server(*args)``: an oauth_server on a free port, stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> OAuthServer:
        log = tmp_path / f"oauth_server-{len(started)}.log"
        with log.open("wb") as err:
            proc = subprocess.Popen([str(OAUTH_SERVER), "--http", "127.0.0.1:0", *args], stdout=subprocess.DEVNULL, stderr=err)
        started.append(proc)
        deadline = time.monotonic() + 15
        while True:
            for line in log.read_text(errors="replace").splitlines():
                if "listening on " in line:
                    return OAuthServer(proc, line.split("listening on ", 1)[1].strip())
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"oauth_server did not start: {log.read_text(errors='replace')}")
            time.sleep(0.02)

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.fixture
def server(start_server: Any) -> OAuthServer:
    return start_server()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def redirect_of(authorization_url: str) -> str:
    """What a browser would do with an approving authorization server: GET the URL and take
    the redirect (without following it)."""
    try:
        with _opener.open(authorization_url, timeout=10) as r:
            raise AssertionError(f"no redirect: {r.status}")
    except urllib.error.HTTPError as e:
        assert 300 <= e.code < 400, e.code
        return e.headers["Location"]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def whoami(client: Client) -> str:
    r = await client.call_tool("whoami")
    return r["content"][0]["text"]


@needs_server
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_async_callback_sees_the_authorization_request(server: OAuthServer, version: str) -> None:
    loop = asyncio.get_running_loop()
    seen: list[str] = []
    answers: list[str] = []

    async def authorize(authorization_url: str) -> str:
        assert asyncio.get_running_loop() is loop
        seen.append(authorization_url)
        answers.append(await asyncio.to_thread(redirect_of, authorization_url))
        return answers[-1]

    oauth = OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)
    async with Client.connect_http(server.url, oauth=oauth, protocol_versions=[version]) as client:
        assert (await whoami(client)).startswith("client ")
    assert len(seen) == 1
    q = query(seen[0])
    assert seen[0].startswith(f"{server.issuer}/authorize?")
    assert q["response_type"] == "code" and q["redirect_uri"] == REDIRECT_URI
    assert q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
    assert q["state"] and q["resource"] == server.url
    assert "notes:read" in q["scope"].split()
    # The callback's answer is what the token request used: its state came back, and the
    # code it carried was redeemed.
    assert query(answers[0])["state"] == q["state"]
    stats = server.stats()
    assert stats["authorizations"] == 1 and stats["registrations"] == 1 and stats["token_requests"] == 1


@needs_server
async def test_sync_callback(server: OAuthServer) -> None:
    calls: list[str] = []

    def authorize(authorization_url: str) -> str:
        calls.append(authorization_url)
        return redirect_of(authorization_url)

    async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
        assert (await whoami(client)).startswith("client ")
        assert (await whoami(client)).startswith("client ")
    assert len(calls) == 1
    assert server.stats()["authorizations"] == 1


@needs_server
async def test_a_tampered_answer_is_refused(server: OAuthServer) -> None:
    async def authorize(authorization_url: str) -> str:
        redirect = await asyncio.to_thread(redirect_of, authorization_url)
        return redirect.replace("state=", "state=x")

    with pytest.raises(TransportError, match="state"):
        async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
            await whoami(client)
    assert server.stats()["token_requests"] == 0


@needs_server
async def test_without_user(server: OAuthServer) -> None:
    async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI)) as client:
        text = await whoami(client)
    assert text.startswith("client ") and "notes:read" in text
    assert server.stats()["authorizations"] == 1


@needs_server
async def test_pre_registered_credentials_skip_registration(server: OAuthServer) -> None:
    oauth = OAuth(redirect_uri=REDIRECT_URI, client_id="preregistered-client", client_secret="preregistered-secret", issuer=server.issuer)
    async with Client.connect_http(server.url, oauth=oauth) as client:
        assert (await whoami(client)).startswith("client preregistered-client, ")
    stats = server.stats()
    assert stats["registrations"] == 0 and stats["authorizations"] == 1


@needs_server
async def test_pre_registered_credentials_of_another_issuer_are_not_sent(server: OAuthServer) -> None:
    oauth = OAuth(redirect_uri=REDIRECT_URI, client_id="preregistered-client", client_secret="preregistered-secret", issuer="https://elsewhere.example")
    async with Client.connect_http(server.url, oauth=oauth) as client:
        assert not (await whoami(client)).startswith("client preregistered-client,")
    assert server.stats()["registrations"] == 1


@needs_server
async def test_client_metadata_url_is_the_client_id(server: OAuthServer) -> None:
    url = "https://app.example.com/oauth/client.json"
    async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, client_metadata_url=url)) as client:
        assert (await whoami(client)).startswith(f"client {url}, ")
    assert server.stats()["registrations"] == 0


@needs_server
async def test_a_raising_callback_fails_the_call_with_its_message(server: OAuthServer) -> None:
    def authorize(authorization_url: str) -> str:
        raise RuntimeError("the user closed the browser window")

    with pytest.raises(TransportError) as e:
        async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
            await whoami(client)
    assert str(e.value) == "the user closed the browser window"
    assert server.stats()["token_requests"] == 0


@needs_server
async def test_an_mcp_error_from_the_callback_keeps_its_class(server: OAuthServer) -> None:
    async def authorize(authorization_url: str) -> str:
        raise UsageError("no browser on this machine")

    with pytest.raises(UsageError, match="^no browser on this machine$"):
        async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
            await whoami(client)


@needs_server
async def test_a_callback_answering_no_str_is_a_usage_error(server: OAuthServer) -> None:
    with pytest.raises(UsageError, match="must return the redirect URL as a str, not NoneType"):
        async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=lambda url: None)) as client:
            await whoami(client)


@needs_server
async def test_step_up(server: OAuthServer) -> None:
    seen: list[str] = []

    async def authorize(authorization_url: str) -> str:
        seen.append(authorization_url)
        return await asyncio.to_thread(redirect_of, authorization_url)

    async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
        assert "notes:write" not in await whoami(client)
        r = await client.call_tool("write_note", {"text": "hello"})
        assert r["content"][0]["text"] == "saved: hello"
        assert "notes:write" in await whoami(client)
    assert len(seen) == 2
    assert {"notes:read", "notes:write"} <= set(query(seen[1])["scope"].split())
    assert server.stats()["authorizations"] == 2


@needs_server
async def test_an_expired_token_is_refreshed(start_server: Any) -> None:
    server = start_server("--token-ttl", "1")
    calls: list[str] = []

    async def authorize(authorization_url: str) -> str:
        calls.append(authorization_url)
        return await asyncio.to_thread(redirect_of, authorization_url)

    async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
        await whoami(client)
        await asyncio.sleep(1.2)
        assert (await whoami(client)).startswith("client ")
    assert len(calls) == 1
    stats = server.stats()
    assert stats["refreshes"] == 1 and stats["authorizations"] == 1


@needs_server
async def test_cancelling_the_connect_cancels_the_callback(server: OAuthServer) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def authorize(authorization_url: str) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ""

    async def connect() -> None:
        async with Client.connect_http(server.url, oauth=OAuth(redirect_uri=REDIRECT_URI, authorize=authorize)) as client:
            await whoami(client)

    task = asyncio.create_task(connect())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 10)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"authorize": "https://example.com"}, "authorize must be a callable"),
        ({"client_metadata_url": b"https://x/y"}, "client_metadata_url: cannot be sent as JSON"),
    ],
)
def test_bad_options_are_usage_errors(options: dict[str, Any], message: str) -> None:
    kwargs = {"redirect_uri": REDIRECT_URI, **options}
    with pytest.raises(UsageError, match=message):
        OAuth(**kwargs)


@pytest.mark.parametrize("case", AUTH_CASES["oauth"]["cases"], ids=lambda c: c["name"])
def test_oauth_refuses_every_shared_case_at_its_option(case: dict[str, Any]) -> None:
    with pytest.raises(UsageError) as e:
        OAuth(**kwargs("oauth", case))
    assert str(e.value).startswith("OAuth: "), str(e.value)
    assert expected(case) in str(e.value)


def test_oauth_must_be_an_oauth() -> None:
    with pytest.raises(UsageError, match="oauth must be an mcpaxle.OAuth, not dict"):
        Client.connect_http("http://127.0.0.1:9/mcp", oauth={"redirect_uri": REDIRECT_URI})  # type: ignore[arg-type]


def test_oauth_is_frozen_and_hides_the_secret() -> None:
    oauth = OAuth(redirect_uri=REDIRECT_URI, client_id="id", client_secret="hunter2")
    assert "hunter2" not in repr(oauth)
    with pytest.raises(AttributeError):
        oauth.client_id = "other"  # type: ignore[misc]

"""A Python server behind a real OpenID provider, with no verifier code: oidc-provider (the
certified OpenID provider, pinned in tests/oidc, installed there with npm ci on first use)
issues client credentials tokens on loopback, and BearerAuth's built-in verifiers check them:
``jwt`` against the provider's JWKS found through its metadata, ``introspection`` for its opaque
tokens. Shown: a valid token reaches the tool with its claims, a token for another resource and
a tampered one are refused, a revoked opaque token is refused, and the provider rotating its
signing key is picked up without restarting the MCP server. And the client side: machine
clients get their own tokens from the provider with the client credentials grant, with a secret
or with private_key_jwt, and a wrong secret fails with the provider's error. And the token store:
a second client with the same token file calls without a token request, a user authorizes once
(the provider's login and consent pages answered over HTTP by the authorize callback) and an
expired token is refreshed with the refresh token rotated in the file, a revoked token is dropped
from the file and replaced, and a server that rejects every token costs one token request per
call, never a loop."""

from __future__ import annotations

import asyncio
import base64
import http.cookiejar
import json
import os
import shutil
import socket
import stat
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from test_auth_server import post, result_text

from mcpaxle import BearerAuth, Client, Context, OAuth, Running, Server
from mcpaxle.errors import McpError, UsageError

OIDC = Path(__file__).resolve().parents[2] / "tests" / "oidc"
JWT_RESOURCE = "http://127.0.0.1/jwt/mcp"
OPAQUE_RESOURCE = "http://127.0.0.1/opaque/mcp"
OTHER_RESOURCE = "http://127.0.0.1/other/mcp"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    assert found, "the oidc-provider fixture needs node on PATH"
    if not (OIDC / "node_modules" / "oidc-provider").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=OIDC, check=True, capture_output=True)
    return found


class Provider:
    """oidc-provider on a fixed loopback port, (re)started with the signing key id given."""

    def __init__(self, node: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.node = node
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None
        self.client_key = ""

    def start(self, kid: str) -> None:
        self.proc = subprocess.Popen(
            [self.node, str(OIDC / "provider.mjs"), str(self.port), kid],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("client-key "), f"oidc-provider did not start: {line!r}"
        self.client_key = base64.b64decode(line.split(" ", 1)[1]).decode()
        line = self.proc.stdout.readline()
        assert line.strip() == f"ready {self.issuer}", f"oidc-provider did not start: {line!r}"

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def form(self, path: str, client: tuple[str, str], **fields: str) -> dict[str, Any]:
        basic = base64.b64encode(f"{client[0]}:{client[1]}".encode()).decode()
        req = urllib.request.Request(
            f"{self.issuer}{path}",
            data=urllib.parse.urlencode(fields).encode(),
            headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body else {}

    def token(self, resource: str, scope: str = "mcp:tools") -> str:
        """A client credentials token of the CI job for ``resource``."""
        answer = self.form("/token", ("ci-job", "ci-secret"), grant_type="client_credentials", scope=scope, resource=resource)
        return str(answer["access_token"])

    def revoke(self, token: str) -> None:
        self.form("/token/revocation", ("ci-job", "ci-secret"), token=token)

    def stats(self) -> dict[str, int]:
        """How many token and registration requests the provider has had (tests/oidc/provider.mjs)."""
        with urllib.request.urlopen(f"{self.issuer}/test/stats", timeout=10) as r:
            return dict(json.loads(r.read()))


@pytest.fixture
def provider(node: str) -> Iterator[Provider]:
    p = Provider(node)
    p.start("k1")
    yield p
    p.stop()


def whoami_server() -> Server:
    server = Server("behind-oidc", version="1.0.0")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        claims = ctx.claims or {}
        return f"{ctx.principal} via {claims.get('client_id')} for {claims.get('aud')}"

    return server


async def test_jwt_access_tokens_of_a_real_provider(provider: Provider) -> None:
    auth = BearerAuth(resource=JWT_RESOURCE, authorization_servers=[provider.issuer], jwt={}, required_scopes=["mcp:tools"])
    running: Running = await whoami_server().start_http("127.0.0.1", 0, auth=auth)
    try:
        token = provider.token(JWT_RESOURCE)
        async with Client.connect_http(running.url or "", headers={"Authorization": f"Bearer {token}"}) as client:
            r = await client.call_tool("whoami")
            assert r["content"][0]["text"] == f"ci-job via ci-job for {JWT_RESOURCE}"

        # A token the provider issued for another resource (RFC 8707 audience), one whose
        # payload was altered, one without the required scope.
        elsewhere = provider.token(OTHER_RESOURCE)
        head, payload, sig = token.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        forged = base64.urlsafe_b64encode(json.dumps({**claims, "sub": "admin"}).encode()).rstrip(b"=").decode()
        for what, bad in [("another audience", elsewhere), ("tampered", f"{head}.{forged}.{sig}")]:
            a = await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=bad)
            assert a.status == 401 and 'error="invalid_token"' in a.challenge, (what, a.status, a.body)
        a = await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=provider.token(JWT_RESOURCE, "mcp:admin"))
        assert a.status == 403 and "insufficient_scope" in a.challenge, (a.status, a.body)

        # The provider rotates its signing key (restarted with a new key id): the MCP server,
        # not restarted, fetches the new key set when a token names the new key.
        provider.stop()
        provider.start("k2")
        rotated = provider.token(JWT_RESOURCE)
        assert json.loads(base64.urlsafe_b64decode(rotated.split(".")[0] + "=="))["kid"] == "k2"
        assert result_text(await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=rotated)).startswith("ci-job")
        # The old key left the provider's set; its tokens no longer pass.
        a = await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=token)
        assert a.status == 401, (a.status, a.body)
    finally:
        await running.stop()


async def test_opaque_tokens_introspected_at_a_real_provider(provider: Provider) -> None:
    introspection = {"client_id": "mcp-server", "client_secret": "mcp-server-secret", "cache_ms": 0}
    auth = BearerAuth(resource=OPAQUE_RESOURCE, authorization_servers=[provider.issuer], introspection=introspection)
    running: Running = await whoami_server().start_http("127.0.0.1", 0, auth=auth)
    try:
        token = provider.token(OPAQUE_RESOURCE)
        assert token.count(".") == 0, "an opaque token"
        assert result_text(await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=token)) == (
            f"ci-job via ci-job for {OPAQUE_RESOURCE}"
        )
        provider.revoke(token)
        a = await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token=token)
        assert a.status == 401 and 'error="invalid_token"' in a.challenge, (a.status, a.body)
        # The provider down: the server cannot decide and answers 503, never lets a token pass.
        provider.stop()
        a = await post(running, "tools/call", {"name": "whoami", "arguments": {}}, token="an-opaque-token")
        assert a.status == 503, (a.status, a.body)
    finally:
        await running.stop()


async def test_a_verify_callback_or_the_built_in_verifiers_not_both() -> None:
    both = BearerAuth(resource=JWT_RESOURCE, authorization_servers=["http://127.0.0.1:9"], jwt={}, verify=lambda t: None)
    neither = BearerAuth(resource=JWT_RESOURCE, authorization_servers=["http://127.0.0.1:9"])
    for auth, message in [(both, "not both"), (neither, "needs a verify callback")]:
        with pytest.raises(UsageError, match=message):
            await whoami_server().start_http("127.0.0.1", 0, auth=auth)


async def test_machine_clients_get_their_own_tokens_from_a_real_provider(provider: Provider) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    auth = BearerAuth(resource=url, authorization_servers=[provider.issuer], jwt={}, required_scopes=["mcp:tools"])
    running: Running = await whoami_server().start_http("127.0.0.1", port, auth=auth)
    try:
        # client_secret_basic (the provider's default), and private_key_jwt with a key whose
        # public half is all the provider holds: discovery from the server's 401, no user.
        secret = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="ci-secret")
        key = OAuth(grant_type="client_credentials", client_id="ci-key-job", private_key_pem=provider.client_key, signing_algorithm="ES256")
        for oauth in (secret, key):
            async with Client.connect_http(url, oauth=oauth) as client:
                r = await client.call_tool("whoami")
                assert r["content"][0]["text"] == f"{oauth.client_id} via {oauth.client_id} for {url}"
        # A wrong secret: the provider's own error, named, and no token.
        wrong = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="not-the-secret")
        with pytest.raises(McpError) as e:
            async with Client.connect_http(url, oauth=wrong) as client:
                await client.call_tool("whoami")
        assert "invalid_client" in str(e.value), str(e.value)
    finally:
        await running.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def whoami(client: Client) -> str:
    r = await client.call_tool("whoami")
    return str(r["content"][0]["text"])


def stored(path: Path) -> dict[str, Any]:
    """The one entry's token of a token store file."""
    doc = json.loads(path.read_text())
    assert len(doc["entries"]) == 1, doc
    return dict(doc["entries"][0]["token"])


def edit_stored(path: Path, **token: Any) -> None:
    """Sets members of the one entry's token of a token store file."""
    doc = json.loads(path.read_text())
    doc["entries"][0]["token"].update(token)
    path.write_text(json.dumps(doc))


REDIRECT_URI = "http://127.0.0.1:8765/callback"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """The user's side of the authorization code flow, as an ``OAuth.authorize`` callback: it
    follows the provider's redirects with a cookie jar, logs in as ``account`` and approves the
    consent on the provider's pages (tests/oidc/provider.mjs), and returns the redirect to
    ``REDIRECT_URI`` (which nobody serves). ``visits``: how often the user was asked."""

    def __init__(self, account: str = "alice") -> None:
        self.account = account
        self.visits = 0

    async def __call__(self, authorization_url: str) -> str:
        self.visits += 1
        return await asyncio.to_thread(self._walk, authorization_url)

    def _walk(self, url: str) -> str:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect())
        data: bytes | None = None
        for _ in range(12):
            try:
                with opener.open(urllib.request.Request(url, data=data), timeout=10) as r:
                    page = json.loads(r.read())
            except urllib.error.HTTPError as e:
                if e.code not in (302, 303):
                    raise
                location = urllib.parse.urljoin(url, e.headers["Location"])
                if location.startswith(REDIRECT_URI):
                    return location
                url, data = location, None
                continue
            answer = {"login": self.account} if page["prompt"] == "login" else {"consent": "approve"}
            data = urllib.parse.urlencode(answer).encode()
        raise AssertionError(f"the provider never redirected back (last at {url})")


async def test_a_token_file_serves_a_second_client_and_drops_a_revoked_token(provider: Provider, tmp_path: Path) -> None:
    # Opaque tokens checked by introspection (uncached), so a revocation is seen at once.
    port = free_port()
    url = f"http://127.0.0.1:{port}/opaque"
    introspection = {"client_id": "mcp-server", "client_secret": "mcp-server-secret", "cache_ms": 0}
    auth = BearerAuth(resource=url, authorization_servers=[provider.issuer], introspection=introspection, required_scopes=["mcp:tools"])
    running: Running = await whoami_server().start_http("127.0.0.1", port, path="/opaque", auth=auth)
    path = tmp_path / "tokens.json"
    oauth = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="ci-secret", token_store={"file": str(path)})
    try:
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == f"ci-job via ci-job for {url}"
        assert provider.stats()["tokenRequests"] == 1
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        first = stored(path)["accessToken"]

        # Another client (a restart) with the same file: the stored token, no token request.
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == f"ci-job via ci-job for {url}"
            assert (await whoami(client)).startswith("ci-job")
        assert provider.stats()["tokenRequests"] == 1, "the second client did not ask for a token"

        # Revoked at the provider: the server (introspecting) rejects it; the client drops it
        # from the file and gets a new one, once.
        provider.revoke(first)
        async with Client.connect_http(url, oauth=oauth) as client:
            assert (await whoami(client)).startswith("ci-job")
        assert provider.stats()["tokenRequests"] == 2
        assert stored(path)["accessToken"] not in (first, None)
    finally:
        await running.stop()


async def test_a_server_that_rejects_every_token_is_not_asked_in_a_loop(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = BearerAuth(resource=url, authorization_servers=[provider.issuer], verify=lambda token: None)
    running: Running = await whoami_server().start_http("127.0.0.1", port, auth=auth)
    path = tmp_path / "tokens.json"
    oauth = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="ci-secret", token_store={"file": str(path)})
    try:
        for calls in (1, 2, 3):
            with pytest.raises(McpError, match="rejected the access token just issued by"):
                async with Client.connect_http(url, oauth=oauth):
                    pass
            assert provider.stats()["tokenRequests"] == calls, "one token request per call"
            assert json.loads(path.read_text())["entries"] == [], "the rejected token is not kept"
    finally:
        await running.stop()


async def test_a_user_authorizes_once_and_the_rotated_refresh_token_is_kept(provider: Provider, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = BearerAuth(resource=url, authorization_servers=[provider.issuer], jwt={}, required_scopes=["mcp:tools"])
    running: Running = await whoami_server().start_http("127.0.0.1", port, auth=auth)
    path = tmp_path / "tokens.json"
    browser = Browser("alice")
    # No client id: the client registers itself (dynamic registration) and keeps it in the file.
    oauth = OAuth(redirect_uri=REDIRECT_URI, authorize=browser, client_name="oidc-test", token_store={"file": str(path)})
    try:
        async with Client.connect_http(url, oauth=oauth) as client:
            me = await whoami(client)
        entry = stored(path)
        client_id = entry["registration"]["clientId"]
        assert me == f"alice via {client_id} for {url}"
        assert (browser.visits, provider.stats()) == (1, {"tokenRequests": 1, "registrations": 1})
        assert entry["refreshToken"] and entry["expiresAt"] > 0, entry

        # Expired in the file: a new client refreshes it, and the provider rotates the refresh
        # token; the new one replaces the old in the file. No user, no registration.
        edit_stored(path, expiresAt=1)
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == me
        refreshed = stored(path)
        assert (browser.visits, provider.stats()) == (1, {"tokenRequests": 2, "registrations": 1})
        assert refreshed["refreshToken"] != entry["refreshToken"], "rotated"
        assert refreshed["accessToken"] != entry["accessToken"]

        # The old refresh token, used up: the provider refuses it (invalid_grant); the client
        # drops it and asks the user again, with the registration it kept.
        edit_stored(path, expiresAt=1, refreshToken=entry["refreshToken"])
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == me
        assert (browser.visits, provider.stats()) == (2, {"tokenRequests": 4, "registrations": 1})
        assert stored(path)["refreshToken"] not in (entry["refreshToken"], refreshed["refreshToken"])
    finally:
        await running.stop()


class DictStore:
    """A token store of the application's own (here a dict; a keychain in real life), with an
    async load and plain save and clear, recording each call."""

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.calls: list[str] = []

    async def load(self, key: dict[str, str]) -> dict[str, Any] | None:
        self.calls.append("load")
        return self.tokens.get((key["issuer"], key["resource"], key["client"]))

    def save(self, key: dict[str, str], token: dict[str, Any]) -> None:
        self.calls.append("save")
        self.tokens[(key["issuer"], key["resource"], key["client"])] = token

    def clear(self, key: dict[str, str]) -> None:
        self.calls.append("clear")
        self.tokens.pop((key["issuer"], key["resource"], key["client"]), None)


async def test_a_token_store_of_the_applications_own(provider: Provider) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = BearerAuth(resource=url, authorization_servers=[provider.issuer], jwt={}, required_scopes=["mcp:tools"])
    running: Running = await whoami_server().start_http("127.0.0.1", port, auth=auth)
    store = DictStore()
    oauth = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="ci-secret", token_store=store)
    try:
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == f"ci-job via ci-job for {url}"
        assert store.calls == ["load", "save"]
        assert list(store.tokens) == [(provider.issuer, url, "ci-job")]
        assert provider.stats()["tokenRequests"] == 1
        async with Client.connect_http(url, oauth=oauth) as client:
            assert await whoami(client) == f"ci-job via ci-job for {url}"
        assert (store.calls, provider.stats()["tokenRequests"]) == (["load", "save", "load"], 1)

        # A store that fails: the call fails with its message.
        class Broken(DictStore):
            async def load(self, key: dict[str, str]) -> dict[str, Any] | None:
                raise OSError("the keychain is locked")

        broken = OAuth(grant_type="client_credentials", client_id="ci-job", client_secret="ci-secret", token_store=Broken())
        with pytest.raises(McpError, match="the token store's load failed: the keychain is locked"):
            async with Client.connect_http(url, oauth=broken):
                pass
    finally:
        await running.stop()

"""A Python server behind a real OpenID provider, with no verifier code: oidc-provider (the
certified OpenID provider, pinned in tests/oidc, installed there with npm ci on first use)
issues client credentials tokens on loopback, and BearerAuth's built-in verifiers check them:
``jwt`` against the provider's JWKS found through its metadata, ``introspection`` for its opaque
tokens. Shown: a valid token reaches the tool with its claims, a token for another resource and
a tampered one are refused, a revoked opaque token is refused, and the provider rotating its
signing key is picked up without restarting the MCP server. And the client side: machine
clients get their own tokens from the provider with the client credentials grant, with a secret
or with private_key_jwt, and a wrong secret fails with the provider's error."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
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

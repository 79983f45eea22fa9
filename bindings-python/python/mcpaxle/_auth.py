"""Bearer-token protection of a server's Streamable HTTP endpoint: the MCP server as an OAuth
2.1 resource server.

>>> from mcpaxle import BearerAuth, Server, TokenInfo
>>> async def verify(token: str) -> TokenInfo | None:
...     claims = await check_jwt(token)                      # your JWT check or introspection
...     if claims is None:
...         return None                                      # invalid or expired: 401
...     return TokenInfo(subject=claims["sub"], scopes=claims["scope"].split())
>>> auth = BearerAuth(
...     resource="https://mcp.example.com/mcp",
...     authorization_servers=["https://auth.example.com"],
...     verify=verify,
...     required_scopes=["notes:read"],
...     tool_scopes={"write_note": ["notes:write"]},
... )
>>> # server.run("http", host="127.0.0.1", port=8000, auth=auth)

What the server does for you (in the core): it publishes the protected resource metadata
(RFC 9728) at ``/.well-known/oauth-protected-resource<path>``, answers a request without a
token, or with one ``verify`` rejects, with ``401`` and a ``WWW-Authenticate: Bearer``
challenge naming that document and the scopes needed (which starts a client's authorization
flow), answers a token without the required scopes, or without those of the tool called, with
``403 insufficient_scope`` (the client re-authorizes with more: step-up), and makes the
token's subject the request's principal: handlers read it as ``ctx.principal``, and MRTR
``requestState`` is bound to it. What it does not do: issue tokens. That is the
authorization server's job (Keycloak, Auth0, Entra ID, ...); ``verify`` only checks the tokens
it issued (signature, expiry, and that their audience is this ``resource``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Sequence

from . import _native
from ._handlers import Pool, is_async
from .errors import InternalError, UsageError

__all__ = ["BearerAuth", "TokenInfo", "TokenVerifier"]

logger = logging.getLogger("mcpaxle")


@dataclass(frozen=True)
class TokenInfo:
    """What a verified access token grants: returned by :attr:`BearerAuth.verify`.

    ``subject``
        Who the token stands for (a user or client id, the JWT ``sub``): the request's
        principal, which handlers read as :attr:`Context.principal <mcpaxle.Context.principal>`.
    ``scopes``
        The scopes granted (a list of str; kept as a tuple), e.g.
        ``claims["scope"].split()``.
    ``claims``
        Anything else handlers and middleware should know of the token (a dict of JSON values,
        e.g. ``{"tenant": claims["tid"], "roles": claims["roles"]}``): they read it as
        :attr:`Context.claims <mcpaxle.Context.claims>` and ``request.claims``.

    The core checks the values (a non-empty ``subject``, each scope a scope token of RFC 6749
    §3.3: printable ASCII without spaces, quotes or backslashes), the same rule every binding
    applies to a verifier's answer: one it refuses raises :class:`~mcpaxle.errors.UsageError`
    saying what is wrong (in ``verify``, that gets the request ``503``, and is logged).
    """

    subject: str
    scopes: Sequence[str] = ()
    claims: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _native.check_token_info({"subject": self.subject, "scopes": self.scopes, "claims": self.claims})
        object.__setattr__(self, "scopes", tuple(self.scopes))
        object.__setattr__(self, "claims", dict(self.claims))


#: Checks an access token: a :class:`TokenInfo` for a valid one, ``None`` for an invalid one
#: (``async def`` or a plain function).
TokenVerifier = Callable[[str], "TokenInfo | None | Awaitable[TokenInfo | None]"]


@dataclass(frozen=True)
class BearerAuth:
    """How :meth:`Server.start_http <mcpaxle.Server.start_http>` (``serve_http``,
    ``run("http")``) protects its endpoint: every request must carry ``Authorization: Bearer
    <token>`` that ``verify`` accepts (see the module's documentation for what the server does
    with it).

    ``resource``
        The canonical URL of this MCP server (``https://mcp.example.com/mcp``): the metadata's
        ``resource``, the audience tokens must be issued for, and the origin the challenges'
        ``resource_metadata`` URL is built on.
    ``authorization_servers``
        The issuers of the authorization servers that issue tokens for it (at least one).
    ``verify``
        ``(token: str) -> TokenInfo | None``: a :class:`TokenInfo` for a valid token, ``None``
        for an invalid or expired one (``401 invalid_token``). An ``async def`` runs on the
        event loop that serves the server; a plain function on the thread pool of plain
        ``def`` handlers. If it raises (say, the introspection endpoint is down) or returns
        anything else, the request gets ``503`` and the problem is logged (``logging`` logger
        "mcpaxle", with the traceback). Leave it out to use the built-in verifiers (``jwt``,
        ``introspection``); give one or the other.
    ``jwt``
        The built-in check of JWT access tokens (RFC 9068) against the issuer's keys:
        ``{}`` for the defaults, or any of ``issuer`` (default the first authorization
        server), ``jwks_uri`` (default from the issuer's metadata), ``audience`` (default
        ``[resource]``), ``algorithms`` (default the RSA, RSA-PSS, ECDSA and EdDSA ones; never
        ``none`` or HMAC), ``leeway_ms`` (60000), ``jwks_cache_ms`` (3600000). Keys are fetched
        again when a token names an unknown key id (a rotation), at most every 30 s.
    ``introspection``
        The built-in check at the issuer's introspection endpoint (RFC 7662):
        ``{"client_id": ..., "client_secret": ...}``, optionally ``endpoint`` (default from the
        issuer's metadata) and ``cache_ms`` (60000; never past the token's ``exp``). With
        ``jwt`` too, JWT-shaped tokens are checked as JWTs and others introspected.
    ``required_scopes``
        Scopes every request needs (``403 insufficient_scope`` without them); also published
        as ``scopes_supported`` unless that is set.
    ``scopes_supported``
        The metadata's ``scopes_supported``: the scopes a client asks for by default.
    ``tool_scopes``
        Scopes a ``tools/call`` of a given tool needs besides the required ones:
        ``{"write_note": ["notes:write"]}``.

    The core checks the values when it is built, by the rules of every binding (``resource`` an
    absolute http(s) URL without a fragment, at least one issuer URL, each scope a scope token
    of RFC 6749 §3.3): one it refuses raises :class:`~mcpaxle.errors.UsageError` naming the
    option (``BearerAuth: required_scopes[0]: a scope must be ...``).
    """

    resource: str
    authorization_servers: Sequence[str]
    verify: TokenVerifier | None = field(default=None, repr=False)
    required_scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    tool_scopes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    jwt: Mapping[str, Any] | None = None
    introspection: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.verify is not None and not callable(self.verify):
            raise UsageError(f"BearerAuth verify must be a callable (token: str) -> TokenInfo | None, not {type(self.verify).__name__}")
        _native.check_options("bearerAuth", "BearerAuth", self._data())
        # Checked: kept as tuples, so that the frozen value cannot change under the server.
        object.__setattr__(self, "authorization_servers", tuple(self.authorization_servers))
        object.__setattr__(self, "required_scopes", tuple(self.required_scopes))
        if self.scopes_supported is not None:
            object.__setattr__(self, "scopes_supported", tuple(self.scopes_supported))
        object.__setattr__(self, "tool_scopes", {k: tuple(v) for k, v in self.tool_scopes.items()})

    def _data(self) -> dict[str, Any]:
        """The options the core reads, by their Python names, as given."""
        return {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "required_scopes": self.required_scopes,
            "tool_scopes": self.tool_scopes,
            "jwt": self.jwt,
            "introspection": self.introspection,
        }

    def _native(self, pool: Pool) -> dict[str, Any]:
        """The ``auth`` option of the native module; plain-function verifiers run on ``pool``."""
        verify = None if self.verify is None else _verifier(self.verify, pool)
        return {**self._data(), "verify": verify}


def _verifier(fn: TokenVerifier, pool: Pool) -> Callable[[str], Awaitable[dict[str, Any] | None]]:
    """``fn`` as the coroutine function the native verifier calls on the serving loop: a
    plain function run on ``pool``, its answer checked and turned into a dict (``None`` kept),
    anything it raises logged and turned into an :class:`~mcpaxle.errors.InternalError` (the
    request gets 503)."""
    what = f"the token verifier {getattr(fn, '__qualname__', type(fn).__name__)}"
    sync = not is_async(fn)

    async def invoke(token: str) -> dict[str, Any] | None:
        try:
            if sync:
                info = await pool.run(what, functools.partial(fn, token))
            else:
                info = fn(token)
            if inspect.isawaitable(info):
                info = await info
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - SystemExit and the like fail this request only
            logger.error("%s raised %s; the request gets 503", what, type(e).__name__, exc_info=e)
            raise InternalError(f"Internal error in {what}") from None
        if info is None:
            return None
        if not isinstance(info, TokenInfo):
            logger.error("%s returned %s; it must return a TokenInfo, or None for an invalid token. The request gets 503", what, type(info).__name__)
            raise InternalError(f"Internal error in {what}: it returned {type(info).__name__}, not a TokenInfo or None")
        return {"subject": info.subject, "scopes": list(info.scopes), "claims": dict(info.claims)}

    return invoke

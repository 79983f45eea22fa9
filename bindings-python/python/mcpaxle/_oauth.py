"""OAuth 2.1 for a client of a Streamable HTTP server that requires authorization.

>>> async def authorize(authorization_url: str) -> str:  # doctest: +SKIP
...     # Open authorization_url in the user's browser, wait for the redirect to the
...     # redirect_uri, and return the URL it came to (with its code and state).
...     ...
>>> oauth = OAuth(redirect_uri="http://127.0.0.1:8765/callback", authorize=authorize)
>>> # client = await Client.connect_http(url, oauth=oauth)

The core runs the flow the MCP authorization spec describes (discovery, client registration,
PKCE, the token request, refresh, step-up on ``insufficient_scope``); this module only
describes it and carries the user-agent step, which is the application's.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Protocol

from . import _native
from .errors import McpError, TransportError, UsageError

__all__ = ["AuthorizeCallback", "OAuth", "TokenStore"]

#: The user-agent step: takes the authorization URL, returns the redirect URL (sync or async).
AuthorizeCallback = Callable[[str], "str | Awaitable[str]"]


class TokenStore(Protocol):
    """A token store of the application's own (a keychain, a secrets manager), for
    ``OAuth(token_store=...)``. ``key`` is a dict ``{"issuer", "resource", "client"}``; ``token``
    a dict (``accessToken``, ``expiresAt``, ``refreshToken``, ``scopes``, ``registration``) to
    keep as it is and give back from ``load``. Each method may be a plain function or an ``async
    def``; what one raises fails the call that needed the token."""

    def load(self, key: dict[str, str]) -> "dict[str, Any] | None | Awaitable[dict[str, Any] | None]":
        """The token saved under ``key``, or ``None``."""
        ...

    def save(self, key: dict[str, str], token: dict[str, Any]) -> "None | Awaitable[None]":
        """Keeps ``token`` under ``key`` (replacing what was there)."""
        ...

    def clear(self, key: dict[str, str]) -> "None | Awaitable[None]":
        """Forgets what is under ``key``."""
        ...


@dataclass(frozen=True)
class OAuth:
    """How :meth:`Client.connect_http <mcpaxle.Client.connect_http>` obtains access tokens
    from a server that answers ``401``. Nothing happens until the server asks for
    authorization; tokens and client registrations live in memory, per client, unless
    ``token_store`` says otherwise.

    ``redirect_uri``
        Where the authorization server sends the user back (a loopback URL for a native
        application, e.g. ``http://127.0.0.1:8765/callback``); required for the
        authorization code grant.
    ``grant_type``
        ``"authorization_code"`` (the default: a user approves the client in a browser) or
        ``"client_credentials"``: a machine client (an agent, a CI job) authenticates as
        itself with ``client_id`` and ``client_secret`` (``client_secret_basic`` or
        ``client_secret_post``, as the authorization server lists) or ``private_key_pem``
        (``private_key_jwt``, RFC 7523), and no user takes part.
    ``authorize``
        The user-agent step: called with the authorization URL (carrying ``code_challenge``,
        ``state`` and ``resource``), it returns the URL the authorization server redirected
        to (the ``redirect_uri`` with ``code``, ``state`` and maybe ``iss`` in its query). An
        ``async def`` or a plain function; it runs on the event loop that made the client, so
        do blocking work (waiting for the browser) in an ``async def``, e.g. with
        ``asyncio.to_thread``. What it raises fails the call that needed authorization: an
        :class:`~mcpaxle.errors.McpError` as it is, anything else as a
        :class:`~mcpaxle.errors.TransportError` with the same message. ``None``: the
        authorization URL is fetched and the authorization server's redirect taken as the
        answer, without a user (servers that approve at once: tests, pre-approved machine
        clients).
    ``client_id``, ``client_secret``, ``issuer``
        Credentials registered beforehand (``client_secret`` for a confidential client), used
        before any other way of getting a client id; ``issuer`` limits them to that
        authorization server (``None``: whichever the resource names).
    ``private_key_pem``, ``signing_algorithm``
        Instead of ``client_secret``: the client's PEM private key, with which it signs a
        short-lived JWT to authenticate at the token endpoint (``private_key_jwt``), and the
        JWS algorithm (default ``RS256``; ``ES256``, ``PS256``, ``EdDSA``, ...).
    ``client_metadata_url``
        The HTTPS URL of this client's Client ID Metadata Document, used as the client id
        where the authorization server takes one; otherwise the client registers itself
        (Dynamic Client Registration).
    ``client_name``
        The ``client_name`` it registers with (default: the client's name).
    ``max_authorizations``
        How many authorization flows one request may start before its error is returned (at
        least 1).
    ``token_store``
        Where tokens are kept: ``None`` or ``"memory"`` (in memory, for as long as the client),
        or ``{"file": "/path/tokens.json"}``: a JSON file (mode 0600, replaced atomically) that
        a restarted client reads, so it uses the stored token, or refreshes it, without asking
        the user again or registering again. A token the server rejects is dropped from it. A
        file that is not a token store is an error naming it, never overwritten. Or an object
        of the application's own with ``load``, ``save`` and ``clear`` (:class:`TokenStore`).

    The core checks the values when it is built, by the rules of every binding
    (``redirect_uri`` an absolute URI without a fragment, ``issuer`` an issuer URL,
    ``client_metadata_url`` an https URL, ...): one it refuses raises
    :class:`~mcpaxle.errors.UsageError` naming the option (``OAuth: redirect_uri: must be
    ...``).
    """

    redirect_uri: str | None = None
    authorize: AuthorizeCallback | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    issuer: str | None = None
    grant_type: Literal["authorization_code", "client_credentials"] = "authorization_code"
    private_key_pem: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    client_metadata_url: str | None = None
    client_name: str | None = None
    max_authorizations: int = 3
    token_store: str | dict[str, str] | TokenStore | None = None

    def __post_init__(self) -> None:
        if self.authorize is not None and not callable(self.authorize):
            raise UsageError(
                f"OAuth authorize must be a callable (authorization_url: str) -> redirect_url: str, or None; "
                f"got {type(self.authorize).__name__}"
            )
        _native.check_options("oauth", "OAuth", self._data())

    def _host_store(self) -> bool:
        """Whether ``token_store`` is the application's own object (not data for the core)."""
        s = self.token_store
        return not isinstance(s, (str, dict, type(None))) and all(callable(getattr(s, m, None)) for m in ("load", "save", "clear"))

    def _data(self) -> dict[str, Any]:
        """The options the core reads, by their Python names, as given (``None``: absent)."""
        names = (
            "grant_type", "redirect_uri", "client_id", "client_secret", "private_key_pem", "signing_algorithm", "issuer",
            "client_metadata_url", "client_name", "max_authorizations", "token_store",
        )
        data = {name: getattr(self, name) for name in names}
        if self._host_store():
            data["token_store"] = None
        return data

    def _native(self) -> dict[str, Any]:
        """The options dict of the native module."""
        o = {k: v for k, v in self._data().items() if v is not None}
        if self.authorize is not None:
            o["authorize"] = _authorize(self.authorize)
        if self._host_store():
            o["token_store_callback"] = _token_store(self.token_store)
        return o


def _authorize(fn: AuthorizeCallback) -> Callable[[str], Awaitable[str]]:
    """``fn`` as the coroutine function the bridge calls: its message kept when it fails, its
    answer checked to be a str."""

    async def invoke(authorization_url: str) -> str:
        try:
            redirect = fn(authorization_url)
            if inspect.isawaitable(redirect):
                redirect = await redirect
        except McpError:
            raise
        except Exception as e:
            raise TransportError(str(e) or type(e).__name__) from e
        if not isinstance(redirect, str):
            raise UsageError(f"the OAuth authorize callback must return the redirect URL as a str, not {type(redirect).__name__}")
        return redirect

    return invoke


def _token_store(store: Any) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """A :class:`TokenStore` object as the one coroutine function the core calls with each
    operation (``{"op": "load" | "save" | "clear", "key": ..., "token": ...}``)."""

    async def invoke(request: dict[str, Any]) -> Any:
        op = request["op"]
        try:
            if op == "load":
                answer = store.load(request["key"])
            elif op == "save":
                answer = store.save(request["key"], request["token"])
            else:
                answer = store.clear(request["key"])
            if inspect.isawaitable(answer):
                answer = await answer
        except McpError:
            raise
        except Exception as e:
            raise TransportError(f"the token store's {op} failed: {e or type(e).__name__}") from e
        return answer if op == "load" else None

    return invoke

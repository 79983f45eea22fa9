//! OAuth 2.1 for Streamable HTTP, as the MCP authorization spec has clients do it.
//!
//! With [`OAuthOptions`] in [`ClientOptions::oauth`](super::ClientOptions::oauth), a `401`
//! from the MCP server starts the flow: protected resource metadata (from the challenge's
//! `resource_metadata`, else the well-known URLs), checked to name this server; the
//! authorization server's metadata (OAuth, then OpenID Connect, path-inserted forms first),
//! checked to name the issuer it was fetched for and to support PKCE S256; a client id
//! (pre-registered, else a Client ID Metadata Document URL when the server takes one, else
//! Dynamic Client Registration); the authorization request with PKCE, `state` and `resource`;
//! the user-agent step, which is the host's ([`OAuthOptions::new`]); the authorization
//! response checked (`state`, and `iss` per RFC 9207 before anything else is read); the token
//! request. Then the request that was refused is sent again with `Authorization: Bearer`.
//!
//! Later: a request's first `401` uses the refresh token when there is one, else starts over
//! (re-discovering, so a resource that moved to another authorization server is followed, with
//! a registration of its own), as does a `401` on the token a refresh just gave that request
//! (a `401` on the token a flow just gave it is that request's error);
//! a `403` with `error="insufficient_scope"` re-authorizes with the challenged scopes added to
//! those held (step-up). One request triggers at most
//! [`OAuthOptions::max_authorizations`] flows, and at most one for a rejected token: a server
//! that rejects every token costs one token request per request, never a loop.
//!
//! Tokens live in a [`TokenStore`] keyed by issuer, resource and client: in memory, per client
//! (the default), or in a file ([`FileTokenStore`]) that a restarted client reads. A stored
//! token that has not expired is used at the first `401` (after discovery, without a token
//! request); an expired one is refreshed; a rotated refresh token replaces the old one; a token
//! the server rejects is dropped from the store; a refresh token refused with `invalid_grant`
//! is dropped too, and the client authorizes again. A client that registered itself keeps that
//! registration in the store, so it does not register again.
//!
//! A machine client (an agent, a CI job: no user, no browser) uses the client credentials
//! grant instead ([`OAuthOptions::client_credentials`], the MCP extension
//! `io.modelcontextprotocol/oauth-client-credentials`): the same discovery, then a token
//! request with its pre-registered credentials, authenticated with its secret
//! (`client_secret_basic` or `client_secret_post`, as the server lists) or with a JWT signed by
//! its private key (`private_key_jwt`, RFC 7523, [`PrivateKey`]).

mod assertion;
mod flow;
mod metadata;
mod options;
mod store;

pub use assertion::PrivateKey;
pub(crate) use flow::{Attempt, Authorizer};
pub use options::{AuthorizationHandler, Grant, OAuthOptions, PreRegisteredClient};
pub use store::{
    CallbackTokenStore, FileTokenStore, MemoryTokenStore, StoredClient, StoredToken, TokenKey, TokenStore,
    TokenStoreCallback,
};

//! `mcpaxle_server_set_bearer_auth`: a server's Streamable HTTP endpoint as an OAuth 2.1
//! resource server, with the token check as a C callback that finishes through a reply
//! handle.

use crate::calls::{self, Kind, Payload, Target, mcpaxle_reply};
use crate::ffi::{SendPtr, arg_json, ffi_boundary, from_json, mcpaxle_result};
use crate::owner::Owner;
use crate::server::{mcpaxle_server, server_ref};
use mcpaxle_core::Error;
use mcpaxle_core::transport::auth::{BearerAuth, TokenVerifier};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// Checks a bearer access token presented to the server's HTTP endpoint, once per request that
/// carries one. Complete `reply` exactly once, now or later, from any thread, with
/// `mcpaxle_reply_ok`:
///
/// - `{"subject": "alice", "scopes": ["notes:read"]}` for a valid token (its signature, expiry,
///   and that it was issued for this resource, its audience): `subject` becomes the request's
///   principal (`"principal"` of `mcpaxle_context_info`), `scopes` (default none) are checked
///   against the required and per-tool scopes;
/// - `null` for an invalid or expired token: the request gets `401` `invalid_token`.
///
/// Complete with `mcpaxle_reply_error` (any error kind) when the token cannot be checked
/// right now (the introspection endpoint is down): the request gets `503`. So does an answer
/// that breaks the core's rules for it (not of the shape above, an unknown member such as a
/// JWT's `"scope"`, an empty `subject`, a scope that is not a scope token of RFC 6749 §3.3):
/// `mcpaxle_reply_ok` then returns `MCPAXLE_ERR_USAGE` with a message saying what is
/// wrong. `token` is borrowed for the duration of the callback.
///
/// Thread: a thread of the library's handler pool (blocking is allowed, e.g. an introspection
/// request); the HTTP request waits for the reply, so reply promptly and cache
/// expensive checks.
pub type mcpaxle_token_verifier =
    Option<unsafe extern "C" fn(user_data: *mut c_void, token: *const c_char, reply: *mut mcpaxle_reply)>;

type VerifyFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut mcpaxle_reply);

/// Protects the Streamable HTTP endpoint of every HTTP transport started afterwards
/// (`mcpaxle_server_serve_http`, `mcpaxle_http_server_start`) with OAuth bearer tokens checked
/// by `verify`. The endpoint then publishes its protected resource metadata (RFC 9728) at
/// `/.well-known/oauth-protected-resource<path>` (`/.well-known/oauth-protected-resource/mcp`
/// for the default path), and every request must carry `Authorization: Bearer <token>`:
/// without one, or with one `verify` rejects, it gets `401` with a `WWW-Authenticate`
/// challenge naming the metadata (`resource_metadata="…"`), which starts a client's
/// authorization flow; with a token lacking the scopes needed, `403` `insufficient_scope`
/// (step-up). The token's subject is the request's principal, seen by handlers in
/// `mcpaxle_context_info` and bound into MRTR `requestState`.
///
/// `auth_json` is an object: `"resource"` (required: this server's canonical URI,
/// `"https://mcp.example.com/mcp"`, the audience its tokens are issued for; the challenge's
/// metadata URL is its origin with the well-known path), `"authorizationServers"` (required:
/// the issuer URLs of the authorization servers that issue them), and optionally
/// `"requiredScopes"` (scopes every request needs), `"scopesSupported"` (published in the
/// metadata; default the required scopes) and `"toolScopes"` (`{"tool name": ["scope", ...]}`:
/// scopes a `tools/call` of that tool needs besides the required ones). Invalid JSON is
/// `MCPAXLE_ERR_INVALID_JSON`; a missing required member, a member of the wrong type, an
/// unknown member, or a value the core refuses is `MCPAXLE_ERR_USAGE`, its message
/// naming the member (`auth_json: requiredScopes[0]: a scope must be …`). The core's rules:
/// `resource` an absolute http(s) URL without a fragment; at least one authorization server,
/// each an issuer URL (absolute http(s), no query or fragment); every scope a scope token
/// (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes); tool names not
/// empty.
///
/// `verify` may be NULL when `auth_json` sets `"jwt"` and/or `"introspection"`: the core's
/// built-in verifiers then check the tokens. `"jwt"` (`{}` for the defaults) checks JWT access
/// tokens (RFC 9068) against the issuer's keys: `"issuer"` (default the first authorization
/// server), `"jwksUri"` (default from the issuer's metadata), `"audience"` (default
/// `[resource]`), `"algorithms"` (default the RSA, RSA-PSS, ECDSA and EdDSA ones; never `none`
/// or HMAC), `"leewayMs"` (60000), `"jwksCacheMs"` (3600000); keys are fetched again when a
/// token names an unknown key id, at most every 30 s. `"introspection"` checks tokens at the
/// issuer's introspection endpoint (RFC 7662): `"clientId"`, `"clientSecret"`, `"endpoint"`
/// (default from the metadata), `"cacheMs"` (60000, never past the token's `exp`). Giving both
/// a `verify` and one of these, or neither, is `MCPAXLE_ERR_USAGE`.
///
/// Setting it again replaces the earlier setting for the transports started afterwards; those
/// already running keep theirs. stdio transports are not affected (they have no HTTP requests).
/// `user_data` must stay valid until `mcpaxle_server_free` returns (no callback runs after it
/// returns). Ownership: `auth_json` is borrowed. Thread: any.
///
/// ```c
/// mcpaxle_server_set_bearer_auth(server,
///     "{\"resource\":\"https://mcp.example.com/mcp\","
///     "\"authorizationServers\":[\"https://auth.example.com\"],"
///     "\"requiredScopes\":[\"notes:read\"],\"toolScopes\":{\"write_note\":[\"notes:write\"]}}",
///     check_token, app);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_server_set_bearer_auth(
    server: *mut mcpaxle_server,
    auth_json: *const c_char,
    verify: mcpaxle_token_verifier,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        // SAFETY: per the documented contract.
        let (s, json) = unsafe { (server_ref(server)?, arg_json(auth_json, "auth_json")?) };
        let mut auth: BearerAuth = from_json(json, "auth_json")?;
        let callback = verify.map(|func| token_verifier(&s.owner, Target { func, user_data: SendPtr(user_data) }));
        auth.use_verifier(callback)?;
        *s.auth.lock().unwrap_or_else(|e| e.into_inner()) = Some(auth);
        Ok(())
    })
}

fn token_verifier(owner: &Arc<Owner>, target: Target<VerifyFn>) -> TokenVerifier {
    let owner = owner.clone();
    Arc::new(move |token: String| {
        let owner = owner.clone();
        Box::pin(async move {
            let payload = calls::invoke(&owner, Kind::Token, None, token, move |id, token| {
                // SAFETY: the function pointer and user data were registered together.
                unsafe { (target.func)(target.user_data.get(), token, id as *mut mcpaxle_reply) }
            })
            .await?;
            match payload {
                Payload::Token(info) => Ok(info),
                _ => Err(Error::internal("the token verifier completed with a result of another kind")),
            }
        })
    })
}

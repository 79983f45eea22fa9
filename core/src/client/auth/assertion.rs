//! `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): the client authenticates at the
//! token endpoint with a short-lived JWT it signs with its own private key, instead of a
//! shared secret.

use crate::error::Result;
use crate::transport::http::oauth_wire as wire;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};
use wire::auth_error;

/// The `client_assertion_type` of a JWT assertion.
pub(super) const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid (RFC 7523 §3: "the JWT MUST contain an exp claim"; short).
const LIFETIME_SECS: u64 = 300;

/// A client's signing key: a PEM private key (PKCS#8, or PKCS#1 for RSA) and the JWS
/// algorithm it signs with.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKey {
    /// The PEM text of the private key.
    pub pem: String,
    /// The JWS algorithm (`RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`, `ES256`,
    /// `ES384`, `EdDSA`).
    pub algorithm: String,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKey").field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

impl PrivateKey {
    /// The algorithm and the key it reads, or what is wrong with them.
    pub(super) fn encoding_key(&self) -> std::result::Result<(Algorithm, EncodingKey), String> {
        let algorithm = Algorithm::from_str(&self.algorithm)
            .ok()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .ok_or_else(|| {
                format!(
                    "{:?} is not an asymmetric JWS algorithm (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)",
                    self.algorithm
                )
            })?;
        let pem = self.pem.as_bytes();
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
            _ => EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|e| format!("not a PEM private key for {}: {e}", self.algorithm))?;
        Ok((algorithm, key))
    }

    /// A signed assertion of `client_id` for the authorization server `audience` (its issuer).
    pub(super) fn assertion(&self, client_id: &str, audience: &str) -> Result<String> {
        let (algorithm, key) = self.encoding_key().map_err(|e| auth_error(format!("privateKeyPem: {e}")))?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": wire::random_token(16)?,
        });
        jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
            .map_err(|e| auth_error(format!("signing the client assertion failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 key (PKCS#8), made for this test only.
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqJSlnuAd9zi5F3F8
ZUe1q53i6azC+py44BrIchbLcYWhRANCAAQMyYfK8JJF0IVp+xL8uiSPQqYiD5cw
RUhmUr2ecnUWmScd03P3V7jalyhhTJS9kxyCZEATtTK/+52stKzO06WT
-----END PRIVATE KEY-----";

    #[test]
    fn an_assertion_names_the_client_and_the_server_and_expires_soon() {
        let key = PrivateKey { pem: EC_KEY.into(), algorithm: "ES256".into() };
        let jwt = key.assertion("client-1", "https://auth.example.com").unwrap();
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        use base64::Engine as _;
        let payload = jwt.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!((claims["iss"].as_str(), claims["sub"].as_str()), (Some("client-1"), Some("client-1")));
        assert_eq!(claims["aud"], "https://auth.example.com");
        assert_eq!(claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(), LIFETIME_SECS);
        assert_ne!(jwt, key.assertion("client-1", "https://auth.example.com").unwrap(), "a fresh jti each time");
    }

    #[test]
    fn a_bad_algorithm_or_key_says_what_is_wrong() {
        let e = PrivateKey { pem: EC_KEY.into(), algorithm: "HS256".into() }.encoding_key().err().unwrap();
        assert!(e.contains("not an asymmetric JWS algorithm"), "{e}");
        let e = PrivateKey { pem: "nope".into(), algorithm: "RS256".into() }.encoding_key().err().unwrap();
        assert!(e.starts_with("not a PEM private key for RS256"), "{e}");
    }
}

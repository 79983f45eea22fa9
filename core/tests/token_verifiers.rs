//! The built-in token verifiers of bearer auth (`jwt`, `introspection`) against an issuer served
//! on loopback by the test: metadata discovery, JWKS fetched once and again on a key rotation
//! (not on every unknown key id), the RFC 9068 checks (issuer, audience, expiry, algorithm,
//! signature), introspection with its cache bounded by the token's expiry, and an issuer that
//! cannot be reached (the request would get 503, never pass).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcpaxle::options::from_json;
use mcpaxle::transport::auth::{BearerAuth, TokenInfo};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// Two P-256 keys (PKCS#8 DER) and the coordinates of their public halves, made for this test.
const KEY_A: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjsT5z0mZlfnXFdNmS5eWKSCrdsWr0kWZk3a07MkFKqmhRANCAAS9AeP4T6zk0h5yfYityfS/zjUntE7HVRoIEUbs5Xrdrw+cZduNMlCV/5nXYVwKoDwBz7Mk+x631eKvGm/7JfwS";
const PUB_A: (&str, &str) =
    ("vQHj-E-s5NIecn2Ircn0v841J7ROx1UaCBFG7OV63a8", "D5xl240yUJX_mddhXAqgPAHPsyT7HrfV4q8ab_sl_BI");
const KEY_B: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsPcR3iatmYgN6zB8RgLWVtnLaIWjPjNsefN9e+DaCTmhRANCAAQMyiCxIUrPIfK1sO8Jnm+Mb4g/9eHtTuGPh6BSDwzauOBJ9ql8mt2pl/8RQv/reJZ5q8UM0hky9v3czFd9yyzF";
const PUB_B: (&str, &str) =
    ("DMogsSFKzyHytbDvCZ5vjG-IP_Xh7U7hj4egUg8M2rg", "4En2qXya3amX_xFC_-t4lnmrxQzSGTL2_dzMV33LLMU");

fn jwk(kid: &str, (x, y): (&str, &str)) -> Value {
    json!({ "kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "use": "sig", "alg": "ES256" })
}

/// The issuer: its metadata, its key set (which the test swaps to rotate keys) and an
/// introspection endpoint answering from a table of tokens; counts what it is asked.
struct Issuer {
    url: String,
    keys: Mutex<Value>,
    introspection: Mutex<Vec<(String, Value)>>,
    introspection_down: std::sync::atomic::AtomicBool,
    /// How long the key set takes to come (ms): an issuer that hangs.
    jwks_delay_ms: std::sync::atomic::AtomicU64,
    jwks_fetches: AtomicUsize,
    introspections: AtomicUsize,
    credentials: Mutex<Vec<String>>,
}

async fn issuer() -> Arc<Issuer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let issuer = Arc::new(Issuer {
        url,
        keys: Mutex::new(json!({ "keys": [jwk("a", PUB_A)] })),
        introspection: Mutex::new(Vec::new()),
        introspection_down: false.into(),
        jwks_delay_ms: 0.into(),
        jwks_fetches: AtomicUsize::new(0),
        introspections: AtomicUsize::new(0),
        credentials: Mutex::new(Vec::new()),
    });
    let served = issuer.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let issuer = served.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(issuer.clone(), req));
                let _ = Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    issuer
}

async fn answer(
    issuer: Arc<Issuer>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let path = req.uri().path().to_owned();
    if let Some(basic) = req.headers().get("authorization") {
        issuer.credentials.lock().unwrap().push(basic.to_str().unwrap().to_owned());
    }
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let (status, doc) = match path.as_str() {
        "/.well-known/oauth-authorization-server" => (
            StatusCode::OK,
            json!({
                "issuer": issuer.url,
                "jwks_uri": format!("{}/jwks", issuer.url),
                "introspection_endpoint": format!("{}/introspect", issuer.url),
            }),
        ),
        "/jwks" => {
            issuer.jwks_fetches.fetch_add(1, Ordering::SeqCst);
            let delay = issuer.jwks_delay_ms.load(Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            (StatusCode::OK, issuer.keys.lock().unwrap().clone())
        }
        "/introspect" => {
            issuer.introspections.fetch_add(1, Ordering::SeqCst);
            if issuer.introspection_down.load(Ordering::SeqCst) {
                (StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": "server_error", "error_description": "down" }))
            } else {
                let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
                let token = form.iter().find(|(k, _)| k == "token").map(|(_, v)| v.clone()).unwrap_or_default();
                let known =
                    issuer.introspection.lock().unwrap().iter().find(|(t, _)| *t == token).map(|(_, a)| a.clone());
                (StatusCode::OK, known.unwrap_or_else(|| json!({ "active": false })))
            }
        }
        _ => (StatusCode::NOT_FOUND, json!({})),
    };
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(doc.to_string())))
        .unwrap())
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

fn sign(key: &str, kid: Option<&str>, claims: Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".into());
    header.kid = kid.map(str::to_owned);
    let der = STANDARD.decode(key).unwrap();
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&der)).unwrap()
}

fn claims(issuer: &Issuer) -> Value {
    json!({
        "iss": issuer.url, "aud": RESOURCE, "sub": "alice", "exp": now() + 300,
        "scope": "notes:read notes:write", "tenant": "acme",
    })
}

fn with(mut base: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

fn auth(issuer: &Issuer, extra: Value) -> BearerAuth {
    let doc = with(json!({ "resource": RESOURCE, "authorizationServers": [issuer.url] }), extra);
    from_json("auth", doc).unwrap()
}

#[tokio::test]
async fn jwt_access_tokens_are_checked_against_the_issuers_keys() {
    let issuer = issuer().await;
    let auth = auth(&issuer, json!({ "jwt": {} }));
    let good = auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().expect("a valid token");
    assert_eq!(good.subject, "alice");
    assert_eq!(good.scopes, ["notes:read", "notes:write"]);
    assert_eq!(good.claims["tenant"], "acme");
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), 1);

    let base = claims(&issuer);
    let refused = [
        ("another audience", sign(KEY_A, Some("a"), with(base.clone(), json!({ "aud": "https://other/mcp" })))),
        ("another issuer", sign(KEY_A, Some("a"), with(base.clone(), json!({ "iss": "https://evil.example" })))),
        ("expired past the leeway", sign(KEY_A, Some("a"), with(base.clone(), json!({ "exp": now() - 120 })))),
        ("not yet valid", sign(KEY_A, Some("a"), with(base.clone(), json!({ "nbf": now() + 600 })))),
        ("an exp that is not a number", sign(KEY_A, Some("a"), with(base.clone(), json!({ "exp": "99999999999" })))),
        ("no subject", sign(KEY_A, Some("a"), with(base.clone(), json!({ "sub": null })))),
        ("no expiry", sign(KEY_A, Some("a"), with(base.clone(), json!({ "exp": null })))),
        ("signed by a key the issuer does not hold", sign(KEY_B, Some("a"), base.clone())),
        ("not a JWT", "opaque-token".to_owned()),
    ];
    for (what, token) in refused {
        assert_eq!(auth.verify(token).await.unwrap(), None, "{what}");
    }
    // A tampered payload, and the same claims with `alg: none` or an HMAC made with the public
    // key's text as the secret (the classic key confusion).
    let token = sign(KEY_A, Some("a"), base.clone());
    let parts: Vec<&str> = token.split('.').collect();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let forged = b64.encode(with(base.clone(), json!({ "sub": "mallory" })).to_string());
    assert_eq!(auth.verify(format!("{}.{forged}.{}", parts[0], parts[2])).await.unwrap(), None, "tampered");
    let none = b64.encode(json!({ "alg": "none", "typ": "at+jwt", "kid": "a" }).to_string());
    assert_eq!(auth.verify(format!("{none}.{}.", parts[1])).await.unwrap(), None, "alg none");
    let hmac = jsonwebtoken::encode(
        &Header { kid: Some("a".into()), ..Header::new(Algorithm::HS256) },
        &base,
        &EncodingKey::from_secret(jwk("a", PUB_A).to_string().as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(auth.verify(hmac).await.unwrap(), None, "HS256 with the public key as secret");
    // An ID token (typ JWT is accepted, another typ is not).
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("a".into());
    header.typ = Some("dpop+jwt".into());
    let der = STANDARD.decode(KEY_A).unwrap();
    let other_typ = jsonwebtoken::encode(&header, &base, &EncodingKey::from_ec_der(&der)).unwrap();
    assert_eq!(auth.verify(other_typ).await.unwrap(), None, "typ dpop+jwt");
    // Within the leeway an expired token still passes.
    let late = sign(KEY_A, Some("a"), with(base, json!({ "exp": now() - 10 })));
    assert!(auth.verify(late).await.unwrap().is_some(), "10 s past exp, within the 60 s leeway");
    // None of these made the verifier fetch the keys again (they name a key it holds).
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_key_rotation_is_picked_up_without_a_restart_and_unknown_keys_cannot_hammer_the_issuer() {
    let issuer = issuer().await;
    let auth = auth(&issuer, json!({ "jwt": {} }));
    assert!(auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().is_some());
    // The issuer rotates to key b; a token signed with it names a kid the verifier lacks.
    *issuer.keys.lock().unwrap() = json!({ "keys": [jwk("b", PUB_B)] });
    let rotated = auth.verify(sign(KEY_B, Some("b"), claims(&issuer))).await.unwrap();
    assert_eq!(rotated.map(|i| i.subject).as_deref(), Some("alice"));
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), 2);
    // Tokens naming made-up keys right after: refused without asking the issuer again.
    for kid in ["x", "y", "z"] {
        assert_eq!(auth.verify(sign(KEY_A, Some(kid), claims(&issuer))).await.unwrap(), None);
    }
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), 2);
    // Key a left the set: its tokens are refused now.
    assert_eq!(auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap(), None);
}

#[tokio::test]
async fn an_unreachable_issuer_cannot_decide_and_never_lets_a_token_through() {
    let issuer = issuer().await;
    let down = "http://127.0.0.1:9";
    let auth: BearerAuth =
        from_json("auth", json!({ "resource": RESOURCE, "authorizationServers": [down], "jwt": {} })).unwrap();
    let e = auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap_err();
    assert!(e.message().contains("127.0.0.1:9"), "{e}");
    // A jwksUri given explicitly skips discovery.
    let direct = auth_direct(&issuer);
    assert!(direct.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().is_some());
}

fn auth_direct(issuer: &Issuer) -> BearerAuth {
    let jwt = json!({ "issuer": issuer.url, "jwksUri": format!("{}/jwks", issuer.url) });
    from_json("auth", json!({ "resource": RESOURCE, "authorizationServers": ["http://127.0.0.1:9"], "jwt": jwt }))
        .unwrap()
}

#[tokio::test]
async fn opaque_tokens_are_introspected_and_the_answer_reused_until_it_expires() {
    let issuer = issuer().await;
    let exp = now() + 300;
    issuer.introspection.lock().unwrap().extend([
        ("live".to_owned(), json!({ "active": true, "sub": "bob", "scope": "notes:read", "aud": RESOURCE, "exp": exp, "iss": issuer.url })),
        ("service".to_owned(), json!({ "active": true, "client_id": "ci-job", "scope": "notes:read" })),
        ("elsewhere".to_owned(), json!({ "active": true, "sub": "bob", "aud": ["https://other/mcp"] })),
        ("expired".to_owned(), json!({ "active": true, "sub": "bob", "exp": now() - 1 })),
    ]);
    let introspection = json!({ "clientId": "mcp-server", "clientSecret": "s3cret" });
    let auth = auth(&issuer, json!({ "introspection": introspection, "jwt": {} }));
    let live = auth.verify("live".into()).await.unwrap().expect("an active token");
    assert_eq!((live.subject.as_str(), live.scopes.clone()), ("bob", vec!["notes:read".to_owned()]));
    assert_eq!(auth.verify("live".into()).await.unwrap(), Some(live));
    assert_eq!(issuer.introspections.load(Ordering::SeqCst), 1, "the second check used the cache");
    let basic = format!("Basic {}", STANDARD.encode("mcp-server:s3cret"));
    assert_eq!(issuer.credentials.lock().unwrap().first(), Some(&basic));

    let service = auth.verify("service".into()).await.unwrap().expect("a client credentials token");
    assert_eq!(
        service,
        TokenInfo::new("ci-job", ["notes:read"]).with_claims(json!({
            "active": true, "client_id": "ci-job", "scope": "notes:read"
        }))
    );
    for token in ["elsewhere", "expired", "revoked"] {
        assert_eq!(auth.verify(token.into()).await.unwrap(), None, "{token}");
    }
    // Revoked at the issuer: refused once the cached answer is gone (a fresh verifier here).
    issuer.introspection.lock().unwrap().retain(|(t, _)| t != "live");
    let fresh = self::auth(&issuer, json!({ "introspection": { "clientId": "mcp-server", "clientSecret": "s3cret" } }));
    assert_eq!(fresh.verify("live".into()).await.unwrap(), None);
    // A JWT-shaped token still goes to the JWT checks when both are configured.
    let before = issuer.introspections.load(Ordering::SeqCst);
    assert!(auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().is_some());
    assert_eq!(issuer.introspections.load(Ordering::SeqCst), before);
    // The endpoint failing is not a refusal: the verifier cannot decide.
    issuer.introspection_down.store(true, Ordering::SeqCst);
    let e = fresh.verify("other".into()).await.unwrap_err();
    assert!(e.message().contains("server_error: down"), "{e}");
}

#[tokio::test]
async fn tokens_naming_held_keys_never_wait_for_a_key_set_fetch() {
    let issuer = issuer().await;
    let auth = Arc::new(auth(&issuer, json!({ "jwt": {} })));
    assert!(auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().is_some());
    // The issuer now hangs; a token naming an unknown key makes the verifier fetch the set.
    issuer.jwks_delay_ms.store(3_000, Ordering::SeqCst);
    let unknown = tokio::spawn({
        let (auth, token) = (auth.clone(), sign(KEY_B, Some("b"), claims(&issuer)));
        async move { auth.verify(token).await }
    });
    while issuer.jwks_fetches.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    for _ in 0..20 {
        assert!(auth.verify(sign(KEY_A, Some("a"), claims(&issuer))).await.unwrap().is_some());
    }
    assert!(!unknown.is_finished(), "the held key answered while the fetch for the unknown one still hung");
    assert_eq!(unknown.await.unwrap().unwrap(), None, "the fetched set has no key b");
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failing_issuer_is_asked_again_only_after_a_back_off_and_refusals_are_remembered() {
    let issuer = issuer().await;
    let auth = auth(&issuer, json!({ "introspection": { "clientId": "mcp-server", "cacheMs": 60000 } }));
    let asked = || issuer.introspections.load(Ordering::SeqCst);
    // A revoked (inactive) token replayed: the issuer is asked once.
    for _ in 0..5 {
        assert_eq!(auth.verify("revoked".into()).await.unwrap(), None);
    }
    assert_eq!(asked(), 1, "a refusal is remembered like an acceptance");
    // The endpoint fails: the next requests fail at once, without asking, until the back-off.
    issuer.introspection_down.store(true, Ordering::SeqCst);
    let e = auth.verify("t1".into()).await.unwrap_err();
    assert!(e.message().contains("server_error: down"), "{e}");
    for token in ["t2", "t3", "t4"] {
        let e = auth.verify(token.into()).await.unwrap_err();
        assert!(e.message().contains("server_error: down") && e.message().contains("not asked again"), "{e}");
    }
    assert_eq!(asked(), 2, "one request asked the failing endpoint; the others failed at once");
    issuer.introspection_down.store(false, Ordering::SeqCst);
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    issuer.introspection.lock().unwrap().push(("t5".into(), json!({ "active": true, "sub": "carol" })));
    assert_eq!(auth.verify("t5".into()).await.unwrap().map(|i| i.subject).as_deref(), Some("carol"));
    assert_eq!(asked(), 3, "asked again once the back-off had passed");
}

#[test]
fn the_built_in_options_are_checked_as_they_are_read() {
    let read = |extra: Value| {
        let doc = with(json!({ "resource": RESOURCE, "authorizationServers": ["https://as.example"] }), extra);
        from_json::<BearerAuth>("auth", doc).map(drop).map_err(|e| e.message().to_owned())
    };
    let e = read(json!({ "jwt": { "algorithms": ["RS256", "HS256"] } })).unwrap_err();
    assert!(e.contains("jwt") && e.contains("algorithms[1]: HS256 is an HMAC algorithm"), "{e}");
    let e = read(json!({ "jwt": { "algorithms": ["none"] } })).unwrap_err();
    assert!(e.contains("\"none\" is not a JWS algorithm"), "{e}");
    let e = read(json!({ "jwt": { "jwksUri": "/jwks" } })).unwrap_err();
    assert!(e.contains("jwksUri: \"/jwks\" is not an absolute http(s) URL"), "{e}");
    let e = read(json!({ "introspection": { "clientId": "" } })).unwrap_err();
    assert!(e.contains("clientId: must not be empty"), "{e}");
    let e = read(json!({ "jwt": { "leewayMs": -1 } })).unwrap_err();
    assert!(e.contains("leewayMs"), "{e}");
    assert!(read(json!({ "jwt": { "algorithms": ["ES256"], "leewayMs": 0 } })).is_ok());

    // A binding sets a callback, or relies on the built-in verifiers: one or the other.
    let mut with_jwt: BearerAuth =
        from_json("auth", json!({ "resource": RESOURCE, "authorizationServers": ["https://as.example"], "jwt": {} }))
            .unwrap();
    assert!(with_jwt.use_verifier(None).is_ok());
    let callback: mcpaxle::transport::auth::TokenVerifier = Arc::new(|_| Box::pin(async { Ok(None) }));
    let e = with_jwt.use_verifier(Some(callback.clone())).unwrap_err();
    assert!(e.message().contains("not both"), "{e}");
    let mut plain: BearerAuth =
        from_json("auth", json!({ "resource": RESOURCE, "authorizationServers": ["https://as.example"] })).unwrap();
    assert!(plain.use_verifier(None).unwrap_err().message().contains("needs a verify callback"));
    assert!(plain.use_verifier(Some(callback)).is_ok());
}

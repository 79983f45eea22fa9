//! CORS for the MCP endpoint (the Fetch standard's CORS protocol): which browser origins may
//! read its responses, the preflight (`OPTIONS`) answer, and the headers added to responses.
//!
//! Off by default. With [`CorsOptions`] in [`HttpOptions::cors`](super::HttpOptions::cors), a
//! browser page of a listed origin (the MCP Inspector's, a web app's) can call the endpoint:
//! its preflight gets `204` with the `Access-Control-*` headers, and every response to it
//! `Access-Control-Allow-Origin` and the exposed headers (`Mcp-Session-Id`,
//! `WWW-Authenticate`, ...). CORS only lets a browser *read* what the server answers; which
//! origins may *send* requests is the Origin check of DNS-rebinding protection, which a
//! listed origin passes (listing it is accepting it), and which still refuses every other
//! origin with `403`.

use crate::headers;
use crate::options::checked;
use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// The CORS policy of the MCP endpoint.
///
/// As data (the `cors` object of every binding's HTTP options): `allowedOrigins`,
/// `allowedHeaders`, `exposedHeaders`, `maxAgeMs`.
///
/// ```
/// use mcpaxle::transport::http::{CorsOptions, HttpOptions};
/// let o: HttpOptions = mcpaxle::options::from_json(
///     "HTTP options",
///     serde_json::json!({ "cors": { "allowedOrigins": ["http://localhost:6274"] } }),
/// )
/// .unwrap();
/// assert_eq!(o.cors.unwrap().allowed_origins, ["http://localhost:6274"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CorsOptions {
    /// The origins whose pages may read the endpoint's responses, exactly as browsers send
    /// them: `scheme://host[:port]`, no path, no trailing slash (`https://app.example.com`,
    /// `http://localhost:6274`). A listed origin is also accepted by the Origin check (as if
    /// in [`HttpOptions::allowed_origins`](super::HttpOptions::allowed_origins)). `"*"`: every
    /// origin the Origin check accepts (loopback ones, `allowedOrigins`) gets CORS; it accepts
    /// no other origin.
    #[serde(alias = "allowed_origins", deserialize_with = "origins")]
    pub allowed_origins: Vec<String>,
    /// Request headers a page may send besides the ones MCP uses, which are always allowed:
    /// `Content-Type`, `Accept`, `Authorization`, `MCP-Protocol-Version`, `Mcp-Session-Id`,
    /// `Mcp-Method`, `Mcp-Name`, every `Mcp-Param-*`, `Last-Event-ID`.
    #[serde(alias = "allowed_headers", deserialize_with = "header_names")]
    pub allowed_headers: Vec<String>,
    /// Response headers a page may read besides the ones MCP sends, which are always exposed:
    /// `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `WWW-Authenticate`.
    #[serde(alias = "exposed_headers", deserialize_with = "header_names")]
    pub exposed_headers: Vec<String>,
    /// How long a browser may reuse a preflight's answer (JSON `maxAgeMs`, default 600000:
    /// 10 minutes; sent in whole seconds as `Access-Control-Max-Age`).
    #[serde(rename = "maxAgeMs", alias = "max_age_ms", with = "crate::options::ms")]
    pub max_age: Duration,
}

impl Default for CorsOptions {
    fn default() -> Self {
        CorsOptions {
            allowed_origins: Vec::new(),
            allowed_headers: Vec::new(),
            exposed_headers: Vec::new(),
            max_age: Duration::from_secs(600),
        }
    }
}

/// The request headers MCP clients send (`Mcp-Param-*` aside).
const MCP_REQUEST_HEADERS: [&str; 8] = [
    "content-type",
    "accept",
    "authorization",
    headers::MCP_PROTOCOL_VERSION,
    headers::MCP_SESSION_ID,
    headers::MCP_METHOD,
    headers::MCP_NAME,
    "last-event-id",
];

/// The response headers MCP servers send that a page needs to read.
const MCP_RESPONSE_HEADERS: &str = "Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, WWW-Authenticate";

/// The methods of the endpoint (`GET` and `DELETE`: legacy sessions).
const METHODS: &str = "POST, GET, DELETE";

impl CorsOptions {
    /// Whether `origin` is listed by name (not by `"*"`): the Origin check accepts it.
    pub(crate) fn lists(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|o| o == origin)
    }

    /// Whether a page of `origin` (accepted by the Origin check) gets CORS headers.
    fn allows(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|o| o == "*" || o == origin)
    }

    /// Whether `req` is a CORS preflight: `OPTIONS` with `Origin` and
    /// `Access-Control-Request-Method`.
    pub(crate) fn is_preflight(method: &Method, req: &HeaderMap) -> bool {
        method == Method::OPTIONS
            && req.contains_key(header::ORIGIN)
            && req.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    }

    /// The headers of the answer to a preflight: the `Access-Control-*` ones when its origin
    /// is allowed and it asks for a method and headers the endpoint takes, none otherwise (the
    /// browser then refuses the request). `Vary` either way.
    pub(crate) fn preflight(&self, req: &HeaderMap) -> HeaderMap {
        let mut out = HeaderMap::new();
        out.insert(
            header::VARY,
            HeaderValue::from_static("Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
        );
        let Some(origin) = req.get(header::ORIGIN).filter(|o| o.to_str().is_ok_and(|o| self.allows(o))) else {
            return out;
        };
        let method_ok = req
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|m| m.to_str().ok())
            .is_some_and(|m| METHODS.split(", ").any(|x| x == m));
        let asked: Vec<String> = req
            .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .iter()
            .flat_map(|v| v.to_str().unwrap_or("\u{0}").split(','))
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        let headers_ok = asked.iter().all(|h| self.header_allowed(h));
        let value = asked.join(", ");
        let (true, true, Ok(asked)) = (method_ok, headers_ok, HeaderValue::from_str(&value)) else {
            return out;
        };
        out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        out.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(METHODS));
        if !value.is_empty() {
            out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked);
        }
        out.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from(self.max_age.as_secs()));
        out
    }

    /// Adds the CORS headers of a response to a request of `origin` (its `Origin` header, if
    /// any): `Access-Control-Allow-Origin` and `Access-Control-Expose-Headers` when the origin
    /// is allowed, and `Vary: Origin` on every response (it differs by origin).
    pub(crate) fn respond(&self, origin: Option<&HeaderValue>, out: &mut HeaderMap) {
        out.append(header::VARY, HeaderValue::from_static("Origin"));
        let Some(origin) = origin.filter(|o| o.to_str().is_ok_and(|o| self.allows(o))) else { return };
        out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        let mut exposed = MCP_RESPONSE_HEADERS.to_owned();
        for h in &self.exposed_headers {
            exposed.push_str(", ");
            exposed.push_str(h);
        }
        if let Ok(v) = HeaderValue::from_str(&exposed) {
            out.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, v);
        }
    }

    fn header_allowed(&self, name: &str) -> bool {
        MCP_REQUEST_HEADERS.contains(&name)
            || name.starts_with(headers::MCP_PARAM_PREFIX)
            || self.allowed_headers.iter().any(|h| h.eq_ignore_ascii_case(name))
    }
}

/// `allowedOrigins`: each `"*"` or a serialized origin, `scheme://host[:port]`.
fn origins<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    checked(d, |list: &Vec<String>| match list.iter().find(|o| *o != "*" && !is_origin(o)) {
        Some(bad) => Err(format!(
            "{bad:?} is not an origin as browsers send it: scheme://host[:port], without a path or a trailing slash \
             (e.g. https://app.example.com), or \"*\""
        )),
        None => Ok(()),
    })
}

/// Whether `text` is a serialized origin (RFC 6454 §6.2): a lowercase scheme, `://`, a host
/// and an optional port, nothing after.
fn is_origin(text: &str) -> bool {
    let Some((scheme, authority)) = text.split_once("://") else { return false };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_lowercase())
        && scheme.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b));
    scheme_ok && super::rules::parse_authority(authority).is_some()
}

/// `allowedHeaders` and `exposedHeaders`: each a valid header name.
fn header_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    checked(d, |list: &Vec<String>| match list.iter().find(|h| HeaderName::from_bytes(h.as_bytes()).is_err()) {
        Some(bad) => Err(format!("{bad:?} is not a valid header name")),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cors(v: serde_json::Value) -> crate::Result<CorsOptions> {
        crate::options::from_json("cors", v)
    }

    #[test]
    fn origins_must_be_as_browsers_send_them() {
        let c = cors(json!({ "allowedOrigins": ["https://app.example.com", "http://localhost:6274", "*"] })).unwrap();
        assert!(c.lists("https://app.example.com") && !c.lists("https://other.example.com"));
        assert!(c.allows("https://other.example.com"), "* allows every origin the Origin check accepted");
        for bad in
            ["https://app.example.com/", "https://app.example.com/mcp", "app.example.com", "HTTPS://a.b", "https://"]
        {
            let e = cors(json!({ "allowedOrigins": [bad] })).unwrap_err();
            assert!(e.message().starts_with("cors: allowedOrigins: "), "{e}");
            assert!(e.message().contains("is not an origin as browsers send it"), "{e}");
        }
        let e = cors(json!({ "exposedHeaders": ["bad header"] })).unwrap_err();
        assert_eq!(e.message(), "cors: exposedHeaders: \"bad header\" is not a valid header name");
        assert_eq!(cors(json!({})).unwrap().max_age, Duration::from_secs(600));
        assert_eq!(cors(json!({ "max_age_ms": 1500 })).unwrap().max_age, Duration::from_millis(1500));
    }

    fn preflight(c: &CorsOptions, origin: &str, method: &str, asked: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        h.insert(header::ACCESS_CONTROL_REQUEST_METHOD, HeaderValue::from_str(method).unwrap());
        if !asked.is_empty() {
            h.insert(header::ACCESS_CONTROL_REQUEST_HEADERS, HeaderValue::from_str(asked).unwrap());
        }
        c.preflight(&h)
    }

    #[test]
    fn a_preflight_is_answered_for_what_the_endpoint_takes() {
        let c = cors(
            json!({ "allowedOrigins": ["http://localhost:6274"], "allowedHeaders": ["X-Trace"], "maxAgeMs": 60500 }),
        )
        .unwrap();
        let ok =
            preflight(&c, "http://localhost:6274", "POST", "content-type,Authorization, mcp-param-region, x-trace");
        assert_eq!(ok[header::ACCESS_CONTROL_ALLOW_ORIGIN], "http://localhost:6274");
        assert_eq!(ok[header::ACCESS_CONTROL_ALLOW_METHODS], "POST, GET, DELETE");
        assert_eq!(ok[header::ACCESS_CONTROL_ALLOW_HEADERS], "content-type, authorization, mcp-param-region, x-trace");
        assert_eq!(ok[header::ACCESS_CONTROL_MAX_AGE], "60");
        assert!(preflight(&c, "http://localhost:6274", "GET", "").get(header::ACCESS_CONTROL_ALLOW_HEADERS).is_none());
        for refused in [
            preflight(&c, "http://localhost:6275", "POST", "content-type"),
            preflight(&c, "http://localhost:6274", "PUT", "content-type"),
            preflight(&c, "http://localhost:6274", "POST", "content-type, x-other"),
        ] {
            assert!(refused.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(), "{refused:?}");
            assert!(refused.contains_key(header::VARY));
        }
    }
}

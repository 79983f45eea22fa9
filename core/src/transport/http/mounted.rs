//! What every binding's mounted handler does the same way around
//! [`McpService::handle_routed`]: build the `http::Request` from the parts the host
//! application hands over ([`routed_request`]), and take the response body's chunks one by one
//! as the core yields them ([`next_chunk`]) to write them to the host's response.
//!
//! [`McpService::handle_routed`]: super::McpService::handle_routed

use super::server::{McpBody, PeerAddr};
use crate::error::{Error, Result};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request};
use http_body_util::{BodyExt, Full};
use std::net::SocketAddr;

/// The request a host application routed to the MCP endpoint, from its parts: the method
/// (`"POST"`), the request target (path and query, `/mcp?x=1`; only the protected resource
/// metadata path is looked at), the header fields as name–value pairs in the order received
/// (a repeated name is kept repeated, as the Host check needs), the whole body, and the
/// client's address (`None` if the host does not know it: unauthenticated legacy sessions are
/// then limited only by the table's size, see [`PeerAddr`]).
///
/// A method, target or header the `http` crate refuses is a [`Usage`](crate::ErrorKind::Usage)
/// error naming it (a host's own HTTP parser sends none of them).
pub fn routed_request<N, V>(
    method: &str,
    target: &str,
    headers: impl IntoIterator<Item = (N, V)>,
    body: Bytes,
    peer: Option<SocketAddr>,
) -> Result<Request<Full<Bytes>>>
where
    N: AsRef<str>,
    V: AsRef<[u8]>,
{
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| Error::usage(format!("the request method {method:?} is not an HTTP method token")))?;
    let mut req = Request::builder()
        .method(method)
        .uri(target)
        .body(Full::new(body))
        .map_err(|_| Error::usage(format!("the request target {target:?} is not a valid path and query")))?;
    let map = req.headers_mut();
    for (name, value) in headers {
        let (name, value) = (name.as_ref(), value.as_ref());
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::usage(format!("the header name {name:?} is not a valid HTTP field name")))?;
        let v = HeaderValue::from_bytes(value)
            .map_err(|_| Error::usage(format!("the value of the header {name:?} is not a valid HTTP field value")))?;
        map.append(n, v);
    }
    if let Some(peer) = peer {
        req.extensions_mut().insert(PeerAddr(peer));
    }
    Ok(req)
}

/// The next chunk of a response body as the core yields it (one JSON object, or one or more
/// SSE events or a keep-alive comment), `None` at its end. Waits while a stream has nothing
/// to send; dropping the body instead cancels its request.
pub async fn next_chunk(body: &mut McpBody) -> Option<Bytes> {
    loop {
        match body.frame().await? {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    return Some(data);
                }
            }
            Err(never) => match never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_become_a_request_with_repeated_headers_and_the_peer() {
        let peer: SocketAddr = "10.0.0.7:4100".parse().unwrap();
        let headers = [("Host", "a.example"), ("x-twice", "1"), ("X-Twice", "2")];
        let req = routed_request("POST", "/mount/mcp?x=1", headers, Bytes::from_static(b"{}"), Some(peer)).unwrap();
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri().path(), "/mount/mcp");
        assert_eq!(req.uri().query(), Some("x=1"));
        let twice: Vec<_> = req.headers().get_all("x-twice").iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(twice, ["1", "2"]);
        assert_eq!(req.extensions().get::<PeerAddr>(), Some(&PeerAddr(peer)));
    }

    #[test]
    fn a_bad_part_is_a_usage_error_naming_it() {
        let none: [(&str, &str); 0] = [];
        let e = routed_request("PO ST", "/", none, Bytes::new(), None).unwrap_err();
        assert!(e.message().contains("\"PO ST\""), "{}", e.message());
        let e = routed_request("POST", "/", [("bad name", "v")], Bytes::new(), None).unwrap_err();
        assert!(e.message().contains("\"bad name\""), "{}", e.message());
        let e = routed_request("POST", "/", [("x", "a\nb")], Bytes::new(), None).unwrap_err();
        assert!(e.message().contains("value of the header \"x\""), "{}", e.message());
        let e = routed_request("POST", "/a b", none, Bytes::new(), None).unwrap_err();
        assert!(e.message().contains("request target"), "{}", e.message());
    }
}

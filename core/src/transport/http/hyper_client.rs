//! The hyper client every HTTP request of an MCP client goes through: the MCP requests of
//! [`HttpTransport`](super::client::HttpTransport) and the OAuth requests of
//! [`client::auth`](crate::client::auth) alike.

use crate::error::{Error, Result};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;

type Connector = HttpsConnector<HttpConnector>;

/// The hyper client every HTTP request of a client goes through (MCP and OAuth alike).
pub(crate) type HttpClient = HyperClient<Connector, RequestBody>;

/// A request's body: its bytes and, when asked for, word of when hyper is done with it.
pub(crate) struct RequestBody {
    bytes: Full<Bytes>,
    /// Dropped with the body, which wakes its receiver.
    _sent: Option<oneshot::Sender<()>>,
}

impl RequestBody {
    pub fn new(bytes: Bytes) -> Self {
        RequestBody { bytes: Full::new(bytes), _sent: None }
    }

    /// A body whose receiver wakes (with `Err`, its sender gone) once hyper has dropped it:
    /// for a request without a body, once its head is written to a connection (or the request
    /// failed). The only way to learn that a GET is on its way before its response arrives.
    pub fn signalling(bytes: Bytes) -> (Self, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        (RequestBody { bytes: Full::new(bytes), _sent: Some(tx) }, rx)
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().bytes).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.bytes.size_hint()
    }
}

/// A pooled HTTP/1 and HTTP/2 client for `http://` and `https://` (rustls, webpki roots).
pub(crate) fn new_http_client() -> Result<HttpClient> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(Duration::from_secs(10)));
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
        .map_err(|e| Error::internal(format!("cannot set up TLS: {e}")))?
        .https_or_http()
        .enable_all_versions()
        .wrap_connector(http);
    Ok(HyperClient::builder(TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(30)).build(connector))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_signalling_body_wakes_its_receiver_once_the_head_is_written_not_answered() {
        // A server that reads the request and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") {
                let mut buf = [0u8; 1024];
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before its head was complete");
                head.extend_from_slice(&buf[..n]);
            }
            (stream, String::from_utf8(head).unwrap())
        });
        let client = new_http_client().unwrap();
        let (body, sent) = RequestBody::signalling(Bytes::new());
        let req = http::Request::get(&url).body(body).unwrap();
        let response = tokio::spawn(client.request(req));
        let waited = tokio::time::timeout(Duration::from_secs(5), sent).await;
        assert!(matches!(waited, Ok(Err(_))), "the body's receiver never woke");
        let (_stream, head) = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
        assert!(head.starts_with("GET /mcp HTTP/1.1\r\n"), "{head}");
        assert!(!response.is_finished(), "nothing was answered");
        response.abort();
    }
}

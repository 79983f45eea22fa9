//! The hyper client every HTTP request of an MCP client goes through: the MCP requests of
//! [`HttpTransport`](super::client::HttpTransport) and the OAuth requests of
//! [`client::auth`](crate::client::auth) alike.

use crate::error::{Error, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

type Connector = HttpsConnector<HttpConnector>;

/// The hyper client every HTTP request of a client goes through (MCP and OAuth alike).
pub(crate) type HttpClient = HyperClient<Connector, Full<Bytes>>;

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

//! The ceiling: plain hyper 1 on the same stack as mcpaxle's HTTP server (hyper-util's auto
//! builder, HTTP/1.1 keep-alive, TCP_NODELAY, tokio's default multi-thread runtime). Every
//! POST's body is read fully, then answered with a fixed JSON-RPC response byte for byte the
//! same size as mcpaxle's answer to the benchmark's `tools/call echo` — the fastest a server
//! on this machine can answer such a request.
//!
//! ```text
//! ceiling_server --http 127.0.0.1:8080 [--reply-bytes N]   # any path
//! ```
//!
//! `--reply-bytes N` pads the answer's text so the body is N bytes long (at least the default's
//! size): the ceiling of a scenario whose answers are large (`tools/list` of 1,000 tools, a 1 MB
//! `tools/call`), in `bench/run.py`.

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use std::convert::Infallible;
use std::net::SocketAddr;

/// What mcpaxle's bench_server answers to `tools/call echo {"text":"hello"}` (`id` 1).
const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpaxle-bench","version":"0.1.0"}},"content":[{"text":"hello","type":"text"}],"resultType":"complete"}}"#;

/// The answer, `reply_bytes` long: [`BODY`] with its text padded.
fn reply(reply_bytes: usize) -> Bytes {
    let pad = reply_bytes.saturating_sub(BODY.len());
    Bytes::from(BODY.replacen("\"hello\"", &format!("\"hello{}\"", "x".repeat(pad)), 1))
}

async fn handle(req: Request<hyper::body::Incoming>, body: Bytes) -> Result<Response<Full<Bytes>>, Infallible> {
    let post = req.method() == Method::POST;
    // Read the whole request body, as a real server must before it can parse it.
    let read = req.into_body().collect().await;
    let mut resp = Response::new(Full::new(body));
    if !post || read.is_err() {
        *resp.status_mut() = if post { StatusCode::BAD_REQUEST } else { StatusCode::METHOD_NOT_ALLOWED };
        *resp.body_mut() = Full::new(Bytes::new());
        return Ok(resp);
    }
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(resp)
}

fn usage() -> ! {
    eprintln!("usage: ceiling_server --http HOST:PORT [--reply-bytes N]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, reply_bytes): (SocketAddr, usize) = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice()
    {
        ["--http", addr] => (addr.parse().unwrap_or_else(|_| usage()), 0),
        ["--http", addr, "--reply-bytes", n] => {
            (addr.parse().unwrap_or_else(|_| usage()), n.parse().unwrap_or_else(|_| usage()))
        }
        _ => usage(),
    };
    let body = reply(reply_bytes);
    mcpaxle_bench::serve("ceiling_server", addr, "/", move || {
        let body = body.clone();
        hyper::service::service_fn(move |req| handle(req, body.clone()))
    })
    .await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn replies_are_padded_to_size_and_stay_json() {
        assert_eq!(super::reply(0), super::BODY.as_bytes());
        let r = super::reply(100_000);
        assert_eq!(r.len(), 100_000);
        let v: serde_json::Value = serde_json::from_slice(&r).unwrap();
        assert!(v["result"]["content"][0]["text"].as_str().unwrap().starts_with("hello"));
    }
}

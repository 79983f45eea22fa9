//! What the bench's plain hyper servers (the ceiling, the rmcp row) share: the stack the ceiling
//! defines, so that every row compared with it is served the same way.

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::error::Error;
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// Serves `addr` until Ctrl-C with hyper-util's auto builder (HTTP/1.1 keep-alive, HTTP/2),
/// TCP_NODELAY and one task per connection, each connection served by a service from
/// `service`. `name` and `url_path` are for the messages; a port it cannot bind exits 1.
pub async fn serve<S, B>(name: &str, addr: SocketAddr, url_path: &str, service: impl Fn() -> S)
where
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn Error + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn Error + Send + Sync>>,
{
    let listener = TcpListener::bind(addr).await.unwrap_or_else(|e| {
        eprintln!("{name}: cannot listen on {addr}: {e}");
        std::process::exit(1)
    });
    eprintln!("{name}: listening on http://{addr}{url_path}");
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    loop {
        let (stream, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(_) => continue,
            },
            _ = tokio::signal::ctrl_c() => return,
        };
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(TokioIo::new(stream), service()).into_owned();
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}

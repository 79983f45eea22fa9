//! A client and a server in one process, joined without a port or a child process:
//! [`Client::connect_in_memory`], for tests of a server (and of code using a client).
//!
//! The two are joined by the stdio transport over an in-memory pipe (`tokio::io::duplex`):
//! the server side is [`serve_with`], the client side [`Client::connect_with`], so every
//! message is framed, parsed, size-checked and answered as over a real stdio connection, and
//! the protocol is the whole protocol: era detection (`server/discover`, or `initialize` when
//! the client asks for a legacy version), MRTR, progress, logs, cancellation,
//! `subscriptions/listen`. What only HTTP has (headers, statuses, sessions ids, bearer auth) is
//! tested against [`McpService`](crate::transport::http::McpService) or a real port.
//!
//! This module uses both a client and a server transport, so it sits above both layers.

use crate::client::{Client, ClientOptions};
use crate::error::Result;
use crate::server::Server;
use crate::transport::stdio::{StdioOptions, serve_with};

/// The bytes one direction of the pipe buffers before the writer waits for the reader.
const PIPE_BUFFER: usize = 1 << 16;

impl Client {
    /// Connects to `server`, served in this process over an in-memory pipe with the stdio
    /// transport (see [`crate::transport::in_memory`]): the full protocol with no port and no
    /// process. `options` are those of every client; its `protocol_versions` choose the era as
    /// over stdio (`["2025-11-25"]`: a legacy session opened by `initialize`).
    ///
    /// The server is served until the client is closed or dropped (its end of the pipe closes,
    /// the server drains what is in flight, as at the end of stdin). `server` is shared: the
    /// same server may serve other clients and transports meanwhile.
    ///
    /// ```
    /// # async fn demo() -> mcpaxle::Result<()> {
    /// use mcpaxle::Server;
    /// use mcpaxle::client::{CallOptions, Client, ClientOptions};
    /// use mcpaxle::schema::{CallToolResult, Tool};
    ///
    /// let server = Server::builder("demo", "1.0.0").build();
    /// let tool = Tool::new("hello", "Says hi", serde_json::json!({ "type": "object" }));
    /// server.add_tool(tool, |_args, _ctx| async { Ok(CallToolResult::text("hi")) })?;
    /// let client = Client::connect_in_memory(&server, ClientOptions::default()).await?;
    /// let r = client.call_tool("hello", serde_json::json!({}), CallOptions::new()).await?;
    /// assert_eq!(r.content[0].as_text(), Some("hi"));
    /// client.close().await;
    /// # Ok(()) }
    /// ```
    pub async fn connect_in_memory(server: &Server, options: ClientOptions) -> Result<Client> {
        let (client_end, server_end) = tokio::io::duplex(PIPE_BUFFER);
        let (input, output) = tokio::io::split(server_end);
        let served = server.clone();
        tokio::spawn(async move {
            // Ends when the client's end closes; an error then is the pipe's, nobody to tell.
            let _ = serve_with(served, input, output, StdioOptions::default()).await;
        });
        let (reader, writer) = tokio::io::split(client_end);
        Client::connect_with(reader, writer, options).await
    }
}

//! What tests of this crate and of the crates above it need about MCP servers (the
//! `test-support` feature): a server in the test's own process, reached over Streamable HTTP on
//! loopback as a remote server would be.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// Serves the MCP server `new_server` makes (one per session) over Streamable HTTP on a free
/// loopback port, and returns its endpoint URL (`http://127.0.0.1:<port>/mcp`).
///
/// The server runs on the current Tokio runtime until the runtime ends.
pub async fn serve_over_http<S: ServerHandler + Send + 'static>(
    new_server: impl Fn() -> S + Send + Sync + 'static,
) -> String {
    let service = StreamableHttpService::new(
        move || Ok(new_server()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("a bound address"));
    // Each answer sent at once (TCP_NODELAY, as Node's HTTP server does by default): with
    // Nagle's algorithm on, an answer's second segment waited for the client's delayed ACK,
    // and every call took ~44 ms instead of ~1.2 (the view_open benchmark's sha256 runs).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

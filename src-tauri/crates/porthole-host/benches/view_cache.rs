//! A view's HTML from the cache against from `resources/read` (prints numbers, asserts nothing):
//! `cargo bench -p porthole-host --bench view_cache` (part of `make bench`).
//!
//! The demo MCP App server runs in this process and is reached over Streamable HTTP on loopback,
//! as a remote server would be. Timed is `ViewCache::load`, the step between "this call has a
//! view" and "its HTML is checked and ready to serve": from the server (a `resources/read` and a
//! `resources/list` for the listing's metadata, then the checks: MIME, size, `_meta.ui`, the CSP,
//! SHA-256), or from the cache (the server's resources version looked up, the entry cloned; or,
//! for the first view after it was read ahead, its HTML unpacked).
//! Everything after it (the frame's URL, the document load, the handshake) is the same either
//! way and is measured by the views benchmark.

#[path = "timings/mod.rs"]
mod timings;
use std::time::{Duration, Instant};
use timings::summary;

use porthole_demo_server::DemoServer;
use porthole_host::view_cache::{Source, ViewCache};
use porthole_mcp::test_support::serve_over_http;
use porthole_mcp::{ConnectOptions, ServerConfig, Servers};

const RUNS: usize = 200;

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let url = serve_over_http(DemoServer::new).await;
        let servers = Servers::start(
            vec![ServerConfig::http("demo", &url).with_timeout(Duration::from_secs(30))],
            ConnectOptions::default(),
        );
        servers.settled().await;
        let uri = "ui://porthole-demo/system-monitor.html";
        let warm = ViewCache::default();
        let (view, _) = warm.load(&servers, "demo", uri).await.unwrap();
        println!(
            "A view's HTML ({} KiB, the demo server's system monitor) over Streamable HTTP on loopback:",
            view.html.len() / 1024
        );
        let mut from_server = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let cold = ViewCache::default();
            let started = Instant::now();
            let (_, source) = cold.load(&servers, "demo", uri).await.unwrap();
            from_server.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(source, Source::Server);
        }
        let mut from_cache = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let started = Instant::now();
            let (_, source) = warm.load(&servers, "demo", uri).await.unwrap();
            from_cache.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(source, Source::Cache);
        }
        // The cache keeps views packed: the first view after a read-ahead (or after none of
        // its views for `KEEP_UNPACKED`) unpacks its HTML.
        let mut unpacked = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let ahead = ViewCache::default();
            ahead.prefetch(&servers, "demo", uri).await;
            let started = Instant::now();
            let (loaded, source) = ahead.load(&servers, "demo", uri).await.unwrap();
            unpacked.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(source, Source::Cache);
            assert_eq!(loaded.html.len(), view.html.len());
        }
        let server = summary("from resources/read (and checked)", from_server);
        let cache = summary("from the cache", from_cache);
        summary("from the cache, unpacked (after a read-ahead)", unpacked);
        let ahead = ViewCache::default();
        ahead.prefetch(&servers, "demo", uri).await;
        println!("  the cache holds it in {} KiB, packed", ahead.held_bytes() / 1024);
        println!(
            "  ratio (p50): resources/read / cache = {:.0}×",
            server / cache.max(1e-6)
        );
        servers.shutdown().await;
    });
}

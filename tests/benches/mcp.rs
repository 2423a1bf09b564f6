//! MCP connection benchmarks (prints numbers, asserts nothing): `cargo bench -p porthole-e2e --bench mcp`.
//!
//! 1. Connecting 10 stdio servers at once, whose start-up delays run from 50 to 500 ms, against
//!    connecting the slowest of them alone: with parallel connects the ratio stays near 1.
//! 2. The cost of Porthole's call path (`Servers::call_tool`: lookup, progress subscription,
//!    timeout, the model/view split) over a raw rmcp `call_tool` on the same kind of server.
//! 3. Loading a config file of 10,000 servers (`LoadedConfig::load`), which is linear.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use porthole_mcp::{CallOptions, ConnectOptions, ServerConfig, Servers};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

fn test_server() -> PathBuf {
    let exe = porthole_e2e::target_dir().join("release").join("porthole-test-server");
    if exe.is_file() {
        exe
    } else {
        porthole_e2e::target_dir().join("debug").join("porthole-test-server")
    }
}

fn config(name: &str, delay_ms: u64) -> ServerConfig {
    ServerConfig::stdio(name, test_server().display().to_string())
        .with_args(["--delay-ms".to_string(), delay_ms.to_string()])
        .with_timeout(Duration::from_secs(30))
}

async fn connect_ms(configs: Vec<ServerConfig>) -> f64 {
    let started = Instant::now();
    let servers = Servers::start(configs, ConnectOptions::default());
    let statuses = servers.settled().await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(s) = statuses
        .iter()
        .find(|s| s.state != porthole_mcp::ServerState::Connected)
    {
        panic!("{} did not connect: {:?}", s.name, s.error);
    }
    servers.shutdown().await;
    ms
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    println!("test server: {}", test_server().display());
    let runs = 5;
    let mut ten = Vec::new();
    let mut alone = Vec::new();
    for _ in 0..runs {
        ten.push(connect_ms((0..10).map(|i| config(&format!("s{i}"), 50 + i * 50)).collect()).await);
        alone.push(connect_ms(vec![config("slowest", 500)]).await);
    }
    let (ten, alone) = (median(ten), median(alone));
    println!(
        "connect 10 servers at once: {ten:.0} ms; the slowest alone: {alone:.0} ms; ratio {:.2}",
        ten / alone
    );

    let calls = 2000u32;
    let servers = Servers::start(vec![config("s", 0)], ConnectOptions::default());
    servers.settled().await;
    let args = json!({"text": "x"}).as_object().cloned();
    for _ in 0..100 {
        servers
            .call_tool("s", "echo", args.clone(), CallOptions::default())
            .await
            .unwrap();
    }
    let started = Instant::now();
    for _ in 0..calls {
        servers
            .call_tool("s", "echo", args.clone(), CallOptions::default())
            .await
            .unwrap();
    }
    let porthole_us = started.elapsed().as_secs_f64() * 1e6 / calls as f64;
    servers.shutdown().await;

    let cmd = tokio::process::Command::new(test_server());
    let raw = ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let params = CallToolRequestParams::new("echo").with_arguments(args.clone().unwrap());
    for _ in 0..100 {
        raw.call_tool(params.clone()).await.unwrap();
    }
    let started = Instant::now();
    for _ in 0..calls {
        raw.call_tool(params.clone()).await.unwrap();
    }
    let raw_us = started.elapsed().as_secs_f64() * 1e6 / calls as f64;
    let _ = raw.cancel().await;
    println!(
        "call round trip ({calls} calls of echo over stdio): porthole {porthole_us:.0} µs, raw rmcp {raw_us:.0} µs, overhead {:.0} µs per call",
        porthole_us - raw_us
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json");
    let servers: serde_json::Map<String, serde_json::Value> = (0..10_000)
        .map(|i| (format!("s{i}"), json!({"command": "/bin/true", "disabled": true})))
        .collect();
    std::fs::write(&file, json!({"mcpServers": servers}).to_string()).unwrap();
    let loads: Vec<f64> = (0..5)
        .map(|_| {
            let started = Instant::now();
            let loaded = porthole_mcp::LoadedConfig::load(std::slice::from_ref(&file));
            assert_eq!(loaded.servers.len(), 10_000);
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    println!("load a config of 10,000 servers: {:.0} ms (median of 5)", median(loads));
}

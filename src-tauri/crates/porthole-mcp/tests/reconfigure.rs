//! `Servers::reconfigure`, signing out and the server log, against real servers: this test
//! binary is also the stdio server (the demo server, run when `PORTHOLE_TEST_ROLE` is set), and
//! it serves the demo server over Streamable HTTP on a loopback port.
//!
//! Each stdio server writes `started pid=<pid> mcp-apps=<bool>` to stderr once the handshake is
//! done, so its log file (`<name>.log`) tells how many times it was started and whether the MCP
//! Apps extension was advertised to it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_mcp::oauth::{FollowRedirect, KeyringTokens, OAuth};
use porthole_mcp::test_support::serve_over_http;
use porthole_mcp::{
    CallError, CallOptions, ConnectOptions, MCP_APPS_EXTENSION, ServerConfig, ServerState, ServerStatus, Servers,
};
use porthole_secrets::{MemorySecrets, SecretStore};
use rmcp::ServiceExt;
use serde_json::json;

const ROLE: &str = "PORTHOLE_TEST_ROLE";

type Test = fn() -> BoxFuture<'static, ()>;

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("stdio-server") => return serve_stdio(),
        // Starts, and never answers the handshake.
        Ok("silent-server") => {
            eprintln!("started pid={} mcp-apps=false", std::process::id());
            std::thread::sleep(Duration::from_secs(120));
            return;
        }
        _ => {}
    }
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let tests: [(&str, Test); 4] = [
        ("unchanged_servers_keep_their_session_changed_ones_reconnect", || {
            unchanged_servers_keep_their_session_changed_ones_reconnect().boxed()
        }),
        ("disabling_closes_and_enabling_connects_again", || {
            disabling_closes_and_enabling_connects_again().boxed()
        }),
        ("the_mcp_apps_switches_reconnect_with_or_without_the_capability", || {
            the_mcp_apps_switches_reconnect_with_or_without_the_capability().boxed()
        }),
        (
            "signing_out_forgets_the_tokens_and_a_failed_sign_in_keeps_the_connection",
            || signing_out_forgets_the_tokens_and_a_failed_sign_in_keeps_the_connection().boxed(),
        ),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut ran = 0;
    for (name, test) in tests {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        println!("test {name} ...");
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(120), test())
                .await
                .unwrap_or_else(|_| panic!("{name} took more than 120 s"))
        });
        println!("test {name} ... ok");
        ran += 1;
    }
    println!("test result: ok. {ran} passed");
}

/// The demo server on stdin/stdout, saying on stderr that it started and what it was told.
fn serve_stdio() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let service = porthole_demo_server::DemoServer::new()
            .serve(rmcp::transport::stdio())
            .await
            .expect("handshake");
        let apps = service
            .peer()
            .peer_info()
            .and_then(|i| {
                i.capabilities
                    .extensions
                    .as_ref()
                    .map(|e| e.contains_key(MCP_APPS_EXTENSION))
            })
            .unwrap_or(false);
        eprintln!("started pid={} mcp-apps={apps}", std::process::id());
        let _ = service.waiting().await;
    });
}

/// This test binary as a stdio server (the demo server), with `args`.
fn stdio(name: &str, args: &[&str]) -> ServerConfig {
    ServerConfig::stdio(name, std::env::current_exe().unwrap().display().to_string())
        .with_args(args.iter().copied())
        .with_env(ROLE, "stdio-server")
        .with_timeout(Duration::from_secs(20))
}

fn options(log_dir: &Path) -> ConnectOptions {
    ConnectOptions {
        server_log_dir: Some(log_dir.to_path_buf()),
        ..ConnectOptions::default()
    }
}

/// Each start a server's log records: (pid, whether MCP Apps was advertised).
fn starts(servers: &Servers, name: &str) -> Vec<(u32, bool)> {
    let log = std::fs::read_to_string(servers.log_file(name).unwrap()).unwrap_or_default();
    log.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("started pid=")?;
            let (pid, apps) = rest.split_once(" mcp-apps=")?;
            Some((pid.parse().ok()?, apps == "true"))
        })
        .collect()
}

/// Waits (up to 10 s) until a server's log records `n` starts, and returns them.
async fn wait_for_starts(servers: &Servers, name: &str, n: usize) -> Vec<(u32, bool)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = starts(servers, name);
        if seen.len() >= n || Instant::now() > deadline {
            assert_eq!(seen.len(), n, "{name} was started {} times, not {n}", seen.len());
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

async fn wait_until_ended(pid: u32) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ended(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn settled(servers: &Servers) -> Vec<ServerStatus> {
    let statuses = servers.settled().await;
    for s in &statuses {
        assert_ne!(s.state, ServerState::Failed, "{}: {:?}", s.name, s.error);
    }
    statuses
}

fn states(statuses: &[ServerStatus]) -> Vec<(&str, ServerState)> {
    statuses.iter().map(|s| (s.name.as_str(), s.state)).collect()
}

async fn sha(servers: &Servers, server: &str) -> Result<String, CallError> {
    let outcome = servers
        .call_tool(
            server,
            "sha256",
            json!({"text": "abc"}).as_object().cloned(),
            CallOptions::default(),
        )
        .await?;
    Ok(outcome.model.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

async fn unchanged_servers_keep_their_session_changed_ones_reconnect() {
    let logs = tempfile::tempdir().unwrap();
    let servers = Servers::start(
        vec![stdio("a", &[]), stdio("b", &[]), stdio("c", &[])],
        options(logs.path()),
    );
    // A clone taken before the change (as the window, the views and the agents hold them).
    let clone = servers.clone();
    let mut changes = clone.subscribe();
    settled(&servers).await;
    let a = wait_for_starts(&servers, "a", 1).await[0].0;
    let b = wait_for_starts(&servers, "b", 1).await[0].0;
    let c = wait_for_starts(&servers, "c", 1).await[0].0;
    changes.borrow_and_update();

    let disabled = stdio("e", &[]).disabled();
    servers
        .reconfigure(
            vec![stdio("a", &[]), stdio("b", &["--changed"]), stdio("d", &[]), disabled],
            true,
        )
        .await;
    // The removed server's process is gone by the time reconfigure returns (give the OS a moment
    // to reap it), and the clone saw the change on the same channel.
    wait_until_ended(c).await;
    assert!(changes.has_changed().unwrap());
    let statuses = settled(&clone).await;
    assert_eq!(
        states(&statuses),
        [
            ("a", ServerState::Connected),
            ("b", ServerState::Connected),
            ("d", ServerState::Connected),
            ("e", ServerState::Disabled),
        ]
    );
    assert!(statuses[3].tools.is_empty());
    // Tools of the servers that stayed keep unique model names.
    let mut names: Vec<_> = statuses
        .iter()
        .flat_map(|s| s.tools.iter().map(|t| t.model_name.clone()))
        .collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count);

    let b_starts = wait_for_starts(&servers, "b", 2).await;
    wait_until_ended(b).await;
    assert_ne!(b_starts[1].0, b);
    wait_for_starts(&servers, "d", 1).await;
    // The unchanged server kept its process and its session.
    assert_eq!(starts(&servers, "a"), [(a, true)]);
    assert!(!ended(a));
    assert_eq!(sha(&clone, "a").await.unwrap(), SHA_ABC);
    assert_eq!(sha(&clone, "d").await.unwrap(), SHA_ABC);
    assert!(matches!(sha(&clone, "c").await, Err(CallError::UnknownServer(_))));
    match sha(&clone, "e").await {
        Err(CallError::NotConnected { reason, .. }) => assert_eq!(reason, "it is disabled"),
        other => panic!("{other:?}"),
    }
    assert!(starts(&servers, "e").is_empty());
    servers.shutdown().await;
    wait_until_ended(a).await;
}

async fn disabling_closes_and_enabling_connects_again() {
    let logs = tempfile::tempdir().unwrap();
    let servers = Servers::start(vec![stdio("s", &[])], options(logs.path()));
    settled(&servers).await;
    let first = wait_for_starts(&servers, "s", 1).await[0].0;

    let off = stdio("s", &[]).disabled();
    servers.reconfigure(vec![off], true).await;
    wait_until_ended(first).await;
    let statuses = servers.statuses();
    assert_eq!(states(&statuses), [("s", ServerState::Disabled)]);
    assert!(statuses[0].tools.is_empty() && statuses[0].error.is_none());

    servers.reconfigure(vec![stdio("s", &[])], true).await;
    assert_eq!(servers.statuses()[0].state, ServerState::Connecting);
    settled(&servers).await;
    let again = wait_for_starts(&servers, "s", 2).await[1].0;
    assert_ne!(again, first);
    assert_eq!(sha(&servers, "s").await.unwrap(), SHA_ABC);

    // A server removed while it is still connecting is abandoned at once, its process with it.
    let silent = stdio("silent", &[]).with_env(ROLE, "silent-server");
    servers.reconfigure(vec![stdio("s", &[]), silent], true).await;
    let pid = wait_for_starts(&servers, "silent", 1).await[0].0;
    assert_eq!(servers.statuses()[1].state, ServerState::Connecting);
    let removing = Instant::now();
    servers.reconfigure(vec![stdio("s", &[])], true).await;
    assert!(removing.elapsed() < Duration::from_secs(5), "{:?}", removing.elapsed());
    wait_until_ended(pid).await;
    assert_eq!(states(&settled(&servers).await), [("s", ServerState::Connected)]);
    assert_eq!(starts(&servers, "s").len(), 2, "s was kept throughout");
    servers.shutdown().await;
}

async fn the_mcp_apps_switches_reconnect_with_or_without_the_capability() {
    let logs = tempfile::tempdir().unwrap();
    let servers = Servers::start(vec![stdio("s", &[]), stdio("t", &[])], options(logs.path()));
    let statuses = settled(&servers).await;
    assert!(servers.mcp_apps());
    assert!(statuses.iter().all(|s| s.mcp_apps));
    assert!(statuses[0].tools.iter().any(|t| t.ui_resource_uri.is_some()));
    assert_eq!(
        wait_for_starts(&servers, "s", 1).await,
        [(starts(&servers, "s")[0].0, true)]
    );

    // The global switch off: both reconnect, told nothing about MCP Apps, and offer no views.
    servers.reconfigure(vec![stdio("s", &[]), stdio("t", &[])], false).await;
    let statuses = settled(&servers).await;
    assert!(!servers.mcp_apps());
    for s in &statuses {
        assert!(!s.mcp_apps, "{}", s.name);
        assert!(s.tools.iter().all(|t| t.ui_resource_uri.is_none()), "{}", s.name);
        assert!(!wait_for_starts(&servers, &s.name, 2).await[1].1, "{}", s.name);
    }

    // On again, and off for `t` alone: only `t` goes without.
    let t = stdio("t", &[]).without_mcp_apps();
    servers.reconfigure(vec![stdio("s", &[]), t.clone()], true).await;
    let statuses = settled(&servers).await;
    assert_eq!((statuses[0].mcp_apps, statuses[1].mcp_apps), (true, false));
    assert!(wait_for_starts(&servers, "s", 3).await[2].1);
    assert!(!wait_for_starts(&servers, "t", 3).await[2].1);

    // The same settings again change nothing.
    servers.reconfigure(vec![stdio("s", &[]), t], true).await;
    settled(&servers).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(starts(&servers, "s").len(), 3);
    assert_eq!(starts(&servers, "t").len(), 3);
    servers.shutdown().await;
}

async fn signing_out_forgets_the_tokens_and_a_failed_sign_in_keeps_the_connection() {
    let url = serve_over_http(porthole_demo_server::DemoServer::new).await;
    let secrets = Arc::new(MemorySecrets::default());
    let logs = tempfile::tempdir().unwrap();
    let remote = ServerConfig::http("remote", &url).with_timeout(Duration::from_secs(20));
    let servers = Servers::start(
        vec![remote, stdio("local", &[])],
        ConnectOptions {
            oauth: Some(OAuth::new(
                Arc::new(FollowRedirect),
                Arc::new(KeyringTokens(secrets.clone())),
            )),
            ..options(logs.path())
        },
    );
    settled(&servers).await;

    let key = format!("oauth:{url}");
    secrets
        .set(&key, r#"{"client_id": "c", "token_response": null}"#)
        .unwrap();
    assert!(servers.sign_out("remote").await.unwrap(), "there were tokens");
    assert_eq!(secrets.get(&key).unwrap(), None);
    assert!(!servers.sign_out("remote").await.unwrap(), "nothing left to forget");
    // Reconnected without signing in: this server needs no sign-in.
    assert_eq!(states(&settled(&servers).await)[0], ("remote", ServerState::Connected));
    assert_eq!(sha(&servers, "remote").await.unwrap(), SHA_ABC);

    // This server has no OAuth at all: signing in fails and the connection stays.
    let refused = servers.sign_in("remote").await.unwrap_err();
    assert!(!refused.is_empty());
    assert_eq!(servers.statuses()[0].state, ServerState::Connected);
    assert_eq!(sha(&servers, "remote").await.unwrap(), SHA_ABC);

    assert_eq!(
        servers.sign_in("local").await.unwrap_err(),
        "\"local\" is a stdio server; only remote (HTTP) servers sign in"
    );
    assert_eq!(servers.sign_out("nope").await.unwrap_err(), "no server named \"nope\"");
    // Only stdio servers have a log.
    assert!(servers.log_file("local").unwrap().is_file());
    assert!(!servers.log_file("remote").unwrap().exists());
    servers.shutdown().await;
}

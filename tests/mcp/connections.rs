//! MCP connections against real servers: Porthole's own test server (stdio and Streamable HTTP),
//! misbehaving on purpose, and the published `@modelcontextprotocol/server-everything` from npm.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use porthole_e2e::{Spawned, server_listening};
use porthole_mcp::{CallError, CallOptions, ConnectOptions, ServerConfig, ServerState, Servers};
use serde_json::{Value, json};

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

/// Porthole's test server over stdio, with 20 s to answer.
fn test_server(name: &str) -> ServerConfig {
    ServerConfig::stdio(name, TEST_SERVER).with_timeout(Duration::from_secs(20))
}

/// A Streamable HTTP server at `url`, with 20 s to answer.
fn http(name: &str, url: &str) -> ServerConfig {
    ServerConfig::http(name, url).with_timeout(Duration::from_secs(20))
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

fn text(outcome: &porthole_mcp::ToolOutcome) -> String {
    outcome
        .model
        .content
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn start(configs: Vec<ServerConfig>) -> Servers {
    let servers = Servers::start(configs, ConnectOptions::default());
    servers.settled().await;
    servers
}

fn test_server_over_http() -> (Spawned, String) {
    test_server_listening(&["--http"])
}

/// Starts the test server with `args` and returns it with the URL it says it listens on.
fn test_server_listening(args: &[&str]) -> (Spawned, String) {
    server_listening(TEST_SERVER, args)
}

#[tokio::test]
async fn stdio_call_with_progress_and_the_two_facings() {
    let servers = start(vec![test_server("t")]).await;
    assert_eq!(servers.statuses()[0].state, ServerState::Connected);
    let echo = servers
        .call_tool("t", "echo", args(json!({"text": "hi"})), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echo), "hi");
    assert_eq!(echo.view["content"][0]["text"], "hi");

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let slow = servers
        .call_tool("t", "slow", args(json!({"seconds": 0.5})), options)
        .await
        .unwrap();
    assert_eq!(text(&slow), "done after 5 steps");
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p.progress);
    }
    assert_eq!(
        seen,
        [1.0, 2.0, 3.0, 4.0, 5.0],
        "every progress notification reached the subscriber"
    );
    servers.shutdown().await;
}

#[tokio::test]
async fn a_hanging_call_times_out_and_a_cancelled_one_stops() {
    let logs = tempfile::tempdir().unwrap();
    let options = ConnectOptions {
        server_log_dir: Some(logs.path().to_path_buf()),
        ..Default::default()
    };
    let servers = Servers::start(vec![test_server("t")], options);
    servers.settled().await;
    let started = Instant::now();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    let err = servers.call_tool("t", "hang", None, options).await.unwrap_err();
    assert!(matches!(err, CallError::Timeout(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let err = servers
        .call_tool("t", "slow", args(json!({"seconds": 10})), options)
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Cancelled), "{err}");
    // The connection is still good after both.
    let echo = servers
        .call_tool("t", "echo", args(json!({"text": "still here"})), CallOptions::default())
        .await;
    assert_eq!(text(&echo.unwrap()), "still here");
    servers.shutdown().await;
}

/// Closing a connection while the server still has a long answer to give (the app quitting
/// while a view is being read, say) does not wait out the 3 s the specification gives a server
/// to exit: what it writes after its stdin closed is read and dropped, so it finishes and ends
/// by itself. (Unread, its answer filled the pipe, it blocked there until it was signalled, and
/// the app took 3 s to quit.)
#[tokio::test]
async fn closing_a_server_that_is_still_answering_does_not_wait_for_it_to_be_killed() {
    let servers = start(vec![test_server("t")]).await;
    let (progress, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(progress),
        ..Default::default()
    };
    let calling = servers.clone();
    let call = tokio::spawn(async move {
        let arguments = args(json!({"bytes": 8 << 20, "delay_ms": 300}));
        calling.call_tool("t", "big", arguments, options).await
    });
    // The server has the request: it answers 8 MiB in 300 ms, after its stdin has closed.
    heard.recv().await.expect("the server says it has begun");
    let started = Instant::now();
    servers.shutdown().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "closing took {took:?}: the server was left blocked on a full pipe until it was signalled"
    );
    assert!(call.await.unwrap().is_err(), "the call ends with the connection");
}

#[tokio::test]
async fn a_server_killed_mid_call_is_reported_and_restarted_on_next_use() {
    let servers = start(vec![test_server("t")]).await;
    let err = servers
        .call_tool("t", "crash", None, CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server exited with status 3: crash: exiting mid-call"
    );
    assert_eq!(servers.statuses()[0].state, ServerState::Failed);
    assert_eq!(
        servers.statuses()[0].error.as_deref(),
        Some("exited with status 3: crash: exiting mid-call")
    );
    let echo = servers
        .call_tool("t", "echo", args(json!({"text": "back"})), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echo), "back");
    assert_eq!(servers.statuses()[0].state, ServerState::Connected);
    servers.shutdown().await;
}

#[tokio::test]
async fn malformed_json_and_silent_servers_fail_clearly_without_holding_others_back() {
    let started = Instant::now();
    let servers = start(vec![
        test_server("garbage")
            .with_args(["--garbage"])
            .with_timeout(Duration::from_secs(3)),
        ServerConfig::stdio("silent", "sleep")
            .with_args(["60"])
            .with_timeout(Duration::from_secs(2)),
        test_server("good"),
    ])
    .await;
    let took = started.elapsed();
    let s = servers.statuses();
    assert_eq!(s[0].state, ServerState::Failed, "{:?}", s[0].error);
    assert_eq!(s[1].state, ServerState::Failed);
    assert!(
        s[1].error.as_deref().unwrap().contains("no answer within 2s"),
        "{:?}",
        s[1].error
    );
    assert_eq!(s[2].state, ServerState::Connected);
    assert!(
        took < Duration::from_secs(8),
        "connected in parallel, bounded by the slowest timeout ({took:?})"
    );
    servers.shutdown().await;
}

#[tokio::test]
async fn tools_list_changed_refreshes_the_catalog() {
    let servers = start(vec![test_server("t")]).await;
    assert!(!servers.statuses()[0].tools.iter().any(|t| t.name == "extra"));
    let mut changes = servers.subscribe();
    servers
        .call_tool("t", "add_tool", None, CallOptions::default())
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(10),
        changes.wait_for(|all| all[0].tools.iter().any(|t| t.name == "extra")),
    )
    .await
    .expect("the catalog was refreshed after notifications/tools/list_changed")
    .unwrap();
    let extra = servers
        .call_tool("t", "extra", None, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&extra), "extra!");
    servers.shutdown().await;
}

#[tokio::test]
async fn streamable_http_with_custom_headers() {
    let (_server, url) = test_server_over_http();
    let servers = start(vec![
        http("web", &url)
            .with_header("X-Api-Key", "k-123")
            .with_header("Authorization", "Basic dTpw"),
    ])
    .await;
    let status = &servers.statuses()[0];
    assert_eq!(status.state, ServerState::Connected, "{:?}", status.error);
    assert_eq!(status.server_info.as_deref(), Some("porthole-test-server 1.0.0"));
    let seen = servers
        .call_tool("web", "headers", None, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(seen.view["structuredContent"]["x-api-key"], "k-123");
    assert_eq!(seen.view["structuredContent"]["authorization"], "Basic dTpw");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let slow = servers
        .call_tool(
            "web",
            "slow",
            args(json!({"seconds": 0.3})),
            CallOptions {
                progress: Some(tx),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(text(&slow), "done after 3 steps");
    assert!(rx.try_recv().is_ok(), "progress arrives over HTTP too");
    servers.shutdown().await;
}

#[tokio::test]
async fn an_http_server_that_is_not_there_fails_with_the_reason() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = http("gone", &format!("http://127.0.0.1:{port}/mcp")).with_timeout(Duration::from_secs(5));
    let servers = start(vec![config]).await;
    let status = &servers.statuses()[0];
    assert_eq!(status.state, ServerState::Failed);
    assert!(!status.error.as_deref().unwrap_or("").is_empty());
}

/// server-everything over stdio, named "everything".
fn everything_over_stdio() -> ServerConfig {
    ServerConfig::stdio("everything", "node")
        .with_args([porthole_e2e::server_everything_entry().to_str().unwrap(), "stdio"])
        .with_timeout(Duration::from_secs(30))
}

/// Starts server-everything over Streamable HTTP on a free port; its URL once it listens.
async fn everything_over_http() -> (Spawned, String) {
    let entry = porthole_e2e::server_everything_entry();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .args([entry.to_str().unwrap(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = Spawned(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server-everything did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

/// Calls server-everything's `echo` and checks the message comes back.
async fn assert_echoes(servers: &Servers, message: &str) {
    let echo = servers.call_tool(
        "everything",
        "echo",
        args(json!({ "message": message })),
        CallOptions::default(),
    );
    assert!(text(&echo.await.unwrap()).contains(message));
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let servers = start(vec![everything_over_stdio()]).await;
    let status = &servers.statuses()[0];
    assert_eq!(status.state, ServerState::Connected, "{:?}", status.error);
    let names: Vec<&str> = status.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert_echoes(&servers, "hello").await;
    servers.shutdown().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let (_guard, url) = everything_over_http().await;
    let servers = start(vec![http("everything", &url)]).await;
    let status = &servers.statuses()[0];
    assert_eq!(status.state, ServerState::Connected, "{:?}", status.error);
    assert_echoes(&servers, "over http").await;
    servers.shutdown().await;
}

/// A subscribed resource's `notifications/resources/updated` reaches Porthole (its servers'
/// `resources_version` moves on), over stdio and over Streamable HTTP.
async fn assert_subscription_updates(servers: &Servers) {
    let uri = "demo://resource/dynamic/text/1";
    assert!(
        servers.subscribe_resource("everything", uri).await,
        "server-everything offers subscriptions"
    );
    let before = servers.resources_version("everything").unwrap();
    // Starts the server's simulated updates: the first goes out at once, for every subscription.
    let toggled = servers
        .call_tool("everything", "toggle-subscriber-updates", None, CallOptions::default())
        .await
        .unwrap();
    assert!(
        text(&toggled).starts_with("Started simulated resource updated"),
        "{}",
        text(&toggled)
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while servers.resources_version("everything") == Some(before) {
        assert!(Instant::now() < deadline, "no resources/updated arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn resource_subscriptions_over_stdio_and_streamable_http() {
    let servers = start(vec![everything_over_stdio()]).await;
    assert_subscription_updates(&servers).await;
    servers.shutdown().await;

    let (_guard, url) = everything_over_http().await;
    let servers = start(vec![http("everything", &url)]).await;
    assert_subscription_updates(&servers).await;
    servers.shutdown().await;
}

async fn ask_with(policy: porthole_mcp::ElicitationPolicy) -> Value {
    let options = ConnectOptions {
        elicitation: policy,
        ..Default::default()
    };
    let servers = Servers::start(vec![test_server("t")], options);
    servers.settled().await;
    let outcome = servers
        .call_tool("t", "ask", None, CallOptions::default())
        .await
        .unwrap();
    servers.shutdown().await;
    outcome.view["structuredContent"].clone()
}

#[tokio::test]
async fn elicitation_follows_the_policy() {
    use porthole_mcp::{ElicitationAnswer, ElicitationPolicy};
    assert_eq!(ask_with(ElicitationPolicy::Decline).await["action"], "decline");

    let defaults = ask_with(ElicitationPolicy::AcceptDefaults).await;
    assert_eq!(defaults["action"], "accept");
    assert_eq!(defaults["content"], json!({"name": "Ada", "age": 36}));

    // The UI gets the question (with its schema) and its answer goes back to the server.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<porthole_mcp::ElicitationRequest>(1);
    let ui = tokio::spawn(async move {
        let question = rx.recv().await.unwrap();
        assert_eq!(question.server, "t");
        assert_eq!(question.message, "Who are you?");
        assert_eq!(
            question.schema.as_ref().unwrap()["properties"]["age"]["type"],
            "integer"
        );
        question
            .respond
            .send(ElicitationAnswer::Accept(json!({"name": "Grace", "age": 85})))
            .unwrap();
    });
    let asked = ask_with(ElicitationPolicy::Ask(tx)).await;
    ui.await.unwrap();
    assert_eq!(asked["action"], "accept");
    assert_eq!(asked["content"], json!({"name": "Grace", "age": 85}));
}

#[tokio::test]
async fn servers_of_each_protocol_version_connect() {
    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let servers = start(vec![test_server("v").with_args(["--protocol", version])]).await;
        let status = &servers.statuses()[0];
        assert_eq!(status.state, ServerState::Connected, "{version}: {:?}", status.error);
        assert_eq!(status.protocol_version.as_deref(), Some(version), "the revision agreed");
        let echo = servers
            .call_tool("v", "echo", args(json!({"text": version})), CallOptions::default())
            .await;
        assert_eq!(text(&echo.unwrap()), version);
        servers.shutdown().await;
    }
}

#[tokio::test]
async fn a_legacy_sse_server_gets_an_error_naming_its_transport() {
    let (_server, url) = test_server_listening(&["--legacy-sse"]);
    let config = http("old", &url).with_timeout(Duration::from_secs(5));
    let servers = start(vec![config]).await;
    let status = &servers.statuses()[0];
    assert_eq!(status.state, ServerState::Failed);
    let error = status.error.as_deref().unwrap();
    assert!(
        error.contains("legacy HTTP+SSE server (the 2024-11-05 transport)"),
        "{error}"
    );
}

#[tokio::test]
async fn server_everything_resources_prompts_progress_and_elicitation() {
    let options = ConnectOptions {
        elicitation: porthole_mcp::ElicitationPolicy::AcceptDefaults,
        ..Default::default()
    };
    let config = everything_over_stdio();
    let servers = Servers::start(vec![config], options);
    servers.settled().await;
    assert_eq!(
        servers.statuses()[0].state,
        ServerState::Connected,
        "{:?}",
        servers.statuses()[0].error
    );

    let resources = servers.list_resources("everything").await.unwrap();
    assert!(!resources.is_empty());
    let read = servers.read_resource("everything", &resources[0].uri).await.unwrap();
    assert!(!read.contents.is_empty());
    assert!(!servers.list_resource_templates("everything").await.unwrap().is_empty());

    let prompts = servers.list_prompts("everything").await.unwrap();
    let simple = prompts.iter().find(|p| {
        p.arguments
            .as_ref()
            .is_none_or(|a| a.iter().all(|a| a.required != Some(true)))
    });
    let prompt = servers
        .get_prompt(
            "everything",
            &simple.expect("a prompt without required arguments").name,
            None,
        )
        .await;
    assert!(!prompt.unwrap().messages.is_empty());

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let long = servers
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 1, "steps": 3})),
            options,
        )
        .await
        .unwrap();
    assert!(!long.model.is_error);
    let mut steps = 0;
    while rx.try_recv().is_ok() {
        steps += 1;
    }
    assert!(steps >= 2, "progress notifications arrived: {steps}");

    let tools: Vec<String> = servers.statuses()[0].tools.iter().map(|t| t.name.clone()).collect();
    let elicit = tools
        .iter()
        .find(|t| t.contains("elicitation"))
        .expect("offered once elicitation is advertised");
    let answered = servers
        .call_tool("everything", elicit, None, CallOptions::default())
        .await
        .unwrap();
    assert!(!answered.model.is_error, "{:?}", answered.model);
    servers.shutdown().await;
}

/// Everything `tracing` writes in this test binary, for the test that checks server logs.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn server_log_notifications_go_to_the_log() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter("mcp_server=debug")
        .with_writer(move || writer.clone())
        .try_init()
        .expect("this test owns the test binary's log");
    let servers = start(vec![test_server("t")]).await;
    let unique = format!("disk almost full {}", std::process::id());
    servers
        .call_tool("t", "log", args(json!({"text": unique})), CallOptions::default())
        .await
        .unwrap();
    let line = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
            if let Some(line) = text.lines().find(|l| l.contains(&unique)) {
                return line.to_string();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server's log notification reached tracing");
    assert!(
        line.contains("WARN") && line.contains("mcp_server") && line.contains("server=\"t\""),
        "{line}"
    );
    servers.shutdown().await;

    // server-everything's simulated logging (one message at once, then every 5 s).
    let servers = start(vec![everything_over_stdio()]).await;
    servers
        .call_tool("everything", "toggle-simulated-logging", None, CallOptions::default())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(12), async {
        loop {
            let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
            if text
                .lines()
                .any(|l| l.contains("server=\"everything\"") && l.contains("-level message"))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("server-everything's log messages reached tracing");
    servers.shutdown().await;
}

#[tokio::test]
async fn a_restarted_http_server_is_reconnected_on_next_use() {
    let (server, url) = test_server_over_http();
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let servers = start(vec![http("web", &url)]).await;
    let first = servers
        .call_tool("web", "echo", args(json!({"text": "one"})), CallOptions::default())
        .await;
    assert_eq!(text(&first.unwrap()), "one");

    // The server goes away (its sessions with it) and comes back on the same port.
    drop(server);
    let err = servers
        .call_tool("web", "echo", args(json!({"text": "gone"})), CallOptions::default())
        .await;
    assert!(err.is_err(), "a call to a dead server fails: {err:?}");
    let (_again, _) = test_server_listening(&["--http", "--port", &port]);

    let back = servers
        .call_tool("web", "echo", args(json!({"text": "back"})), CallOptions::default())
        .await;
    assert_eq!(text(&back.expect("reconnected on next use")), "back");
    assert_eq!(servers.statuses()[0].state, ServerState::Connected);
    servers.shutdown().await;
}

/// A throwaway CA and a `localhost` certificate it signed, made with the openssl command.
fn make_certificates(dir: &std::path::Path) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl is installed");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Porthole test CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=DNS:localhost\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
}

#[test]
fn streamable_http_over_tls_verifies_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    let (_server, url) = test_server_listening(&["--http", "--tls", cert.to_str().unwrap(), key.to_str().unwrap()]);
    assert!(url.starts_with("https://localhost:"), "{url}");
    let config = dir.path().join("tls.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"secure": {"url": url, "timeout": 10}}}).to_string(),
    )
    .unwrap();

    // `porthole tools` in its own process, so the trusted CA can be set for it alone.
    let tools = |trust: Option<&std::path::Path>| {
        let mut cmd = Command::new(porthole_e2e::porthole_binary());
        cmd.arg("--profile")
            .arg(dir.path().join("profile"))
            .args(["tools", "--json", "--mcp-config"])
            .arg(&config);
        cmd.env_remove("PORTHOLE_HOME");
        if let Some(ca) = trust {
            cmd.env("SSL_CERT_FILE", ca);
        }
        cmd.output().unwrap()
    };
    let untrusted = tools(None);
    let stderr = String::from_utf8_lossy(&untrusted.stderr);
    assert!(
        stderr.contains("server secure:"),
        "a certificate from an unknown CA is refused: {stderr}"
    );

    let trusted = tools(Some(&dir.path().join("ca.pem")));
    let listed: Value = serde_json::from_slice(&trusted.stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["server"] == "secure")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo"),
        "{names:?} / {}",
        String::from_utf8_lossy(&trusted.stderr)
    );
}

/// A stdio server that runs `script` in `sh`, with 20 s to answer (so a timeout would show).
fn shell(name: &str, script: &str) -> ServerConfig {
    ServerConfig::stdio(name, "sh")
        .with_args(["-c", script])
        .with_timeout(Duration::from_secs(20))
}

#[tokio::test]
async fn servers_that_exit_crash_or_write_garbage_at_start_fail_at_once_with_the_reason() {
    let started = Instant::now();
    let servers = start(vec![
        ServerConfig::stdio("false", "/bin/false").with_timeout(Duration::from_secs(20)),
        shell("exit3", "echo \"Error: Cannot find module 'foo'\" >&2; exit 3"),
        // Node's own report ends with its version, after the stack and the error's fields.
        ServerConfig::stdio("node-missing", "node")
            .with_args(["/nonexistent/porthole-no-such-server.js"])
            .with_timeout(Duration::from_secs(20)),
        shell("segv", "kill -SEGV $$"),
        test_server("garbage").with_args(["--garbage"]),
        // Closes its stdin, answers `initialize` and lives on: a write to it fails (EPIPE, and
        // no SIGPIPE for Porthole).
        shell(
            "deaf",
            r#"exec 0<&-; echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}'; exec sleep 30"#,
        ),
        test_server("banner").with_args(["--banner"]),
        test_server("good"),
    ])
    .await;
    let took = started.elapsed();
    let errors: Vec<_> = servers
        .statuses()
        .iter()
        .map(|s| (s.name.clone(), s.state, s.error.clone().unwrap_or_default()))
        .collect();
    let error = |name: &str| errors.iter().find(|e| e.0 == name).unwrap().2.clone();
    assert_eq!(error("false"), "exited with status 1");
    assert_eq!(error("exit3"), "exited with status 3: Error: Cannot find module 'foo'");
    assert_eq!(
        error("node-missing"),
        "exited with status 1: Error: Cannot find module '/nonexistent/porthole-no-such-server.js'"
    );
    assert_eq!(error("segv"), "was ended by signal 11 (SIGSEGV, a crash)");
    assert!(
        error("garbage").starts_with("wrote a line that is not JSON: {\"jsonrpc\": \"2.0\", \"id\": this is not json"),
        "{errors:?}"
    );
    assert_eq!(error("deaf"), "stopped reading its stdin but is still running");
    for (name, state, _) in &errors {
        let expected = if name == "good" || name == "banner" {
            ServerState::Connected
        } else {
            ServerState::Failed
        };
        assert_eq!(*state, expected, "{name}: {errors:?}");
    }
    assert!(
        took < Duration::from_secs(5),
        "reasons within seconds, not the 20 s timeout ({took:?})"
    );
    let echo = servers
        .call_tool(
            "good",
            "echo",
            args(json!({"text": "unaffected"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echo), "unaffected");
    servers.shutdown().await;
}

#[tokio::test]
async fn a_server_that_breaks_mid_call_is_reported_at_once_and_the_others_carry_on() {
    let servers = start(vec![test_server("t"), test_server("other")]).await;
    let cases = [
        (
            "abort",
            "the server was ended by signal 6 (SIGABRT, it aborted): abort: aborting mid-call",
        ),
        (
            "garbage",
            "the server wrote a line that is not JSON: {\"jsonrpc\": \"2.0\", \"result\": this is not json",
        ),
        (
            "wrong_id",
            "the server answered with id 987654321, which matches no request Porthole sent it",
        ),
    ];
    for (tool, expected) in cases {
        let started = Instant::now();
        let err = servers
            .call_tool("t", tool, None, CallOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, CallError::Stopped(_)), "{tool}: {err}");
        assert_eq!(err.to_string(), expected, "{tool}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{tool}: reported in {:?}, not after the 20 s timeout",
            started.elapsed()
        );
        let status = &servers.statuses()[0];
        assert_eq!(status.state, ServerState::Failed, "{tool}");
        assert_eq!(
            status.error.as_deref(),
            expected.strip_prefix("the server "),
            "{tool}: the card says why"
        );
        assert_eq!(servers.statuses()[1].state, ServerState::Connected);
        // The next call starts the server again.
        let echo = servers
            .call_tool("t", "echo", args(json!({"text": "back"})), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(text(&echo), "back");
    }
    servers.shutdown().await;
}

#[tokio::test]
async fn an_http_server_that_answers_garbage_or_the_wrong_id_is_reported_at_once() {
    let (_server, url) = test_server_over_http();
    let (_other_server, other_url) = test_server_over_http();
    let servers = start(vec![http("t", &url), http("other", &other_url)]).await;
    let not_json = "answered with something that is not JSON: {\"jsonrpc\": \"2.0\", \"result\": this is not json";
    let wrong_id = "answered with id 987654321, which matches no request Porthole sent it";
    let cases = [
        ("garbage", false, not_json),
        ("garbage", true, not_json),
        ("wrong_id", false, wrong_id),
        ("wrong_id", true, wrong_id),
    ];
    for (tool, stream, expected) in cases {
        let case = format!("{tool} (stream: {stream})");
        let started = Instant::now();
        let err = servers
            .call_tool("t", tool, args(json!({"stream": stream})), CallOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, CallError::Stopped(_)), "{case}: {err}");
        assert!(
            err.to_string().starts_with(&format!("the server {expected}")),
            "{case}: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{case}: reported in {:?}, not after the 20 s timeout",
            started.elapsed()
        );
        let status = &servers.statuses()[0];
        assert_eq!(status.state, ServerState::Failed, "{case}");
        assert!(
            status.error.as_deref().is_some_and(|e| e.starts_with(expected)),
            "{case}: the card says why: {:?}",
            status.error
        );
        assert_eq!(servers.statuses()[1].state, ServerState::Connected, "{case}");
        let echo = servers
            .call_tool(
                "other",
                "echo",
                args(json!({"text": "unaffected"})),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text(&echo), "unaffected", "{case}");
        // The next call connects again, and the server is back.
        let echo = servers
            .call_tool("t", "echo", args(json!({"text": "back"})), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(text(&echo), "back", "{case}");
        assert_eq!(servers.statuses()[0].state, ServerState::Connected, "{case}");
    }
    servers.shutdown().await;
}

#[tokio::test]
async fn a_server_that_exits_while_idle_shows_failed_with_the_reason() {
    let servers = start(vec![test_server("t")]).await;
    let soon = servers
        .call_tool("t", "exit_soon", None, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&soon), "exiting soon");
    let mut statuses = servers.subscribe();
    let failed = tokio::time::timeout(
        Duration::from_secs(5),
        statuses.wait_for(|all| all[0].state == ServerState::Failed),
    )
    .await
    .expect("the exit is noticed without a call")
    .unwrap()[0]
        .error
        .clone();
    assert_eq!(
        failed.as_deref(),
        Some("exited with status 4: exit_soon: exiting while idle")
    );
    servers.shutdown().await;
}

#[tokio::test]
async fn results_of_50_mb_arrive_whole_over_stdio_and_http() {
    let (_http_server, url) = test_server_over_http();
    let servers = start(vec![test_server("stdio"), http("http", &url)]).await;
    // 50 MB over stdio; over HTTP 20 MB is enough to pass rmcp's 16 MiB default (and is quicker).
    for (server, bytes) in [("stdio", 50_000_000u64), ("http", 20_000_000)] {
        let outcome = servers
            .call_tool(server, "big", args(json!({"bytes": bytes})), CallOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        let got = text(&outcome);
        assert_eq!(got.len() as u64, bytes, "{server}");
        assert!(got.bytes().all(|b| b == b'x'), "{server}");
    }
    // And large arguments go the other way.
    let long = "y".repeat(1_000_000);
    let length = servers
        .call_tool("stdio", "length", args(json!({"text": long})), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&length), "1000000");
    servers.shutdown().await;
}

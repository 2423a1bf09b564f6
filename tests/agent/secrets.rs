//! No secret leaves the config: the real `porthole` binary at `PORTHOLE_LOG=trace`, with
//! credentials planted in a base URL's user info and query, an MCP server URL's `?token=` and
//! its `Authorization` header, a failing server's URL and header, a stdio server's environment
//! and the API key, runs `porthole run`, `tools` and `call` against servers that succeed (the test
//! server over HTTP and stdio, the fake LLM) and fail (a closed port, a wrong base URL). Then no
//! file of the profile (logs, server logs, the SQLite file and its journal, as bytes; the config
//! excepted, the user wrote the secrets there) and no output stream holds any of them.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use porthole_e2e::{Spawned, porthole_command, server_listening};
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use serde_json::json;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

const USERINFO_NAME: &str = "userinfo-name-0c4e";
const USERINFO_PASSWORD: &str = "userinfo-pass-5e1f";
const URL_TOKEN: &str = "url-token-3c9d";
const HEADER_SECRET: &str = "header-secret-8b2a";
const FAILING_URL_TOKEN: &str = "failing-url-token-41e0";
const FAILING_URL_KEY: &str = "failing-url-key-7d13";
const FAILING_HEADER_KEY: &str = "failing-header-key-c5a8";
const ENV_SECRET: &str = "env-secret-9f3b";
const API_KEY: &str = "sk-api-key-6d2c";
const BASE_URL_QUERY_KEY: &str = "base-url-query-key-2a7e";

const SECRETS: &[&str] = &[
    USERINFO_NAME,
    USERINFO_PASSWORD,
    URL_TOKEN,
    HEADER_SECRET,
    FAILING_URL_TOKEN,
    FAILING_URL_KEY,
    FAILING_HEADER_KEY,
    ENV_SECRET,
    API_KEY,
    BASE_URL_QUERY_KEY,
];

/// The test server over Streamable HTTP, and the URL it listens on.
fn test_server_over_http() -> (Spawned, String) {
    server_listening(TEST_SERVER, &["--http"])
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs `porthole --profile DIR ARGS` at `PORTHOLE_LOG=trace`, the API key in the environment.
fn porthole(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = porthole_command(profile, args);
    cmd.env("PORTHOLE_LOG", "trace").env("OPENAI_API_KEY", API_KEY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .output()
        .expect("cannot run porthole (is it built? `cargo build -p porthole`)")
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_log_an_error_a_stored_message_or_an_output_stream() {
    let mut script = Script::new(vec![
        Reply::ToolCalls {
            text: Some("Asking both.".into()),
            calls: vec![
                FakeToolCall::new("call_1", "web__echo", r#"{"text":"from the web server"}"#),
                FakeToolCall::new("call_2", "local__echo", r#"{"text":"from the stdio server"}"#),
            ],
        },
        Reply::EchoToolResults,
    ]);
    script.api_key = Some(API_KEY.into());
    let fake = FakeLlm::start(script).await.unwrap();
    let (_web, web_url) = test_server_over_http();
    let closed = closed_port();

    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path();
    let config = profile.join("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "web": {
                "url": format!("{web_url}?token={URL_TOKEN}"),
                "headers": {"Authorization": format!("Bearer {HEADER_SECRET}")},
            },
            "gone": {
                "url": format!("http://127.0.0.1:{closed}/mcp?access_token={FAILING_URL_TOKEN}&X-Api-Key={FAILING_URL_KEY}"),
                "headers": {"x-api-key": FAILING_HEADER_KEY},
            },
            "local": {"command": TEST_SERVER, "env": {"SERVICE_TOKEN": ENV_SECRET}},
        }})
        .to_string(),
    )
    .unwrap();

    let mut outputs: Vec<(String, Output)> = Vec::new();
    let base_url = fake.base_url();
    let prompt = ["--model", "m", "--yes", "--prompt", "Ask both servers."];

    // A base URL with a user name and password (from the environment) is refused, and says why.
    let with_user_info = base_url.replacen("http://", &format!("http://{USERINFO_NAME}:{USERINFO_PASSWORD}@"), 1);
    let out = porthole(
        profile,
        &[&["run"][..], &prompt].concat(),
        &[("PORTHOLE_BASE_URL", &with_user_info)],
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("must not carry a user name or password"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    outputs.push(("run with user info".into(), out));

    // A turn that works: both working servers' tools are called; the third server fails.
    let out = porthole(profile, &[&["run", "--base-url", &base_url][..], &prompt].concat(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("from the web server") && stdout.contains("from the stdio server"),
        "{stdout}"
    );
    outputs.push(("run".into(), out));

    // A base URL with a key in its query, which the provider refuses (404): the error is shown
    // and stored, its URL redacted.
    let with_query_key = format!("{base_url}?api_key={BASE_URL_QUERY_KEY}");
    let out = porthole(
        profile,
        &[&["run", "--base-url", &with_query_key][..], &prompt].concat(),
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/v1?api_key=[redacted]"), "{stderr}");
    outputs.push(("run with a key in the base URL".into(), out));

    // The tools list: the failing server's reason names its endpoint, credentials redacted.
    let out = porthole(profile, &["tools"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(String::from_utf8_lossy(&out.stdout).contains("web__echo"));
    assert!(
        stderr.contains(&format!(
            "127.0.0.1:{closed}/mcp?access_token=[redacted]&X-Api-Key=[redacted]"
        )),
        "{stderr}"
    );
    outputs.push(("tools".into(), out));

    for (server, expect_success) in [("web", true), ("local", true), ("gone", false)] {
        let out = porthole(
            profile,
            &[
                "call",
                "--server",
                server,
                "--tool",
                "echo",
                "--args",
                r#"{"text":"direct"}"#,
            ],
            &[],
        );
        assert_eq!(
            out.status.success(),
            expect_success,
            "call on {server}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push((format!("call on {server}"), out));
    }

    // Every file of the profile but the config, and every output stream.
    let files: Vec<PathBuf> = files_under(profile).into_iter().filter(|f| *f != config).collect();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(profile).unwrap().display().to_string())
        .collect();
    assert!(names.iter().any(|n| n == "porthole.db"), "{names:?}");
    let logs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.starts_with(profile.join("logs")) && !f.starts_with(profile.join("logs/servers")))
        .collect();
    let log_text: String = logs.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(
        log_text.contains("TRACE") && log_text.contains("[redacted]"),
        "the trace log was written, with redactions: {names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("logs/servers/")), "{names:?}");

    let mut leaks = Vec::new();
    for (file, name) in files.iter().zip(&names) {
        let bytes = std::fs::read(file).unwrap();
        for secret in SECRETS {
            if contains(&bytes, secret) {
                leaks.push(format!("{secret} in {name}"));
            }
        }
    }
    for (what, out) in &outputs {
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            for secret in SECRETS {
                if contains(bytes, secret) {
                    leaks.push(format!("{secret} on the {stream} of {what}"));
                }
            }
        }
    }
    assert!(leaks.is_empty(), "secrets leaked: {leaks:#?}");
}

/// A server's card keeps its endpoint useful with the credentials taken out, for a server that
/// connects and one that fails, and the failure's reason holds no credential either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_endpoint_and_error_show_where_it_is_but_not_its_credentials() {
    use porthole_mcp::{ConnectOptions, ServerConfig, ServerState, Servers};

    let (_web, web_url) = test_server_over_http();
    let closed = closed_port();
    let servers = Servers::start(
        vec![
            ServerConfig::http("web", format!("{web_url}?token={URL_TOKEN}"))
                .with_header("Authorization", format!("Bearer {HEADER_SECRET}")),
            ServerConfig::http(
                "gone",
                format!("http://{USERINFO_NAME}:{USERINFO_PASSWORD}@127.0.0.1:{closed}/mcp?sig={FAILING_URL_KEY}"),
            ),
        ],
        ConnectOptions::default(),
    );
    let statuses = servers.settled().await;
    servers.shutdown().await;

    assert_eq!(statuses[0].state, ServerState::Connected, "{:?}", statuses[0].error);
    assert_eq!(statuses[0].endpoint, format!("{web_url}?token=[redacted]"));
    assert_eq!(statuses[1].state, ServerState::Failed);
    assert_eq!(
        statuses[1].endpoint,
        format!("http://[redacted]@127.0.0.1:{closed}/mcp?sig=[redacted]")
    );
    let shown = format!("{statuses:?}");
    for secret in [
        URL_TOKEN,
        HEADER_SECRET,
        USERINFO_NAME,
        USERINFO_PASSWORD,
        FAILING_URL_KEY,
    ] {
        assert!(!shown.contains(secret), "{secret} shown: {shown}");
    }
}

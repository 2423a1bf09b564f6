//! `porthole run` as a user runs it: the real binary, a real profile (SQLite file), Porthole's
//! test server over stdio, and the scripted fake LLM on loopback as the only stand-in.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use porthole_e2e::{porthole_command, server_listening};
use porthole_fake_llm::{FakeLlm, FakeToolCall, RecordedRequest, Reply, Script};
use porthole_store::{MessageStatus, Store};
use serde_json::{Value, json};

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

/// A profile whose only MCP server is the test server.
fn profile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"test": {"command": TEST_SERVER}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

fn command(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = porthole_command(profile, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn run(profile: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = command(profile, args, env);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("cannot run porthole (is it built? `cargo build -p porthole`)");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn posts(fake: &FakeLlm) -> Vec<RecordedRequest> {
    fake.requests().into_iter().filter(|r| r.method == "POST").collect()
}

fn tool_message(request: &RecordedRequest) -> Value {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("a tool message")
}

fn forecast_turn() -> Vec<Reply> {
    vec![
        Reply::ToolCalls {
            text: Some("Checking.".into()),
            calls: vec![FakeToolCall::new("call_1", "forecast", r#"{"city":"Bergen"}"#)],
        },
        Reply::EchoToolResults,
    ]
}

/// The kagent scenario, headless: a UI tool whose definition carries `_meta.ui` only for hosts
/// that advertise MCP Apps. With MCP Apps on (Porthole's default) and off, the model request
/// carries every field of the tool's payload, identically, and the answer is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_run_gives_the_model_every_field_of_a_ui_tools_result() {
    let mut tool_messages = Vec::new();
    for apps in ["on", "off"] {
        let fake = FakeLlm::start(Script::new(forecast_turn())).await.unwrap();
        let dir = profile();
        let url = fake.base_url();
        let out = run(
            dir.path(),
            &[
                "run",
                "--yes",
                "--base-url",
                &url,
                "--model",
                "m",
                "--prompt",
                "Weather in Bergen?",
            ],
            &[("PORTHOLE_MCP_APPS", apps)],
            None,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let answer = stdout(&out);
        assert!(answer.contains("Ice on the roads before 10:00"), "{answer}");
        assert!(answer.contains("snow showers"), "{answer}");

        let requests = posts(&fake);
        assert_eq!(requests.len(), 2);
        let message = tool_message(&requests[1]);
        let payload: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
        for field in ["city", "units", "days", "advisory"] {
            assert!(payload.get(field).is_some(), "{field} reached the model");
        }
        assert_eq!(payload["days"][2]["sky"], "clear");
        tool_messages.push(message);
    }
    assert_eq!(
        tool_messages[0], tool_messages[1],
        "MCP Apps on or off, the model gets the same"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_events_stdin_prompts_and_a_continued_conversation() {
    let fake = FakeLlm::start(Script::new(vec![
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]))
    .await
    .unwrap();
    let dir = profile();
    let url = fake.base_url();
    let out = run(
        dir.path(),
        &[
            "run",
            "--json",
            "--provider",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "claude-test",
        ],
        &[],
        Some("Remember the word tangerine.\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is a JSON event"))
        .collect();
    assert_eq!(events[0]["type"], "turn_started");
    assert_eq!(events[0]["provider"], "anthropic");
    let id = events[0]["conversation_id"].as_str().unwrap().to_string();
    assert!(events.iter().any(|e| e["type"] == "text_delta"));
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["stop_reason"], "end_turn");
    assert_eq!(done["text"], "First answer.");
    assert_eq!(
        posts(&fake)[0].header("x-api-key"),
        None,
        "no key configured, none sent"
    );

    let out = run(
        dir.path(),
        &[
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "claude-test",
            "--conversation",
            &id,
            "--prompt",
            "Which word?",
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Second answer.");
    let second = &posts(&fake)[1];
    let messages = second.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the earlier exchange is sent again: {messages:?}");
    assert_eq!(messages[0]["content"][0]["text"], "Remember the word tangerine.\n");
    assert_eq!(messages[1]["content"][0]["text"], "First answer.");

    // Both turns are in the store.
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let stored = store.messages(&id).unwrap();
    assert_eq!(stored.len(), 4);
    assert!(stored.iter().all(|m| m.status == MessageStatus::Complete));
    assert_eq!(store.search("tangerine", 10).unwrap()[0].conversation_id, id);
}

/// A conversation made by `porthole run` is exported as Markdown (to stdout) and as JSON (to a
/// file), and the JSON comes back with `porthole import` as a new conversation with the same
/// messages; an unknown id or a file that is not an export is refused with the reason.
#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_is_exported_as_markdown_or_json_and_imported_again() {
    let fake = FakeLlm::start(Script::new(vec![Reply::text("Tangerines are orange.")]))
        .await
        .unwrap();
    let dir = profile();
    let url = fake.base_url();
    let out = run(
        dir.path(),
        &[
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
            "--prompt",
            "Colour of tangerines?",
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let first: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    let id = first["conversation_id"].as_str().unwrap().to_string();

    let out = run(dir.path(), &["export", "--conversation", &id], &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.starts_with("# Colour of tangerines?"), "{md}");
    assert!(
        md.contains("## You\n\nColour of tangerines?") && md.contains("## Assistant\n\nTangerines are orange."),
        "{md}"
    );

    let file = dir.path().join("export.json");
    let out = run(
        dir.path(),
        &[
            "export",
            "--conversation",
            &id,
            "--format",
            "json",
            "--out",
            file.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(exported["format"], "porthole.conversation");
    assert_eq!(exported["messages"].as_array().unwrap().len(), 2);

    let other = profile();
    let out = run(other.path(), &["import", file.to_str().unwrap()], &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let new_id = stdout(&out).trim().to_string();
    assert_ne!(new_id, id);
    let store = Store::open_read_only(&other.path().join("porthole.db")).unwrap();
    let texts: Vec<String> = store
        .messages(&new_id)
        .unwrap()
        .iter()
        .map(|m| m.parts[0]["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(texts, ["Colour of tangerines?", "Tangerines are orange."]);

    let out = run(dir.path(), &["export", "--conversation", "0000000000000000"], &[], None);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not found"), "{}", stderr(&out));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let out = run(other.path(), &["import", bad.to_str().unwrap()], &[], None);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not an exported Porthole conversation"),
        "{}",
        stderr(&out)
    );
}

/// Each failure exits non-zero with one line that says what went wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_exit_non_zero_with_a_one_line_reason() {
    let dir = profile();
    let check = |out: Output, expected: &str| {
        assert!(!out.status.success(), "should fail: {expected}");
        let err = stderr(&out);
        let last = err.lines().last().unwrap_or_default().to_string();
        assert!(last.starts_with("porthole: "), "{err}");
        assert!(
            last.contains(expected),
            "expected {expected:?} in the last line of: {err}"
        );
    };

    let fake = FakeLlm::start(Script {
        replies: vec![Reply::text("never")],
        api_key: Some("sk-right".into()),
        models: vec!["known".into(), "other".into()],
        chunk_delay_ms: 0,
    })
    .await
    .unwrap();
    let url = fake.base_url();
    let base = ["run", "--base-url", url.as_str(), "--prompt", "hi"];
    let with =
        |extra: &[&'static str]| -> Vec<String> { base.iter().chain(extra.iter()).map(|s| s.to_string()).collect() };

    let a = with(&["--model", "known"]);
    check(
        run(dir.path(), &strs(&a), &[("OPENAI_API_KEY", "sk-wrong")], None),
        "401",
    );
    let a = with(&["--model", "nope"]);
    check(
        run(dir.path(), &strs(&a), &[("OPENAI_API_KEY", "sk-right")], None),
        "nope",
    );
    let a = with(&[]);
    check(
        run(dir.path(), &strs(&a), &[("OPENAI_API_KEY", "sk-right")], None),
        "pass --model NAME",
    );

    let cut = FakeLlm::start(Script::new(vec![Reply::Cut {
        text: "Half of this reply arrives before the connection drops".into(),
    }]))
    .await
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "run",
            "--json",
            "--base-url",
            &cut.base_url(),
            "--model",
            "m",
            "--prompt",
            "hi",
        ],
        &[],
        None,
    );
    let id = stdout(&out)
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|e| e["conversation_id"].as_str().map(String::from))
        .unwrap();
    check(out, "cut off");
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let reply = store.messages(&id).unwrap().pop().unwrap();
    assert_eq!(reply.status, MessageStatus::Interrupted);
    assert!(reply.parts[0]["text"].as_str().unwrap().starts_with("Half"));
    drop(store);

    // Nothing listening: a clear "could not reach" (after bounded retries).
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/v1");
    check(
        run(
            dir.path(),
            &["run", "--base-url", &url, "--model", "m", "--prompt", "hi"],
            &[],
            None,
        ),
        "could not reach",
    );
    check(
        run(
            dir.path(),
            &["run", "--base-url", &url, "--model", "m"],
            &[],
            Some("  \n"),
        ),
        "empty",
    );
    check(
        run(
            dir.path(),
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "m",
                "--conversation",
                "0000",
                "--prompt",
                "x",
            ],
            &[],
            None,
        ),
        "no conversation",
    );
    check(
        run(
            dir.path(),
            &["run", "--base-url", "ftp://x", "--model", "m", "--prompt", "x"],
            &[],
            None,
        ),
        "http",
    );
    // The hosted API with no key anywhere (and no keyring to look in).
    let out = run(
        dir.path(),
        &["run", "--model", "m", "--prompt", "x"],
        &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
        None,
    );
    assert!(stderr(&out).contains("no OS keyring"), "{}", stderr(&out));
    check(
        out,
        "no API key for openai: set OPENAI_API_KEY or run `porthole key set openai`",
    );
}

/// Killed mid-turn (SIGKILL while the reply streams), the conversation keeps everything that
/// had arrived, marked interrupted, and can be continued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_porthole_mid_reply_loses_at_most_the_tokens_in_flight() {
    let fake = FakeLlm::start(Script::new(vec![Reply::Hang, Reply::text("Carrying on.")]))
        .await
        .unwrap();
    let dir = profile();
    let url = fake.base_url();
    let mut child = command(
        dir.path(),
        &[
            "run",
            "--json",
            "--base-url",
            &url,
            "--model",
            "m",
            "--prompt",
            "Tell me a story",
        ],
        &[],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .stdin(Stdio::null())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut id = None;
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["type"] == "turn_started" {
            id = event["conversation_id"].as_str().map(String::from);
        }
        // Events reach stdout after the store has them.
        if event["type"] == "text_delta" {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let id = id.unwrap();

    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let messages = store.messages(&id).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].parts[0]["text"], "Tell me a story");
    assert_eq!(messages[1].status, MessageStatus::Interrupted);
    assert_eq!(messages[1].parts[0]["text"], "Hang on");
    drop(store);

    let out = run(
        dir.path(),
        &[
            "run",
            "--base-url",
            &url,
            "--model",
            "m",
            "--conversation",
            &id,
            "--prompt",
            "Go on",
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = &posts(&fake)[1].body["messages"];
    assert_eq!(sent[1]["role"], "assistant");
    assert_eq!(
        sent[1]["content"], "Hang on",
        "the partial reply is part of the history"
    );
}

#[test]
fn without_a_keyring_a_key_is_refused_rather_than_written_to_a_file() {
    let dir = profile();
    let out = run(
        dir.path(),
        &["key", "set", "openai"],
        &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
        Some("sk-never-on-disk\n"),
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("no OS keyring"), "{err}");
    assert!(err.contains("set OPENAI_API_KEY instead"), "{err}");
    assert_no_file_contains(dir.path(), "sk-never-on-disk");
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn assert_no_file_contains(dir: &Path, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_no_file_contains(&path, secret);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{} holds the key", path.display());
        }
    }
}

/// Needs a Secret Service (`.ci/test` runs it inside a D-Bus session with an unlocked
/// gnome-keyring): `cargo test -p porthole-e2e --test headless -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Secret Service; run by .ci/test inside a D-Bus session with gnome-keyring"]
async fn a_key_kept_in_the_os_keyring_is_used_and_never_written_to_a_file() {
    let key = format!("sk-keyring-{}", std::process::id());
    let fake = FakeLlm::start(Script {
        replies: vec![Reply::text("Signed in.")],
        api_key: Some(key.clone()),
        models: vec![],
        chunk_delay_ms: 0,
    })
    .await
    .unwrap();
    let dir = profile();
    let out = run(dir.path(), &["key", "set", "openai"], &[], Some(&format!("{key}\n")));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(dir.path(), &["key", "status", "openai"], &[], None);
    assert!(stdout(&out).contains("OS keyring: stored"), "{}", stdout(&out));

    let url = fake.base_url();
    let out = run(
        dir.path(),
        &["run", "--base-url", &url, "--model", "m", "--prompt", "hi"],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Signed in.");
    assert!(stderr(&out).contains("key from the OS keyring"), "{}", stderr(&out));
    let expected = format!("Bearer {key}");
    assert_eq!(posts(&fake)[0].header("authorization"), Some(expected.as_str()));
    assert_no_file_contains(dir.path(), &key);

    let out = run(dir.path(), &["key", "delete", "openai"], &[], None);
    assert!(out.status.success());
    let out = run(dir.path(), &["key", "status", "openai"], &[], None);
    assert!(stdout(&out).contains("OS keyring: none"), "{}", stdout(&out));
}

/// A profile with servers that exit at once (`/bin/false`, status 3 with a message on stderr)
/// next to the test server.
fn profile_with_broken_servers() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "false": {"command": "/bin/false"},
        "exit3": {"command": "sh", "args": ["-c", "echo \"Error: Cannot find module 'foo'\" >&2; exit 3"]},
        "test": {"command": TEST_SERVER}
    }});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

/// Servers that exit at once used to kill Porthole with SIGPIPE (exit 141, nothing printed).
/// Now each gets its one-line reason, within seconds, and the others work.
#[test]
fn servers_that_exit_at_once_are_reported_and_do_not_kill_porthole() {
    let dir = profile_with_broken_servers();
    let started = std::time::Instant::now();
    let out = run(dir.path(), &["tools"], &[], None);
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = stderr(&out);
    assert!(err.contains("porthole: server false: exited with status 1\n"), "{err}");
    assert!(
        err.contains("porthole: server exit3: exited with status 3: Error: Cannot find module 'foo'\n"),
        "{err}"
    );
    assert!(stdout(&out).contains("echo"), "the test server's tools are listed");

    let out = run(dir.path(), &["call", "--server", "exit3", "--tool", "x"], &[], None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "porthole: exit3/x: server \"exit3\" is not connected: exited with status 3: Error: Cannot find module 'foo'"
    );

    // A run with them still answers, and keeps its conversation.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(Script::new(vec![Reply::text("Fine.")])))
        .unwrap();
    let url = fake.base_url();
    let out = run(
        dir.path(),
        &["run", "--base-url", &url, "--model", "m", "--prompt", "Hello?"],
        &[],
        None,
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert_eq!(stdout(&out).trim(), "Fine.");
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversations = store.list_conversations().unwrap();
    assert_eq!(conversations.len(), 1);
    assert_eq!(store.messages(&conversations[0].id).unwrap().len(), 2);
}

/// A remote server that answers a call with a body that is not JSON, or with an id no request
/// has, is reported with the reason at once (not after the timeout), and `porthole call` exits
/// non-zero with it.
#[test]
fn an_http_server_that_breaks_the_protocol_is_reported_at_once_by_the_cli() {
    let (_server, url) = server_listening(TEST_SERVER, &["--http"]);
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"remote": {"url": url, "timeout": 60}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let cases = [
        (
            "garbage",
            "the server answered with something that is not JSON: {\"jsonrpc\": \"2.0\", \"result\": this is not json",
        ),
        (
            "wrong_id",
            "the server answered with id 987654321, which matches no request Porthole sent it",
        ),
    ];
    for (tool, reason) in cases {
        for stream in [false, true] {
            let arguments = json!({"stream": stream}).to_string();
            let started = std::time::Instant::now();
            let out = run(
                dir.path(),
                &["call", "--server", "remote", "--tool", tool, "--args", &arguments],
                &[],
                None,
            );
            let took = started.elapsed();
            assert_eq!(out.status.code(), Some(2), "{tool} {stream}: {}", stderr(&out));
            let last = stderr(&out).lines().last().unwrap_or_default().to_string();
            assert!(
                last.starts_with(&format!("porthole: remote/{tool}: {reason}")),
                "{tool} (stream: {stream}): {last}"
            );
            assert!(
                took < std::time::Duration::from_secs(10),
                "{tool} (stream: {stream}): {took:?}, not the 60 s timeout"
            );
        }
    }
}

/// A run stopped before its turn starts (Ctrl-C while a server is still connecting) leaves no
/// empty conversation behind.
#[cfg(unix)]
#[test]
fn a_run_stopped_before_its_turn_leaves_no_conversation() {
    let dir = tempfile::tempdir().unwrap();
    // A server that never answers, with an argument no other process has.
    let marker = format!("{}.{}", 40 + std::process::id() % 9, std::process::id());
    let config = json!({"mcpServers": {"slow": {"command": "sleep", "args": [marker]}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let child = command(
        dir.path(),
        &[
            "run",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--prompt",
            "Hello?",
        ],
        &[],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Once the server is starting (its `sleep` runs), Porthole waits for it, Ctrl-C heard: a
    // fixed delay was not always enough on a loaded machine (the signal came before Porthole
    // listened for it, and ended it as a signal does).
    let server_runs = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(&marker))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !server_runs() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped"), "{}", stderr(&out));
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    assert!(store.list_conversations().unwrap().is_empty());
    // The server's process group ended with Porthole: Ctrl-C in a terminal no longer reaches it
    // directly, as it runs in a group of its own.
    let still_running = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(&marker));
    assert!(!still_running, "the server (sleep {marker}) is still running");
}

/// `--args @FILE` and `--args -` take arguments larger than a command line may be (128 KiB).
#[test]
fn large_call_arguments_come_from_a_file_or_stdin() {
    let dir = profile();
    let args = json!({"text": "z".repeat(1_000_000)}).to_string();
    let file = dir.path().join("args.json");
    std::fs::write(&file, &args).unwrap();
    let at_file = format!("@{}", file.display());
    for (spec, stdin) in [(at_file.as_str(), None), ("-", Some(args.as_str()))] {
        let out = run(
            dir.path(),
            &["call", "--server", "test", "--tool", "length", "--args", spec],
            &[],
            stdin,
        );
        assert!(out.status.success(), "{spec}: {}", stderr(&out));
        assert!(stdout(&out).contains("\n1000000\n"), "{spec}: {}", stdout(&out));
    }
}

/// Printing into a pipe that is closed (`porthole tools | head`) stops quietly, as other Unix
/// tools do: ended by SIGPIPE, no panic, nothing on stderr.
#[cfg(unix)]
#[test]
fn a_closed_stdout_stops_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = profile();
    let mut child = command(dir.path(), &["tools"], &[])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
    assert_eq!(stderr(&out), "");
}

/// A profile whose one server is server-everything over stdio, as `everything`.
fn profile_with_everything() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let entry = porthole_e2e::server_everything_entry();
    let config = json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"], "timeout": 30000}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

/// `porthole prompt` prints a prompt's messages (with its arguments), and `porthole resource
/// read` a resource (text sent as a blob as text); what cannot be had exits 2 with the reason.
#[test]
fn a_prompt_and_a_resource_are_printed_by_the_cli() {
    let dir = profile_with_everything();
    let args = r#"{"department": "Sales", "name": "Eve"}"#;
    let out = run(
        dir.path(),
        &[
            "prompt",
            "--server",
            "everything",
            "--name",
            "completable-prompt",
            "--args",
            args,
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert_eq!(
        stdout(&out),
        "== user ==\nPlease promote Eve to the head of the Sales team.\n"
    );

    let out = run(
        dir.path(),
        &[
            "prompt",
            "--server",
            "everything",
            "--name",
            "resource-prompt",
            "--args",
            "-",
            "--json",
        ],
        &[],
        Some(r#"{"resourceType": "Text", "resourceId": 4}"#),
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        answer["messages"][1]["content"]["resource"]["uri"],
        "demo://resource/dynamic/text/4"
    );

    let out = run(
        dir.path(),
        &["prompt", "--server", "everything", "--name", "args-prompt"],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "a missing argument: {}", stdout(&out));
    assert!(stderr(&out).contains("everything/args-prompt: "), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("city"),
        "the server names the argument: {}",
        stderr(&out)
    );

    let out = run(
        dir.path(),
        &[
            "resource",
            "read",
            "--server",
            "everything",
            "--uri",
            "demo://resource/dynamic/blob/2",
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(
        stdout(&out).starts_with("Resource 2: This is a base64 blob created at "),
        "{}",
        stdout(&out)
    );
    let out = run(
        dir.path(),
        &[
            "resource",
            "read",
            "--server",
            "everything",
            "--uri",
            "demo://resource/dynamic/text/5",
            "--json",
        ],
        &[],
        None,
    );
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["contents"][0]["mimeType"], "text/plain");
    assert!(
        answer["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Resource 5: ")
    );

    let out = run(
        dir.path(),
        &[
            "resource",
            "read",
            "--server",
            "everything",
            "--uri",
            "demo://resource/dynamic/text/x",
        ],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("everything: demo://resource/dynamic/text/x: "),
        "{}",
        stderr(&out)
    );
}

/// `porthole run --yes` offers sampling to servers and answers it with the run's model (audited);
/// without `--yes` servers are not told it is there, so a tool that needs it is not offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yes_run_answers_a_servers_sampling_request_with_its_model() {
    let fake = FakeLlm::start(Script::new(vec![
        Reply::ToolCalls {
            text: None,
            calls: vec![FakeToolCall::new(
                "s1",
                "trigger-sampling-request",
                r#"{"prompt": "ping"}"#,
            )],
        },
        Reply::text("pong from the model"),
        Reply::text("The server heard back."),
        Reply::text("No sampling here."),
    ]))
    .await
    .unwrap();
    let dir = profile_with_everything();
    let url = fake.base_url();
    let flags = ["--base-url", url.as_str(), "--model", "m"];
    let mut args = vec!["run", "--yes", "--prompt", "Ask the server to sample"];
    args.extend(flags);
    let out = run(dir.path(), &args, &[], None);
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert_eq!(stdout(&out).trim(), "The server heard back.");
    assert!(
        stderr(&out).contains("porthole: everything asks the model (allowed by --yes)"),
        "{}",
        stderr(&out)
    );
    let requests = posts(&fake);
    assert_eq!(requests.len(), 3);
    let sampled = &requests[1].body;
    assert_eq!(
        sampled["messages"][0],
        json!({"role": "system", "content": "You are a helpful test server."})
    );
    assert!(
        sampled["messages"][1]["content"].as_str().unwrap().contains("ping"),
        "{sampled}"
    );
    assert!(
        sampled
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "no tools: {sampled}"
    );
    let result = tool_message(&requests[2]);
    assert!(
        result["content"].as_str().unwrap().contains("pong from the model"),
        "{result}"
    );
    let audit = run(dir.path(), &["audit", "--json"], &[], None);
    let sampling: Vec<Value> = stdout(&audit)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "sampling")
        .collect();
    assert_eq!(sampling.len(), 1, "{}", stdout(&audit));
    assert_eq!(sampling[0]["server"], "everything");
    assert_eq!(sampling[0]["detail"]["outcome"], "ok");

    // Without --yes the tool is not there to call.
    let mut args = vec!["run", "--prompt", "Anything"];
    args.extend(flags);
    let out = run(dir.path(), &args, &[], None);
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let offered = posts(&fake)[3].body["tools"].to_string();
    assert!(offered.contains("\"echo\""), "{offered}");
    assert!(!offered.contains("trigger-sampling-request"), "{offered}");
}

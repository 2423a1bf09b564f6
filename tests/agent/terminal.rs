//! What a person at a terminal sees from the command-line tools, with the real binary, the
//! test server over stdio and the fake LLM: control characters from servers and models are
//! escaped on a terminal (a pseudo-terminal from `script`, as a person's would be) and passed
//! as they are to a pipe; colours only on a terminal; progress in order with the last one kept;
//! exit codes (usage errors 2); a failed turn's reason said once; no keyring warning for a
//! provider that needs no key.

use std::path::Path;
use std::process::Command;

use porthole_e2e::porthole_command;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use serde_json::json;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

/// A profile whose only MCP server is the test server.
fn profile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"test": {"command": TEST_SERVER}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

fn porthole(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = porthole_command(profile, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs the command with stdin, stdout and stderr on a pseudo-terminal (util-linux `script`),
/// returning what the terminal received (stdout and stderr together) and the exit code.
fn on_a_terminal(cmd: &Command) -> (String, Option<i32>) {
    // `env -u NAME…` first, then `NAME=VALUE…`, then the command.
    let (mut unset, mut set) = (String::new(), String::new());
    for (k, v) in cmd.get_envs() {
        let k = k.to_str().unwrap();
        match v {
            Some(v) => set.push_str(&format!("{k}={} ", quoted(v.to_str().unwrap()))),
            None => unset.push_str(&format!("-u {k} ")),
        }
    }
    let line = format!("{unset}{set}");
    let mut shell = format!("env {line}{}", quoted(cmd.get_program().to_str().unwrap()));
    for arg in cmd.get_args() {
        shell.push(' ');
        shell.push_str(&quoted(arg.to_str().unwrap()));
    }
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &shell, "/dev/null"])
        .env_remove("PORTHOLE_HOME")
        .output()
        .expect("`script` (util-linux) runs the command on a pseudo-terminal");
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

const HOSTILE: &str = "\u{1b}]0;pwned\u{7}title \u{1b}[2Jcleared \u{9b}31mred";

#[test]
fn a_tool_result_s_escape_sequences_are_shown_on_a_terminal_and_passed_to_a_pipe() {
    let dir = profile();
    let args = json!({"text": HOSTILE}).to_string();
    let cmd = porthole(
        dir.path(),
        &["call", "--server", "test", "--tool", "echo", "--args", &args],
        &[],
    );

    let (screen, code) = on_a_terminal(&cmd);
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains(r"\u001b]0;pwned\u0007title \u001b[2Jcleared \u009b31mred"),
        "{screen}"
    );
    assert!(!screen.contains('\u{1b}') && !screen.contains('\u{9b}'), "{screen:?}");

    let mut piped = porthole(
        dir.path(),
        &["call", "--server", "test", "--tool", "echo", "--args", &args],
        &[],
    );
    let out = piped.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("\n{HOSTILE}\n")),
        "a pipe gets the text as it is: {stdout:?}"
    );
}

#[test]
fn colours_only_on_a_terminal() {
    let dir = profile();
    let cmd = porthole(dir.path(), &["tools"], &[("PORTHOLE_LOG", "info")]);
    let (screen, _) = on_a_terminal(&cmd);
    assert!(
        screen.contains("\u{1b}[32m INFO"),
        "a terminal gets colours: {screen:?}"
    );

    let out = porthole(dir.path(), &["tools"], &[("PORTHOLE_LOG", "info")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(" INFO "), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "a pipe gets no colour codes: {stderr:?}");
}

#[test]
fn progress_is_printed_in_order_and_the_last_one_is_kept() {
    let dir = profile();
    for _ in 0..3 {
        let out = porthole(
            dir.path(),
            &[
                "call",
                "--server",
                "test",
                "--tool",
                "burst",
                "--args",
                r#"{"count": 400}"#,
            ],
            &[],
        )
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let seen: Vec<&str> = stderr.lines().filter(|l| l.starts_with("progress ")).collect();
        let expected: Vec<String> = (1..=400).map(|n| format!("progress {n}/400: step {n}")).collect();
        assert_eq!(seen, expected, "every notification, in the server's order");
    }
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let dir = profile();
    let check = |args: &[&str], expected: &str| {
        let out = porthole(dir.path(), args, &[]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    };
    check(
        &["run", "--max-steps", "0", "--prompt", "hi"],
        "invalid value '0' for '--max-steps <N>': must be at least 1",
    );
    check(&["run", "--prompt", " "], "the prompt is empty");
    check(&["run", "--prompt", "hi", "--base-url", "ftp://h/v1"], "--base-url: ");
    check(&["run", "--no-such-flag"], "unexpected argument '--no-such-flag'");
    // `call`: 2 is any way of getting no result (1 is the tool's own isError).
    check(
        &["call", "--server", "test", "--tool", "echo", "--args", "[1]"],
        "--args must be a JSON object",
    );
    check(
        &["call", "--server", "ghost", "--tool", "echo"],
        "no server named \"ghost\"",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_says_why_once_and_a_keyless_provider_gets_no_keyring_warning() {
    let dir = profile();
    let fake = FakeLlm::start(Script {
        replies: vec![Reply::text("Hello from a local model.")],
        api_key: None,
        models: vec!["local".into()],
        chunk_delay_ms: 0,
    })
    .await
    .unwrap();
    let url = fake.base_url();
    // No key in the environment: the keyring is looked in; whether it opens or not, a local
    // server that needs no key runs without a warning.
    let ok = porthole(dir.path(), &["run", "--base-url", &url, "--prompt", "hi"], &[])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "Hello from a local model.\n");
    assert!(!stderr.contains("warning"), "{stderr}");

    let failed = porthole(
        dir.path(),
        &["run", "--base-url", &url, "--model", "nope", "--prompt", "hi"],
        &[],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    let reasons: Vec<&str> = stderr.lines().filter(|l| l.contains("\"nope\"")).collect();
    assert_eq!(reasons.len(), 1, "the reason once, as the last line: {stderr}");
    assert_eq!(Some(reasons[0]), stderr.lines().last());
}

//! The demo server as Porthole runs it: its own program, MCP over its stdin and stdout (one
//! JSON-RPC message per line), written to and read from here as raw lines.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const VIEW: &str = "ui://porthole-demo/directory.html";

#[test]
fn answers_a_line_per_message_over_stdio_and_skips_a_line_that_is_not_one() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_porthole-demo-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the demo server starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (lines, from_server) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    // The answer to request `id`, skipping the server's notifications (each a line of its own).
    let answer = |id: u64| -> Value {
        loop {
            let line = from_server
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no answer to request {id} within 30 s"));
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not one JSON line ({e}): {line:.200}"));
            if message["id"] == id {
                return message;
            }
        }
    };
    let send = |stdin: &mut std::process::ChildStdin, message: Value| writeln!(stdin, "{message}").unwrap();

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "stdio-test", "version": "1"},
        }}),
    );
    let initialized = answer(1);
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "porthole-demo",
        "{initialized}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );

    // A line that is not a message is skipped; the session goes on.
    writeln!(stdin, "this is not JSON").unwrap();

    // Two large answers in a row (a view is a 600 KB line), each whole and on its own line.
    for id in [2, 3] {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": VIEW}}),
        );
        let read = answer(id);
        let html = read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no view in {read:.300}"));
        assert!(html.len() > 500_000, "the whole view: {} bytes", html.len());
        assert!(html.trim_end().ends_with("</html>"), "the view's end is there");
    }
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    let tools = answer(4);
    assert!(
        tools["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{tools:.300}"
    );

    // The client closes stdin: the server ends, and well.
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

//! Several Porthole processes on one profile, as a person with a few terminals (or the window
//! and a terminal) runs them: the real `porthole` binary, one SQLite file, Porthole's test
//! server over stdio (its `slow` tool keeps a call running) and the scripted fake LLM, which
//! records every request. Processes are killed with SIGKILL mid-turn to check what the next
//! turn tells the model.

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use porthole_e2e::porthole_command;
use porthole_fake_llm::{FakeLlm, FakeToolCall, RecordedRequest, Reply, Script};
use porthole_store::{MessageRole, MessageStatus, Store, ToolCallStatus};
use serde_json::{Value, json};

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");

/// A profile whose only MCP server is the test server (no database yet).
fn profile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"test": {"command": TEST_SERVER}}});
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

fn porthole(profile: &Path, args: &[&str]) -> Command {
    let mut cmd = porthole_command(profile, args);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// `porthole run --yes --json` with `extra` arguments, against the fake LLM.
fn run_args<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--yes", "--json", "--base-url", url, "--model", "m"];
    args.extend_from_slice(extra);
    args
}

fn output(profile: &Path, args: &[&str]) -> Output {
    porthole(profile, args)
        .output()
        .expect("cannot run porthole (is it built? `cargo build -p porthole`)")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A `porthole run --json` in the background, read event by event.
struct Running {
    child: Child,
    events: Lines<BufReader<ChildStdout>>,
    conversation_id: Option<String>,
}

impl Running {
    fn start(profile: &Path, args: &[&str]) -> Running {
        let mut child = porthole(profile, args).stderr(Stdio::null()).spawn().unwrap();
        let events = BufReader::new(child.stdout.take().unwrap()).lines();
        Running {
            child,
            events,
            conversation_id: None,
        }
    }

    /// Reads events until one matches (each reaches stdout after the store has it).
    fn until(&mut self, what: &str, mut matches: impl FnMut(&Value) -> bool) -> Value {
        for line in self.events.by_ref() {
            let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if event["type"] == "turn_started" {
                self.conversation_id = event["conversation_id"].as_str().map(String::from);
            }
            if matches(&event) {
                return event;
            }
        }
        panic!("porthole run ended before {what}");
    }

    fn id(&self) -> String {
        self.conversation_id.clone().expect("turn_started was read")
    }
}

fn posts(fake: &FakeLlm) -> Vec<RecordedRequest> {
    fake.requests().into_iter().filter(|r| r.method == "POST").collect()
}

/// Three `porthole run` started together on a profile with no database yet, a few times over:
/// every one succeeds (none fails with "database is locked"), each in its own conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_started_together_on_a_fresh_profile_all_succeed() {
    let rounds = 4;
    let replies = (0..rounds * 3).map(|i| Reply::text(format!("answer {i}"))).collect();
    let fake = FakeLlm::start(Script::new(replies)).await.unwrap();
    let url = fake.base_url();
    for _ in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), r#"{"mcpServers": {}}"#).unwrap();
        let children: Vec<Child> = (0..3)
            .map(|i| {
                let prompt = format!("question {i}");
                porthole(dir.path(), &run_args(&url, &["--prompt", &prompt]))
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let store = Store::open_read_only(&dir.path().join("porthole.db")).unwrap();
        let conversations = store.list_conversations().unwrap();
        assert_eq!(conversations.len(), 3);
        for c in conversations {
            let statuses: Vec<_> = store.messages(&c.id).unwrap().iter().map(|m| m.status).collect();
            assert_eq!(statuses, [MessageStatus::Complete; 2], "{}", c.title);
        }
    }
}

/// While a turn runs a tool call: a second `porthole run` on that conversation is refused with
/// the reason (naming the first one's pid) and writes nothing; `porthole audit` leaves the live
/// call `running`. The first turn then ends normally, its rows in order, and the conversation
/// takes the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_conversation_refuses_a_second_writer_and_readers_change_nothing() {
    let fake = FakeLlm::start(Script::new(vec![
        Reply::tool_call("call_slow", "slow", r#"{"seconds": 1.5}"#),
        Reply::text("Done waiting."),
        Reply::text("Next turn."),
    ]))
    .await
    .unwrap();
    let url = fake.base_url();
    let dir = profile();
    let db = dir.path().join("porthole.db");

    let mut first = Running::start(dir.path(), &run_args(&url, &["--prompt", "Wait a bit"]));
    first.until("the call runs", |e| e["type"] == "tool_call_running");
    let id = first.id();

    let second = output(
        dir.path(),
        &run_args(&url, &["--conversation", &id, "--prompt", "Me too"]),
    );
    assert!(!second.status.success(), "the second writer is refused");
    let reason = stderr(&second);
    let expected = format!(
        "porthole: conversation {id} is busy in another Porthole (pid {})",
        first.child.id()
    );
    assert!(
        reason.lines().last().unwrap_or_default().starts_with(&expected),
        "{reason}"
    );

    let audit = output(dir.path(), &["audit"]);
    assert!(audit.status.success(), "{}", stderr(&audit));
    let store = Store::open_read_only(&db).unwrap();
    let calls = store.tool_calls(&id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].status,
        ToolCallStatus::Running,
        "neither the refused run nor `porthole audit` touched the live call"
    );
    drop(store);
    // Opening the store as a writer (as the window does) leaves it alone too.
    let store = Store::open(&db).unwrap();
    assert_eq!(store.tool_calls(&id).unwrap()[0].status, ToolCallStatus::Running);

    let done = first.until("the turn ends", |e| e["type"] == "done");
    assert_eq!(done["stop_reason"], "end_turn");
    assert!(first.child.wait().unwrap().success());

    let roles: Vec<_> = store
        .messages(&id)
        .unwrap()
        .iter()
        .map(|m| (m.role, m.status))
        .collect();
    assert_eq!(
        roles,
        [
            (MessageRole::User, MessageStatus::Complete),
            (MessageRole::Assistant, MessageStatus::Complete),
            (MessageRole::Tool, MessageStatus::Complete),
            (MessageRole::Assistant, MessageStatus::Complete),
        ],
        "only the first run wrote, in order"
    );
    assert_eq!(store.tool_calls(&id).unwrap()[0].status, ToolCallStatus::Ok);
    assert_eq!(posts(&fake).len(), 2, "the refused run asked the model nothing");

    let third = output(
        dir.path(),
        &run_args(&url, &["--conversation", &id, "--prompt", "And now?"]),
    );
    assert!(third.status.success(), "free again: {}", stderr(&third));
}

/// SIGKILL while two tool calls run in parallel, after one of them finished: the next turn
/// sends the model the finished call's real result, and says "interrupted" only for the call
/// that never finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kill_mid_step_the_model_gets_each_finished_calls_real_result() {
    let fake = FakeLlm::start(Script::new(vec![
        Reply::ToolCalls {
            text: Some("Both at once.".into()),
            calls: vec![
                FakeToolCall::new("call_fast", "echo", r#"{"text": "the fast result"}"#),
                FakeToolCall::new("call_slow", "slow", r#"{"seconds": 30}"#),
            ],
        },
        Reply::text("Carrying on."),
    ]))
    .await
    .unwrap();
    let url = fake.base_url();
    let dir = profile();

    let mut killed = Running::start(dir.path(), &run_args(&url, &["--prompt", "Do both"]));
    // Both calls run in parallel, so their events may come in either order: the kill waits for
    // the slow call's row (written before its `tool_call_started` line is printed) and the fast
    // call's result.
    let (mut slow_started, mut fast_finished) = (false, false);
    killed.until("the slow call starts and the fast one finishes", |e| {
        slow_started |= e["type"] == "tool_call_started" && e["call_id"] == "call_slow";
        fast_finished |= e["type"] == "tool_call_finished" && e["call_id"] == "call_fast";
        slow_started && fast_finished
    });
    let id = killed.id();
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();

    let next = output(
        dir.path(),
        &run_args(&url, &["--conversation", &id, "--prompt", "What came back?"]),
    );
    assert!(next.status.success(), "{}", stderr(&next));

    let requests = posts(&fake);
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result_of = |call: &str| -> String {
        let message = messages
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
            .unwrap_or_else(|| panic!("no result for {call} in {messages:?}"));
        message["content"].as_str().unwrap().to_string()
    };
    assert_eq!(result_of("call_fast"), "the fast result");
    assert!(
        result_of("call_slow").contains("interrupted"),
        "{}",
        result_of("call_slow")
    );
    assert!(!result_of("call_fast").contains("interrupted"));

    let store = Store::open_read_only(&dir.path().join("porthole.db")).unwrap();
    let statuses: Vec<_> = store
        .tool_calls(&id)
        .unwrap()
        .iter()
        .map(|c| (c.call_id.clone(), c.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("call_fast".to_string(), ToolCallStatus::Ok),
            ("call_slow".to_string(), ToolCallStatus::Interrupted),
        ]
    );
}

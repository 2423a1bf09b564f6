//! Soak benchmark: `cargo bench -p porthole-e2e --bench soak` (part of `make bench`, not of CI).
//!
//! 1,000 turns with tool calls in one profile, in this process: the real agent loop
//! (`Agent::run_turn`), the real store file (each turn's history read back with `load_history`
//! and the turn written by the `Recorder`, as `porthole run` does), and Porthole's test server
//! over stdio (one connection for the whole run). The model is scripted in-process: each turn it
//! asks for two `echo` calls at once, then for one more, then answers with text. Turns go to
//! conversations of `TURNS_PER_CONVERSATION` turns each, so the history a turn reads stays the
//! size a real conversation's is.
//!
//! It prints this process's RSS (`VmRSS` from /proc/self/status), its open file descriptors
//! (/proc/self/fd) and the database's size (the file, its WAL and shared-memory files) after a
//! warm-up and at the end, and judges that nothing grows beyond the data: the same descriptors
//! open, RSS within `RSS_SLACK_MIB` of the warmed-up figure, and the database growing by about
//! the same number of bytes per turn in the second half as in the first. It exits non-zero if not.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::record::{Recorder, load_history};
use porthole_agent::{
    Agent, AllowAll, Message, ModelEvent, ModelReply, ModelRequest, Part, Provider, ProviderError, Role, StopReason,
    Usage,
};
use porthole_mcp::{ConnectOptions, ServerConfig, ServerState, Servers};
use porthole_store::Store;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");
/// Turns measured, after the warm-up.
const TURNS: usize = 1_000;
/// Turns before the first reading (the runtime's threads, SQLite's cache, the allocator's arenas).
const WARM_UP: usize = 50;
const TURNS_PER_CONVERSATION: usize = 10;
/// How much RSS may move between the warmed-up reading and the end.
const RSS_SLACK_MIB: f64 = 16.0;
/// How much the database's growth per turn may differ between the two halves of the run.
const DB_GROWTH_RATIO: f64 = 1.5;

/// A model that answers at once, in process: two `echo` calls in parallel, then one, then text.
struct ScriptedModel {
    tool: String,
}

impl Provider for ScriptedModel {
    fn kind(&self) -> &'static str {
        "scripted"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: mpsc::UnboundedSender<ModelEvent>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        async move {
            // Tool results since the turn's user message.
            let turn_start = request.messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
            let done = request.messages[turn_start..]
                .iter()
                .filter(|m| m.role == Role::Tool)
                .count();
            let usage = Usage {
                input_tokens: 100,
                output_tokens: 20,
                cache_read_tokens: 0,
            };
            let calls = match done {
                0 => 2,
                1 => 1,
                _ => 0,
            };
            if calls == 0 {
                let text = format!("Done after {} tool steps; the echoes said what was asked.", done);
                let _ = events.send(ModelEvent::TextDelta { text: text.clone() });
                return Ok(ModelReply {
                    parts: vec![Part::Text { text }],
                    stop_reason: Some("end_turn".into()),
                    usage,
                });
            }
            let mut parts = Vec::new();
            for index in 0..calls {
                let id = format!("call_{}_{done}_{index}", request.messages.len());
                let arguments = json!({"text": format!("step {done} call {index}: some text to echo back")});
                let _ = events.send(ModelEvent::ToolCallStarted {
                    index,
                    id: id.clone(),
                    name: self.tool.clone(),
                });
                let _ = events.send(ModelEvent::ToolCallArgumentsDelta {
                    index,
                    fragment: arguments.to_string(),
                });
                parts.push(Part::ToolUse {
                    id,
                    name: self.tool.clone(),
                    arguments,
                });
            }
            Ok(ModelReply {
                parts,
                stop_reason: Some("tool_use".into()),
                usage,
            })
        }
        .boxed()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        async { Ok(vec![]) }.boxed()
    }
}

/// One reading of this process and the profile.
#[derive(Debug, Clone, Copy)]
struct Reading {
    rss_kib: u64,
    fds: usize,
    db_bytes: u64,
}

fn read(db: &Path) -> Reading {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().count();
    let db_bytes = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
        .map(|m| m.len())
        .sum();
    Reading { rss_kib, fds, db_bytes }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Runs turn `n` (0-based over the whole run) in its conversation, as `porthole run` does.
async fn turn(agent: &Agent, store: &Store, conversations: &mut Vec<String>, n: usize) {
    if n.is_multiple_of(TURNS_PER_CONVERSATION) {
        conversations.push(store.create_conversation(&format!("soak {n}")).unwrap().id);
    }
    let conversation = conversations.last().unwrap().clone();
    let history = load_history(store, &conversation).unwrap();
    assert_eq!(
        history.is_empty(),
        n.is_multiple_of(TURNS_PER_CONVERSATION),
        "turn {n}: history"
    );
    let recorder = Recorder::new(store.clone(), conversation.clone());
    let result = agent
        .run_turn(
            Some(conversation),
            history,
            Message::user(format!("turn {n}: echo a few things")),
            &recorder,
            CancellationToken::new(),
        )
        .await;
    assert_eq!(result.stop_reason, StopReason::EndTurn, "turn {n}: {:?}", result.error);
}

#[tokio::main]
async fn main() {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("cores: {cores}; test server: {TEST_SERVER}");
    let profile = tempfile::tempdir().unwrap();
    let db = profile.path().join("porthole.db");

    let servers = Servers::start(
        vec![ServerConfig::stdio("test", TEST_SERVER).with_timeout(Duration::from_secs(30))],
        ConnectOptions::default(),
    );
    let statuses = servers.settled().await;
    assert_eq!(statuses[0].state, ServerState::Connected, "{:?}", statuses[0].error);
    let tool = statuses[0]
        .tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("the test server offers echo")
        .model_name
        .clone();
    let mut agent = Agent::new(Arc::new(ScriptedModel { tool }), "scripted", servers.clone());
    agent.approver = Arc::new(AllowAll);

    let store = Store::open(&db).unwrap();
    let mut conversations = Vec::new();
    let at_open = read(&db);
    for n in 0..WARM_UP {
        turn(&agent, &store, &mut conversations, n).await;
    }
    let start = read(&db);
    let started = Instant::now();
    let mut middle = start;
    for n in WARM_UP..WARM_UP + TURNS {
        turn(&agent, &store, &mut conversations, n).await;
        if n + 1 == WARM_UP + TURNS / 2 {
            middle = read(&db);
        }
    }
    let elapsed = started.elapsed();
    let end = read(&db);

    println!(
        "{TURNS} turns (after {WARM_UP} to warm up), each: 2 parallel echo calls, 1 more, a text answer; \
         {} conversations of {TURNS_PER_CONVERSATION} turns; {:.1} s, {:.1} ms per turn",
        conversations.len(),
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / TURNS as f64
    );
    println!(
        "  {:<28} {:>12} {:>12} {:>12} {:>12}",
        "", "store opened", "warmed up", "half-way", "end"
    );
    println!(
        "  {:<28} {:>12.1} {:>12.1} {:>12.1} {:>12.1}",
        "RSS, MiB",
        mib(at_open.rss_kib),
        mib(start.rss_kib),
        mib(middle.rss_kib),
        mib(end.rss_kib)
    );
    println!(
        "  {:<28} {:>12} {:>12} {:>12} {:>12}",
        "open file descriptors", at_open.fds, start.fds, middle.fds, end.fds
    );
    println!(
        "  {:<28} {:>12.1} {:>12.1} {:>12.1} {:>12.1}",
        "database (+WAL, shm), KiB",
        at_open.db_bytes as f64 / 1024.0,
        start.db_bytes as f64 / 1024.0,
        middle.db_bytes as f64 / 1024.0,
        end.db_bytes as f64 / 1024.0
    );
    let half = (TURNS / 2) as f64;
    let first = middle.db_bytes.saturating_sub(start.db_bytes) as f64 / half;
    let second = end.db_bytes.saturating_sub(middle.db_bytes) as f64 / half;
    let main_file = |r: &str| std::fs::metadata(r).map_or(0, |m| m.len());
    println!(
        "  database growth per turn: first half {first:.0} B, second half {second:.0} B \
         (main file at the end {:.1} KiB, WAL {:.1} KiB)",
        main_file(&db.display().to_string()) as f64 / 1024.0,
        main_file(&format!("{}-wal", db.display())) as f64 / 1024.0
    );

    let rss_growth = mib(end.rss_kib) - mib(start.rss_kib);
    let mut verdicts = vec![
        (
            end.fds == start.fds,
            format!(
                "open file descriptors: {} after warm-up, {} at the end",
                start.fds, end.fds
            ),
        ),
        (
            rss_growth <= RSS_SLACK_MIB,
            format!("RSS grew {rss_growth:.1} MiB over {TURNS} turns (at most {RSS_SLACK_MIB} MiB)"),
        ),
    ];
    // The WAL grows to its ceiling (about 4 MiB) during the warm-up and is checkpointed into the
    // main file from then on, so after it only the data makes the files grow.
    let (low, high) = (first.min(second), first.max(second));
    verdicts.push((
        high <= low.max(1.0) * DB_GROWTH_RATIO,
        format!("database growth per turn: {first:.0} B then {second:.0} B (within {DB_GROWTH_RATIO}×)"),
    ));
    let mut ok = true;
    for (pass, what) in &verdicts {
        println!("  {} {what}", if *pass { "ok  " } else { "FAIL" });
        ok &= pass;
    }
    servers.shutdown().await;
    if !ok {
        std::process::exit(1);
    }
}
